"""``agent-memory bench``: warn when a figure is much worse than the last committed run.

A test cannot time the engines (the machines are shared and their speed varies by tens of
percent), so a ten-fold slower ingest went unnoticed for a day (issue 19: HelixDB's queue worker
fell from 206 to 21 memories/s when id lookups crossed the engine's indexed ``is_in`` size). The
bench knows the result it is about to replace: ``results/bench-<label>.json`` as last committed
(``git show HEAD:...``, else the file on disk) is the same index, size and store. A figure more
than ``factor`` times worse than there is printed as a warning, beyond the hour-to-hour noise.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory.evaluation.bench import INGEST_PROBE

HIGHER_IS_BETTER = ("bulk_load_memories_per_s", "ingest_worker_memories_per_s",
                    "ingest_without_store_reads_memories_per_s", "ingest_worker_judged_memories_per_s",
                    "recall_throughput_c8_per_s")
LOWER_IS_BETTER = ("recall_ms_c1.p50", "recall_ms_c1.p95", "recall_ms_c8.p50", "recall_ms_c8.p95",
                   "index_search_ms.p50", "index_search_ms.p95", "remember_api_stage_ms.p50",
                   "remember_api_stage_ms.p95", "handler_cold_start.total_s", "rss_peak_mb")
SAME_RUN = ("index", "memories", "users", "store", "s3_server", "ingest_probe")
"""Fields that must match for two results to be compared at all."""
BEFORE_THE_FIELD = {"ingest_probe": INGEST_PROBE}
"""What a result written before a SAME_RUN field existed had: every bench probed with 1,000."""


@dataclass(frozen=True)
class Regression:
    measure: str
    before: float
    after: float

    @property
    def times_worse(self) -> float:
        return self.after / self.before if self.measure in LOWER_IS_BETTER else self.before / self.after

    def __str__(self) -> str:
        return f"{self.measure}: {self.after:g} now vs {self.before:g} committed ({self.times_worse:.1f}x worse)"


def figure(result: dict[str, Any], measure: str) -> float | None:
    """A dotted measure (``recall_ms_c1.p95``) of a result, or None when it is absent or not positive."""
    value: Any = result
    for part in measure.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def regressions(now: dict[str, Any], committed: dict[str, Any], factor: float = 2.0) -> list[Regression]:
    """Figures of ``now`` more than ``factor`` times worse than ``committed``; none when the two
    runs are not of the same index, size and store (or a figure is missing from either)."""
    ours, theirs = BEFORE_THE_FIELD | now, BEFORE_THE_FIELD | committed
    if any(ours.get(k) != theirs.get(k) for k in SAME_RUN if k in ours and k in theirs):
        return []
    found = []
    for measure in (*HIGHER_IS_BETTER, *LOWER_IS_BETTER):
        before, after = figure(committed, measure), figure(now, measure)
        if before is None or after is None:
            continue
        reg = Regression(measure, before, after)
        if reg.times_worse > factor:
            found.append(reg)
    return found


def committed_result(path: Path) -> dict[str, Any] | None:
    """``path`` as in git's HEAD (what the README's figures come from), else as on disk; None
    when neither exists or parses. Call it before the new result overwrites the file."""
    text = None
    try:
        out = subprocess.run(["git", "show", f"HEAD:./{path.name}"], cwd=path.parent, capture_output=True,
                             text=True, timeout=30, check=False)
        text = out.stdout if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        text = None
    if text is None and path.exists():
        text = path.read_text()
    try:
        loaded = json.loads(text) if text else None
    except json.JSONDecodeError:
        return None
    return loaded if isinstance(loaded, dict) else None
