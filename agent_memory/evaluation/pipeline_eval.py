"""``agent-memory eval pipeline``: the offline trigger and extraction on the labelled set in
``agent_memory/evaluation/data/pipeline_turns.jsonl`` (164 turns, half Chinese, half English:
small talk, questions to the agent, preferences, facts, plans, tasks, dated events, changes of
mind, amounts, agent-inferred facts; every turn said at 2026-03-02 10:00 UTC).

Reports trigger precision/recall, the share of small talk and questions filtered, type and
topic accuracy on the kept turns, and exact extraction on the turns that carry an expected
statement — overall and per language — with the time per turn.
"""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_memory.pipeline import decide_turn, extract, user_voice

DATA = Path(__file__).resolve().parent / "data" / "pipeline_turns.jsonl"
CONFLICTS = Path(__file__).resolve().parent / "data" / "pipeline_conflicts.jsonl"
SAID_AT = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def load(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _norm(s: str) -> str:
    return re.sub(r"[\s.。!！]+$", "", re.sub(r"\s+", " ", s.strip())).lower()


def _score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    tp = sum(r["keep"] and r["got_keep"] for r in rows)
    fp = sum(not r["keep"] and r["got_keep"] for r in rows)
    fn = sum(r["keep"] and not r["got_keep"] for r in rows)
    skip = [r for r in rows if not r["keep"]]
    kept = [r for r in rows if r["keep"] and r["got_keep"]]
    with_expected = [r for r in kept if r.get("expected")]
    return {
        "turns": len(rows),
        "trigger_precision": round(tp / max(1, tp + fp), 3),
        "trigger_recall": round(tp / max(1, tp + fn), 3),
        "small_talk_filtered": round(sum(not r["got_keep"] for r in skip) / max(1, len(skip)), 3),
        "type_accuracy": round(sum(r["got_type"] == r["type"] for r in kept) / max(1, len(kept)), 3),
        "topic_accuracy": round(sum(r["got_topic"] == r.get("topic") for r in kept) / max(1, len(kept)), 3),
        "extraction_exact": round(sum(_norm(r["got_text"]) == _norm(r["expected"]) for r in with_expected)
                                  / max(1, len(with_expected)), 3),
        "extraction_checked": len(with_expected),
    }


def run(path: Path = DATA) -> dict[str, Any]:
    rows = load(path)
    t0 = time.perf_counter()
    for r in rows:
        d = decide_turn(r["role"], r["text"])
        text = user_voice(r["text"]) if r["role"] == "assistant" else r["text"]
        statements = extract(text, SAID_AT) if d.keep else []
        r["got_keep"] = d.keep and bool(statements)
        r["got_type"] = d.kind
        r["got_topic"] = statements[0].topic_id if statements else None
        r["got_text"] = statements[0].text if statements else ""
        r["reason"] = d.reason
    per_turn_us = (time.perf_counter() - t0) / len(rows) * 1e6
    misses = [{"id": r["id"], "text": r["text"], "expected_keep": r["keep"], "reason": r["reason"]}
              for r in rows if r["keep"] != r["got_keep"]]
    return {"overall": _score(rows), "en": _score([r for r in rows if r["lang"] == "en"]),
            "zh": _score([r for r in rows if r["lang"] == "zh"]), "per_turn_us": round(per_turn_us, 1),
            "trigger_mistakes": misses}


def run_conflicts(path: Path = CONFLICTS, settings: Any = None) -> dict[str, Any]:
    """Conflict decisions through the real write path (an in-process Memory in a temporary folder):
    remember the existing statement, then the new one, and read what happened — a duplicate
    (the new one marked ``duplicate_of``), a new version (the old one superseded) or unrelated."""
    import tempfile
    import uuid

    from agent_memory.config import Settings
    from agent_memory.service import Memory

    rows = load(path)
    with tempfile.TemporaryDirectory(prefix="agent-memory-conflicts-") as tmp:
        m = Memory((settings or Settings()).model_copy(update={"data_dir": Path(tmp), "store": "file",
                                                               "index_uri": "", "consistency_level": "Strong"}))
        for r in rows:
            user = f"conflict-{uuid.uuid4().hex[:8]}"
            [old] = m.remember(user, messages=[{"role": "user", "content": r["existing"]}])
            new = m.remember(user, messages=[{"role": "user", "content": r["new"]}])
            old_state = m.get(old, user_id=user)["original"]["state"]
            new_state = m.get(new[0], user_id=user)["original"]["state"] if new else {}
            r["got"] = ("duplicate" if new_state.get("duplicate_of") == old else
                        "new_version" if old_state["superseded_by"] else "unrelated")
        m.close()
    by_class = {c: [r for r in rows if r["decision"] == c] for c in ("duplicate", "new_version", "unrelated")}
    return {"pairs": len(rows), "accuracy": round(sum(r["got"] == r["decision"] for r in rows) / len(rows), 3),
            **{f"{c}_correct": f"{sum(r['got'] == c for r in rs)}/{len(rs)}" for c, rs in by_class.items()},
            "mistakes": [{k: r[k] for k in ("id", "existing", "new", "decision", "got")}
                         for r in rows if r["got"] != r["decision"]]}
