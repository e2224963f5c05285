"""The peers as methods of the LoCoMo turn mode (``agent-memory eval locomo --peer mem0``).

The same turns go in (the same ``"Speaker: text"`` contents, one memory per turn, one ``add`` per
session as a caller would send a conversation; no context field, which the peers lack), the same
questions are asked for the top 20, each timed apart from ours. The report gives each
configuration's exact settings, add throughput, and ratios to ours (peer / ours: recall@k overall
and per category, search latency, add throughput), and for a configuration in
:data:`~agent_memory.evaluation.peers.MUST_EQUAL` how many questions it ranked exactly as our
baseline (the check that the embedding is wrapped equivalently).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agent_memory.embed.base import Embedder
from agent_memory.evaluation.locomo import KS, MethodResult, Turn
from agent_memory.evaluation.peers import MUST_EQUAL, Peer, open_peers, ratio


class PeerColumns:
    """Every configuration of every named peer, beside ours in one LoCoMo run."""

    def __init__(self, names: Sequence[str], embedder: Embedder, root: Path,
                 on_progress: Callable[[str, int], None] | None = None) -> None:
        self.peers: dict[str, Peer] = {}
        for name in names:
            self.peers |= open_peers(name, embedder, root / name)
        self.results = {method: MethodResult() for method in self.peers}
        self.on_progress = on_progress
        self._dia_of: dict[str, dict[str, str]] = {method: {} for method in self.peers}
        self._add_s: dict[str, float] = defaultdict(float)
        self._added: dict[str, int] = defaultdict(int)
        self._same: dict[str, int] = defaultdict(int)
        self._checked: dict[str, int] = defaultdict(int)

    def ingest(self, user: str, turns: list[Turn]) -> None:
        sessions: dict[str, list[Turn]] = defaultdict(list)
        for t in turns:
            sessions[t.session_id].append(t)
        for method, peer in self.peers.items():
            t0 = time.perf_counter()
            for session in sessions.values():
                ids = peer.add(user, [t.content for t in session])
                self._dia_of[method].update(zip(ids, (t.dia_id for t in session), strict=True))
            self._add_s[method] += time.perf_counter() - t0
            self._added[method] += len(turns)
            if self.on_progress:
                self.on_progress("peer-ingest", len(turns))

    def ask(self, user: str, question: str, evidence: set[str], category: int,
            baselines: dict[str, list[tuple[str, float]]]) -> None:
        """``baselines``: our baselines' full ranking for this question, (turn, score) best first,
        by method name. A configuration that must equal one is compared with its top 20 among the
        turns that pass the peer's own similarity floor (``Peer.min_similarity``)."""
        for method, peer in self.peers.items():
            t0 = time.perf_counter()
            ids = peer.search(user, question, max(KS))
            self.results[method].latencies_ms.append((time.perf_counter() - t0) * 1000)
            ranked = [self._dia_of[method][i] for i in ids]
            self.results[method].add(ranked, evidence, category)
            baseline = MUST_EQUAL.get(method)
            if baseline in baselines:
                expected = [turn for turn, score in baselines[baseline] if score >= peer.min_similarity][:max(KS)]
                self._checked[method] += 1
                self._same[method] += ranked == expected
            if self.on_progress:
                self.on_progress("peer-questions", 1)

    def report(self, methods: dict[str, Any], our_add_rate: float | None) -> dict[str, Any]:
        """Per configuration: settings, add throughput, ratios to ours (``methods`` are the
        summaries of this run, ours under ``agent-memory``)."""
        ours = methods["agent-memory"]
        out: dict[str, Any] = {}
        for method, peer in self.peers.items():
            mine = methods[method]
            rate = round(self._added[method] / self._add_s[method], 1) if self._add_s[method] else None
            entry: dict[str, Any] = {
                "config": peer.describe(), "add_memories_per_s": rate,
                "ratio_to_ours": {
                    "recall_at": {k: ratio(v, ours["recall_at"][k]) for k, v in mine["recall_at"].items()},
                    "recall_at_10_by_category": {c: ratio(v["10"], ours["by_category"][c]["10"])
                                                 for c, v in mine["by_category"].items()},
                    "search_latency_p50": ratio(mine.get("latency_ms", {}).get("p50"), ours["latency_ms"]["p50"]),
                    "search_latency_p95": ratio(mine.get("latency_ms", {}).get("p95"), ours["latency_ms"]["p95"]),
                    "add_throughput": ratio(rate, our_add_rate)}}
            if method in MUST_EQUAL:
                entry["same_ranking_as"] = {"baseline": MUST_EQUAL[method], "questions": self._checked[method],
                                            "identical_top20": self._same[method]}
            out[method] = entry
        return out

    def close(self) -> None:
        for peer in self.peers.values():
            peer.close()
