from pathlib import Path

import pytest

from agent_memory.errors import InvalidInputError, NotFoundError
from agent_memory.store.file import FileStore
from agent_memory.store.keys import original_key


def test_put_get_list_delete(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.put_json("memories/u1/a.json", {"x": "花生"})
    store.put_json("memories/u1/b.json", {"x": 2})
    store.put_json("memories/u10/c.json", {"x": 3})
    assert store.get_json("memories/u1/a.json") == {"x": "花生"}
    assert list(store.list_keys("memories/u1/")) == ["memories/u1/a.json", "memories/u1/b.json"]
    assert store.get_many(["memories/u1/a.json", "memories/u1/zz.json"])["memories/u1/zz.json"] is None
    assert store.delete_all_versions("memories/u1/") == 2
    assert list(store.list_keys("memories/u1/")) == []
    assert list(store.list_keys("memories/")) == ["memories/u10/c.json"]
    with pytest.raises(NotFoundError):
        store.get_json("memories/u1/a.json")


@pytest.mark.parametrize("key", ["../escape.json", "/etc/passwd", "memories/../../x"])
def test_keys_cannot_escape_the_root(tmp_path: Path, key: str) -> None:
    with pytest.raises(InvalidInputError):
        FileStore(tmp_path / "root").put_json(key, {})


@pytest.mark.parametrize("user", ["../x", "a/b", "%2e%2e", ".."])
def test_original_keys_are_validated(user: str) -> None:
    with pytest.raises(InvalidInputError):
        original_key("memories/", user, "0" * 32)
    with pytest.raises(InvalidInputError):
        original_key("memories/", "u1", "../" + "0" * 29)
