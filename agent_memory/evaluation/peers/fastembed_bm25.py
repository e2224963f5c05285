"""An offline cache of fastembed's ``Qdrant/bm25``, which mem0's Qdrant store needs for its BM25.

mem0 (2.2.x) scores keywords with ``fastembed.SparseTextEmbedding("Qdrant/bm25")``, which fetches
that "model" from the Hugging Face hub on first use. The repository holds no weights: an empty
``config.json`` and one stop-word list per language (BM25 itself is tokenise + Snowball stem +
term frequencies; the IDF is Qdrant's). The hub is unreachable here, and mem0 swallows the failure
and silently searches dense only — a peer column would then measure the wrong thing. So we lay the
same files out in the hub's cache format, from the English stop-word list this package ships
(``data/english_stopwords.txt``: NLTK's classic 179-word English list, which is what that repository
carries for English; the other languages' lists are left empty since mem0 asks for English).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = "Qdrant/bm25"
STOPWORDS = Path(__file__).parent / "data" / "english_stopwords.txt"


def build_cache(cache_dir: Path) -> Path:
    """Write the hub-cache layout of ``Qdrant/bm25`` under ``cache_dir`` (idempotent); point
    fastembed at it with ``FASTEMBED_CACHE_PATH`` (and ``HF_HUB_OFFLINE=1`` so it never tries the
    hub). Returns the snapshot folder."""
    from fastembed.sparse.bm25 import supported_bm25_models

    description = next(m for m in supported_bm25_models if m.model == REPO)
    english = STOPWORDS.read_bytes()
    revision = hashlib.sha1(english).hexdigest()  # the cache wants a commit hash: ours names the list
    repo_dir = cache_dir / f"models--{REPO.replace('/', '--')}"
    snapshot = repo_dir / "snapshots" / revision
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo_dir / "refs").mkdir(exist_ok=True)
    (repo_dir / "refs" / "main").write_text(revision)
    for name in [description.model_file, *description.additional_files]:
        content = b"{}" if name == "config.json" else english if name == "english.txt" else b""
        (snapshot / name).write_bytes(content)
    return snapshot


@contextmanager
def _env(**values: str) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def load_bm25_offline(store: Any, cache_dir: Path) -> None:
    """Make mem0's Qdrant ``store`` load its BM25 encoder now, from the cache built under
    ``cache_dir``. mem0 loads it lazily on the first insert and, when that fails, searches dense
    only without a word, after fastembed has retried the hub for ~40 s; a failure here raises."""
    cache = build_cache(cache_dir)
    with _env(FASTEMBED_CACHE_PATH=str(cache.parents[2]), HF_HUB_OFFLINE="1"):
        if store._get_bm25_encoder() is None:
            raise RuntimeError("mem0's BM25 (fastembed Qdrant/bm25) did not load from the offline cache")
