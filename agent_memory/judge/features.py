"""Features of the judgement models: the embedding the service computes anyway, hashed n-grams,
and a handful of cheap signals. Pure functions of text and vectors, so training and serving
compute exactly the same thing.

Why hashed n-grams next to the embedding: a sentence embedding says what a turn is about, not
how it is said; "I think your answer is wrong" and "I think I'm allergic to latex" embed close
together (both first-person, both "think"), while the words that separate noise from memory
("your answer", "allergic") are lexical. Stop words are kept on purpose: "I", "my", "you",
"我", "你" carry much of the signal. Hashing (no vocabulary file) keeps the weights one array.
"""

from __future__ import annotations

import re
import zlib
from functools import lru_cache
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from agent_memory.pipeline.conflicts import same_statement
from agent_memory.pipeline.extract import TOPICS

Array = npt.NDArray[np.float32]
HASH_DIM = 4096
PAIR_HASH_DIM = 2048

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+|[?？!！]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_DIGITS = re.compile(r"\d+(?:[.,]\d+)?")
_FIRST = re.compile(r"\b(i|i'm|im|i've|i'd|i'll|my|me|mine|we|our|us)\b|我|咱", re.I)
_SECOND = re.compile(r"\b(you|your|you're|u)\b|你|您", re.I)


def grams(text: str) -> list[str]:
    """Word uni- and bigrams, CJK character uni-, bi- and trigrams, and the opening token."""
    words: list[str] = []
    out: list[str] = []
    for run in _TOKEN.findall(text.lower()):
        if _CJK.match(run):
            out.extend(f"c:{c}" for c in run)
            out.extend(f"c2:{a}{b}" for a, b in pairwise(run))
            out.extend(f"c3:{run[i:i + 3]}" for i in range(len(run) - 2))
            words.append(run[:2])
        else:
            out.append(f"w:{run}")
            words.append(run)
    out.extend(f"w2:{a} {b}" for a, b in pairwise(words))
    if words:
        out.append(f"^:{words[0]}")
        if len(words) > 1:
            out.append(f"^2:{words[0]} {words[1]}")
    return out


@lru_cache(maxsize=65_536)
def _bucket(gram: str, dim: int) -> int:
    return zlib.crc32(gram.encode("utf-8")) % dim


def hashed(items: list[str], dim: int = HASH_DIM) -> Array:
    """Counts per hash bucket, log-scaled and L2-normalized (long turns do not dominate)."""
    v = np.zeros(dim, dtype=np.float32)
    for g in items:
        v[_bucket(g, dim)] += 1.0
    v = np.log1p(v)
    n = float(np.linalg.norm(v))
    out: Array = v / n if n else v
    return out


def text_signals(text: str) -> Array:
    """Length, question marks, digits, first- and second-person words (scaled to about 0..1)."""
    t = text.strip()
    return np.array([
        min(len(t), 400) / 400, float(bool(re.search(r"[?？]\s*$", t))), float(bool(_DIGITS.search(t))),
        min(len(_FIRST.findall(t)), 5) / 5, min(len(_SECOND.findall(t)), 5) / 5,
        float(bool(_CJK.search(t))), min(t.count("\n"), 10) / 10,
    ], dtype=np.float32)


def text_features(text: str, vector: Array | None) -> Array:
    """Trigger and query-gate features: embedding (or nothing for the lexical-only model),
    hashed n-grams, signals."""
    parts = [hashed(grams(text)), text_signals(text)]
    if vector is not None:
        parts.insert(0, np.asarray(vector, dtype=np.float32).ravel())
    return np.concatenate(parts)


def _norm_words(text: str) -> set[str]:
    return {g for g in grams(text) if g.startswith(("w:", "c:", "c2:"))}


def _slot(text: str) -> str | None:
    for topic, pattern in TOPICS:
        if pattern.search(text):
            return topic
    return None


_CHANGE = re.compile(
    r"\b(now|anymore|any more|no longer|switched|switch|moved|move|changed|new|quit|left|started|stopped|gave up|"
    r"instead|these days|nowadays|finally|just|recently|since|upgraded|replaced|became|promoted|transferred|"
    r"broke up|divorced|married|engaged|retired|sold|bought)\b|现在|换|不再|改|搬|离职|辞职|跳槽|新|已经|"
    r"不.{0,6}了|开始|戒|停|分手|离婚|结婚|订婚|退休|卖了|买了|调到|转|变成|最近", re.I)
_ADDITIVE = re.compile(r"\b(also|too|as well|another|second|both|in addition|plus|besides)\b|也|还|又|另外|第二|两个",
                       re.I)
_OTHER = re.compile(
    r"\b(my (wife|husband|partner|son|daughter|kids?|mom|mother|dad|father|brother|sister|friend|boss|manager|"
    r"coworker|colleague|roommate|boyfriend|girlfriend|grandma|grandpa|aunt|uncle|cousin|neighbou?r)|he|she|his|her|"
    r"their)\b|老婆|老公|媳妇|丈夫|妻子|儿子|女儿|孩子|妈|爸|哥|姐|弟|妹|朋友|老板|领导|同事|室友|奶奶|爷爷|外婆|"
    r"邻居|他|她", re.I)
_NEG = re.compile(r"\b(not|no|never|don't|doesn't|didn't|isn't|aren't|can't|won't)\b|不|没|别", re.I)
_PLAN = re.compile(r"\b(will|going to|gonna|plan|planning|next|tomorrow|soon|goal)\b|"
                   r"打算|计划|准备|下周|下个月|明年|目标", re.I)


def _cues(existing: str, new: str, similarity: float) -> Array:
    """Words that mark a change ("now", "switched", "现在", "换"), an addition ("also", "也"), someone
    else ("my brother", "他"), a negation or a plan, in each statement; and each times the
    similarity (a change cue means little between unrelated statements)."""
    def has(rx: re.Pattern[str], t: str) -> float:
        return float(bool(rx.search(t)))

    c = np.array([has(_CHANGE, new), has(_CHANGE, existing), has(_ADDITIVE, new), has(_OTHER, existing),
                  has(_OTHER, new), float(has(_OTHER, existing) != has(_OTHER, new)), has(_FIRST, existing),
                  has(_FIRST, new), has(_NEG, existing), has(_NEG, new), float(has(_NEG, existing) != has(_NEG, new)),
                  has(_PLAN, existing), has(_PLAN, new)], dtype=np.float32)
    out: Array = np.concatenate([c, c * similarity])
    return out


def pair_features(existing: str, new: str, va: Array | None, vb: Array | None, similarity: float) -> Array:
    """Change-detector features of (an existing memory, a new statement): how alike they are
    (cosine, word and character overlap, numbers), what the new one says that the old one does
    not (hashed n-grams of the new statement, and of the words only it has), the element-wise
    product of the two embeddings (which dimensions they share: the attribute), and the old rules'
    verdicts (same statement, same topic slot) and cue words as features rather than decisions.
    Out of fold on the training pairs, new versions found at 5 % false changes: lexical + cosine
    0.57, + the product 0.55, + both embeddings 0.64, + cue words 0.65 (at 10 %: 0.75 / 0.82)."""
    wa, wb = _norm_words(existing), _norm_words(new)
    jac = len(wa & wb) / max(1, len(wa | wb))
    na, nb = _DIGITS.findall(existing), _DIGITS.findall(new)
    slot_a, slot_b = _slot(existing), _slot(new)
    signals = np.array([
        similarity, similarity ** 2, jac, len(wa & wb) / max(1, len(wb)), len(wa & wb) / max(1, len(wa)),
        float(bool(na) and bool(nb) and set(na) == set(nb)), float(bool(na) and bool(nb) and set(na) != set(nb)),
        float(bool(na) != bool(nb)), min(len(new), 300) / 300, min(len(existing), 300) / 300,
        float(slot_a is not None and slot_a == slot_b),
        float(same_statement(existing, new, similarity, 0.9)),
    ], dtype=np.float32)
    only_new = [g for g in grams(new) if g.startswith(("w:", "c:", "c2:")) and g not in wa]
    lexical = hashed([f"n:{g}" for g in grams(new)] + [f"d:{g}" for g in only_new], PAIR_HASH_DIM)
    parts = [signals, _cues(existing, new, similarity), lexical]
    if va is not None and vb is not None:
        a, b = np.asarray(va, dtype=np.float32).ravel(), np.asarray(vb, dtype=np.float32).ravel()
        parts += [a * b, a, b]
    return np.concatenate(parts)
