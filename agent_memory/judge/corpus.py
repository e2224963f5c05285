"""The labelled corpora of ``agent_memory/evaluation/data/judge/`` (see its SPEC.md) and their
frozen split.

The split is made once (:func:`make_split`, ``agent-memory train judge --split``) and committed
before anything is trained; :func:`load` then hands out ``train`` and ``heldout`` rows, and
nothing in training or threshold selection ever reads ``heldout``. Stratified by language and
label; queries tied to a profile are split by profile (a held-out profile's memories and
questions are all held out), so the relevance threshold is never chosen on a held-out user.

Rows written later come in *rounds*: a file named ``<set>-<...>-r<N>[a-z].jsonl`` belongs to round
N (files without the suffix are round 1). Each round is split on its own, with its own seed,
before anything is trained on it, so adding a round never moves an earlier round's held-out ids:
``make_split`` of round 1 is exactly the split committed first.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "evaluation" / "data" / "judge"
SPLIT = DATA / "split.json"
HELDOUT_SHARE = 0.3
SETS = ("turns", "pairs", "queries", "profiles")
TURN_TYPES = ("preference", "fact", "task", "event", "plan")
PAIR_LABELS = ("new_version", "duplicate", "unrelated")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path.name} line {n}: {exc}") from exc
    return rows


_ROUND = re.compile(r"-r(\d+)[a-z]?$")


def round_of(path: Path) -> int:
    """The writing round a file belongs to (``turns-en-r2a.jsonl``: 2; ``turns-en-a.jsonl``: 1)."""
    match = _ROUND.search(path.stem)
    return int(match.group(1)) if match else 1


def read_set(name: str, data: Path = DATA, rounds: set[int] | None = None) -> list[dict[str, Any]]:
    """Every row of one set, from all its files (``turns-*.jsonl`` ...) or those of ``rounds``, in
    file order."""
    rows: list[dict[str, Any]] = []
    for path in sorted(data.glob(f"{name}-*.jsonl")):
        if rounds is None or round_of(path) in rounds:
            rows.extend(read_jsonl(path))
    return rows


def row_rounds(name: str, data: Path = DATA) -> dict[str, int]:
    """Each row's writing round, by id (profile name for profiles)."""
    return {_key(name, r): round_of(p) for p in sorted(data.glob(f"{name}-*.jsonl")) for r in read_jsonl(p)}


def rounds_in(data: Path = DATA) -> list[int]:
    return sorted({round_of(p) for name in SETS for p in data.glob(f"{name}-*.jsonl")})


def _key(name: str, row: dict[str, Any]) -> str:
    return str(row["profile"] if name == "profiles" else row["id"])


def _stratum(name: str, row: dict[str, Any]) -> str:
    label = {"turns": row.get("keep"), "pairs": row.get("label"), "queries": row.get("label")}.get(name)
    return f"{row.get('lang')}/{label}"


def make_split(data: Path = DATA, share: float = HELDOUT_SHARE, seed: int = 20261201) -> dict[str, list[str]]:
    """Held-out ids per set: ``share`` of each (language, label) stratum of each round,
    profiles (and every query tied to a held-out profile) as whole units."""
    out: dict[str, list[str]] = {name: [] for name in ("profiles", "turns", "pairs", "queries")}
    for n in rounds_in(data) or [1]:
        part = _split_round(data, share, seed if n == 1 else seed + n, {n}, set(out["profiles"]))
        for name in SETS:
            out[name] = sorted({*out[name], *part[name]})
    return out


def _split_round(data: Path, share: float, seed: int, rounds: set[int],
                 held_before: set[str]) -> dict[str, list[str]]:
    """One round's held-out ids; a query tied to a profile held out in an earlier round is held out."""
    rng = random.Random(seed)
    out: dict[str, list[str]] = {}
    profiles = read_set("profiles", data, rounds)
    by_lang: dict[str, list[str]] = defaultdict(list)
    for p in profiles:
        by_lang[str(p["lang"])].append(str(p["profile"]))
    held_profiles: set[str] = set()
    for ids in by_lang.values():
        ids = sorted(ids)
        rng.shuffle(ids)
        held_profiles |= set(ids[:max(1, round(len(ids) * share))])
    out["profiles"] = sorted(held_profiles)
    for name in ("turns", "pairs", "queries"):
        strata: dict[str, list[str]] = defaultdict(list)
        held: set[str] = set()
        for row in read_set(name, data, rounds):
            if name == "queries" and row.get("profile"):
                if row["profile"] in held_profiles | held_before:
                    held.add(str(row["id"]))
                continue
            strata[_stratum(name, row)].append(str(row["id"]))
        for ids in strata.values():
            ids = sorted(ids)
            rng.shuffle(ids)
            held |= set(ids[:round(len(ids) * share)])
        out[name] = sorted(held)
    return out


def extend_split(path: Path = SPLIT, data: Path = DATA) -> tuple[dict[str, list[str]], dict[str, int]]:
    """The split with any new round's held-out ids added, and how many were added per set. Refuses
    (``ValueError``) when an id already held out would move: the frozen part never changes."""
    new = make_split(data)
    if not path.exists():
        return new, {k: len(v) for k, v in new.items()}
    old = json.loads(path.read_text(encoding="utf-8"))["heldout"]
    moved = {k: sorted(set(v) - set(new.get(k, []))) for k, v in old.items()}
    if any(moved.values()):
        raise ValueError(f"{path} is frozen and make_split() would move held-out ids: "
                         + ", ".join(f"{k}: {v[:3]}" for k, v in moved.items() if v))
    return new, {k: len(set(new[k]) - set(old.get(k, []))) for k in new}


def write_split(split: dict[str, list[str]], path: Path = SPLIT) -> None:
    path.write_text(json.dumps({"heldout": split, "note": "frozen: never used to fit or tune anything"},
                               indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


@dataclass
class Corpus:
    train: list[dict[str, Any]]
    heldout: list[dict[str, Any]]

    def part(self, which: str) -> list[dict[str, Any]]:
        if which not in ("train", "heldout"):
            raise ValueError(f"unknown split {which!r}")
        return self.train if which == "train" else self.heldout


def load(name: str, data: Path = DATA, split_path: Path | None = None,
         rounds: Collection[int] | None = None) -> Corpus:
    """One set, divided by the frozen split (a missing split file is an error: never train
    without one); only the rows of ``rounds`` when given."""
    if name not in SETS:
        raise ValueError(f"unknown set {name!r}; known: {', '.join(SETS)}")
    path = split_path or data / "split.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: make and commit the split first "
                                "(agent-memory train judge --split)")
    held = set(json.loads(path.read_text(encoding="utf-8"))["heldout"][name])
    rows = read_set(name, data, set(rounds) if rounds is not None else None)
    return Corpus([r for r in rows if _key(name, r) not in held], [r for r in rows if _key(name, r) in held])
