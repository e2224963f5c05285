"""The callers' corrections of the change detector as labelled pairs, for ``train judge``.

Why: :meth:`agent_memory.Memory.correct` records in ``provenance.change`` every verdict a caller
overruled (``decided_by: caller``, with the verdict it replaced under ``was``). Those are the
detector's errors on a deployment's own users, in their own words, and the one kind of labelled
pair no writer can invent. This module turns them into rows of the written pairs' format
(``SPEC.md``: ``existing``, ``new``, ``label``), which ``agent-memory train judge --extra-pairs
FILE`` adds to the change model's training rows (never to the held-out split, which keeps
measuring the same thing).

A correction names two memories: the one corrected and the other one (``of`` for a new version
the caller linked; for an undone link, the memory the detector had tied it to). The row is
(older, newer) by ``created_at``, each side as said (:meth:`Original.said`: what the change model
compares on the write path). A correction whose other memory is gone (erased) gives no row. Only
the latest verdict of a memory counts: a correction corrected again is the second one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agent_memory.judge.corpus import PAIR_LABELS
from agent_memory.model import Original

SOURCE = "correction"


def correction_pairs(originals: Iterable[Original], load: Callable[[str, str], Original | None]
                     ) -> list[dict[str, Any]]:
    """The pairs of every correction among ``originals``; ``load(user_id, memory_id)`` reads the
    other memory of each (None when it is gone)."""
    rows = []
    for o in originals:
        change = o.provenance.get("change") or {}
        if change.get("decided_by") != "caller":
            continue
        was = change.get("was") or {}
        other_id = change.get("memory_id") if change.get("decision") == "new_version" else was.get("memory_id")
        other = load(o.user_id, other_id) if other_id else None
        if other is None:
            continue
        older, newer = sorted((other, o), key=lambda x: (x.created_at, x.memory_id))
        rows.append({"id": f"{SOURCE}-{o.memory_id}", "lang": _lang(older.said() + newer.said()), "attribute": "",
                     "existing": older.said(), "new": newer.said(), "label": change["decision"],
                     "query": None, "hard": True, "source": SOURCE, "was": was.get("decision", "unrelated")})
    return rows


def _lang(text: str) -> str:
    return "zh" if re.search(r"[\u4e00-\u9fff]", text) else "en"


def read_pairs(path: Path) -> list[dict[str, Any]]:
    """Extra pair rows from a JSONL file (what ``agent-memory corrections`` writes, or rows written
    by hand in the same format), checked before any training starts: a bad row is an error naming
    its line, never a row silently dropped."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{n}: a pair is a JSON object")
        for field in ("existing", "new"):
            if not isinstance(row.get(field), str) or not row[field].strip():
                raise ValueError(f"{path}:{n}: {field!r} must be a non-empty string")
        if row.get("label") not in PAIR_LABELS:
            raise ValueError(f"{path}:{n}: 'label' must be one of {', '.join(PAIR_LABELS)}, got {row.get('label')!r}")
        rows.append({"lang": _lang(row["existing"] + row["new"]), "attribute": "", **row,
                     "id": str(row.get("id") or f"{path.stem}-{n}")})
    return rows
