"""Evidence recall@k on LoCoMo, for our recall path and two baselines, in one run.

Each conversation becomes one user; each turn one memory (``"Speaker: text"`` plus the photo
caption when a turn shares one), with the previous turn of the same session as its context and
``created_at`` from the session date. For every question of categories 1-4 we ask for the top 20
and count the share of its evidence turns among the first k. Baselines on the same turns: BM25
(``agent_memory.lexical``) and plain dense search with the same embedding model (no context,
no fusion). The data set is read from where it lies (CC BY-NC 4.0; never copied here).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.config import Settings
from agent_memory.lexical import bm25_scores

KS = (1, 5, 10, 20)
EXTRACTED_TOP_K = 3 * max(KS)
"""Memories asked for per question in the extracted mode (its recall@k counts distinct turns)."""
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@dataclass
class Turn:
    dia_id: str
    content: str
    context: str | None
    session_id: str
    created_at: datetime


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[dict[str, Any]]


def parse_session_date(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load(path: Path) -> list[Conversation]:
    out = []
    for conv in json.loads(path.read_text()):
        c = conv["conversation"]
        turns: list[Turn] = []
        n = 1
        while f"session_{n}" in c:
            start = parse_session_date(c[f"session_{n}_date_time"])
            prev: str | None = None
            for i, t in enumerate(c[f"session_{n}"]):
                text = t["text"] + (f" [shares a photo: {t['blip_caption']}]" if t.get("blip_caption") else "")
                content = f"{t['speaker']}: {text}"
                turns.append(Turn(t["dia_id"], content, prev, f"session_{n}", start + timedelta(seconds=i)))
                prev = content
            n += 1
        qs = [q for q in conv["qa"] if q.get("category") in CATEGORIES and q.get("evidence")]
        out.append(Conversation(conv["sample_id"], turns, qs))
    return out


@dataclass
class MethodResult:
    hits: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    by_category: dict[int, dict[int, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: {k: [] for k in KS}))
    latencies_ms: list[float] = field(default_factory=list)

    def add(self, ranked: list[str], evidence: set[str], category: int) -> None:
        for k in KS:
            value = len(evidence & set(ranked[:k])) / len(evidence)
            self.hits[k].append(value)
            self.by_category[category][k].append(value)

    def summary(self) -> dict[str, Any]:
        def pct(values: list[float]) -> float:
            return round(100 * statistics.fmean(values), 1) if values else 0.0

        out: dict[str, Any] = {"recall_at": {str(k): pct(v) for k, v in self.hits.items()},
                               "by_category": {CATEGORIES[c]: {str(k): pct(v) for k, v in d.items()}
                                               for c, d in sorted(self.by_category.items())}}
        if self.latencies_ms:
            lat = sorted(self.latencies_ms)
            out["latency_ms"] = {"p50": round(lat[len(lat) // 2], 2), "p95": round(lat[int(len(lat) * 0.95)], 2)}
        return out


def _ranked(scores: np.ndarray[Any, Any], ids: list[str], k: int = max(KS)) -> list[str]:
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:k]]


def run_extracted(convs: list[Conversation], settings: Settings,
                  on_progress: Callable[[str, int], None] | None = None) -> dict[str, Any]:
    """The second mode: each session goes in as a conversation (``messages``, one user turn per
    LoCoMo turn, ``"Speaker: text"``) and the write pipeline decides what to keep, extracts
    statements, checks duplicates and topic versions, as it does for a caller. A memory counts
    for the turn it came from (its provenance), so recall@k is the share of evidence turns among
    the first k distinct turns behind the recalled memories (``EXTRACTED_TOP_K`` of them: one turn
    may leave several statements). ``evidence_kept_pct`` is its ceiling: the share of
    evidence turns that left any memory at all."""
    from agent_memory.service import Memory

    result = MethodResult()
    kept_turns: set[str] = set()
    n_memories = n_turns = 0
    evidence_total = evidence_kept = 0
    with tempfile.TemporaryDirectory(prefix="agent-memory-eval-x-") as tmp:
        memory = Memory(settings.model_copy(update={
            "data_dir": Path(tmp), "store": "file", "collection_name": "locomo_extracted", "recall_log": False}))
        for conv in convs:
            user = f"locomo-{conv.sample_id}"
            sessions: dict[str, list[Turn]] = defaultdict(list)
            for t in conv.turns:
                sessions[t.session_id].append(t)
            dia_of: dict[str, str] = {}
            for session_id, turns in sessions.items():
                for start in range(0, len(turns), 200):  # a request carries at most 200 messages
                    part = turns[start:start + 200]
                    originals = memory.stage(memory.validate_remember(
                        user_id=user, session_id=session_id, created_at=part[0].created_at,
                        messages=[{"role": "user", "content": t.content, "created_at": t.created_at} for t in part]))
                    memory.index_originals(originals)
                    for o in originals:
                        dia_of[o.memory_id] = part[int(o.provenance["turn"])].dia_id
                if on_progress:
                    on_progress("extract", len(turns))
            memory.index.flush()
            n_turns += len(conv.turns)
            n_memories += len(dia_of)
            kept_turns |= {f"{conv.sample_id}/{d}" for d in dia_of.values()}
            kept_here = set(dia_of.values())
            for q in conv.questions:
                evidence = set(q["evidence"])
                evidence_total += len(evidence)
                evidence_kept += len(evidence & kept_here)
                # k counts turns: a turn may leave several statements, so ask for enough memories
                # to name max(KS) distinct turns, as the turn mode's top 20 does
                hits = memory.recall(user_id=user, query=q["question"], top_k=EXTRACTED_TOP_K, log=False)
                named = list(dict.fromkeys(dia_of[h.memory_id] for h in hits))[:max(KS)]
                result.add(named, evidence, int(q["category"]))
                if on_progress:
                    on_progress("extract-questions", 1)
        memory.close()
    return {"method": result.summary(), "memories": n_memories, "turns": n_turns,
            "turns_kept": len(kept_turns),
            "evidence_kept_pct": round(100 * evidence_kept / evidence_total, 1) if evidence_total else 0.0}


def run(path: Path, settings: Settings | None = None, on_progress: Callable[[str, int], None] | None = None,
        limit_conversations: int | None = None, extracted: bool = True, peers: Sequence[str] = ()) -> dict[str, Any]:
    """Evaluate; ``on_progress(stage, n)`` advances a progress bar. ``extracted`` adds the second
    mode (:func:`run_extracted`) as the method ``agent-memory (extracted)``; each of ``peers``
    (``agent_memory.evaluation.peers``) adds its configurations as methods on the same turns and
    questions, with the same embedding model, and ``peers`` in the result: their configuration,
    add throughput and ratios to ours."""
    from agent_memory.evaluation.peers.locomo_columns import PeerColumns
    from agent_memory.service import Memory

    convs = load(path)[:limit_conversations]
    with tempfile.TemporaryDirectory(prefix="agent-memory-eval-") as tmp:
        s = (settings or Settings()).model_copy(update={
            "data_dir": Path(tmp), "store": "file", "collection_name": "locomo_eval", "recall_log": False,
            "deduplicate": False, "detect_changes": False})  # one memory per turn, as the benchmark's setup
        memory = Memory(s)
        results = {"agent-memory": MethodResult(), "dense": MethodResult(), "bm25": MethodResult()}
        columns = PeerColumns(peers, memory.embedder, Path(tmp) / "peers", on_progress)
        results |= columns.results
        t_ingest = 0.0
        n_turns = 0
        for conv in convs:
            user = f"locomo-{conv.sample_id}"
            t0 = time.perf_counter()
            ids = memory.remember_many([
                {"user_id": user, "content": t.content, "context": t.context, "session_id": t.session_id,
                 "created_at": t.created_at, "metadata": {"dia_id": t.dia_id}} for t in conv.turns])
            t_ingest += time.perf_counter() - t0
            n_turns += len(conv.turns)
            dia_of = {mids[0]: t.dia_id for mids, t in zip(ids, conv.turns, strict=True)}
            dia_ids = [t.dia_id for t in conv.turns]
            contents = [t.content for t in conv.turns]
            plain = memory.embedder.embed_documents(contents)
            if on_progress:
                on_progress("ingest", len(conv.turns))
            columns.ingest(user, conv.turns)
            for q in conv.questions:
                evidence, cat = set(q["evidence"]), int(q["category"])
                t0 = time.perf_counter()
                hits = memory.recall(user_id=user, query=q["question"], top_k=max(KS), log=False)
                results["agent-memory"].latencies_ms.append((time.perf_counter() - t0) * 1000)
                results["agent-memory"].add([dia_of[h.memory_id] for h in hits], evidence, cat)
                qv = memory.embedder.embed_query(q["question"])
                similarity = plain @ qv
                dense = [(dia_ids[i], float(similarity[i])) for i in np.argsort(-similarity, kind="stable")]
                results["dense"].add([d for d, _ in dense[:max(KS)]], evidence, cat)
                results["bm25"].add(_ranked(bm25_scores(q["question"], contents), dia_ids), evidence, cat)
                columns.ask(user, q["question"], evidence, cat, {"dense": dense})
                if on_progress:
                    on_progress("questions", 1)
        memory.close()
        columns.close()
    methods = {name: r.summary() for name, r in results.items()}
    ingest_rate = round(n_turns / t_ingest, 1) if t_ingest else None
    extraction = None
    if extracted:
        extraction = run_extracted(convs, settings or Settings(), on_progress)
        methods["agent-memory (extracted)"] = extraction.pop("method")
    return {
        "dataset": str(path), "conversations": len(convs), "turns": n_turns,
        "questions": sum(len(c.questions) for c in convs),
        "embedding": memory.embedder.info.model_dump(),
        "settings": {"min_score": s.min_score if s.min_score is not None else memory.embedder.default_min_score,
                     "hybrid": s.hybrid, "neighbour_weight": s.neighbour_weight,
                     "second_neighbour_weight": s.second_neighbour_weight,
                     "dense_weight": s.dense_weight if s.dense_weight is not None
                     else memory.embedder.default_dense_weight,
                     "candidate_limit": s.candidate_limit},
        "ingest_memories_per_s": ingest_rate,
        "methods": methods, "extraction": extraction,
        "peers": columns.report(methods, ingest_rate),
    }


def plot(results: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for res in results:
        model = res["embedding"]["provider"]
        for name, m in res["methods"].items():
            if name != "agent-memory" and res is not results[0] and name == "bm25":
                continue  # the same baseline for every model: draw it once
            ys = [m["recall_at"][str(k)] for k in KS]
            label = name if name == "bm25" else f"{name} ({model})"
            ax.plot(KS, ys, marker="o", label=label, linestyle="-" if name.startswith("agent-memory") else "--")
    ax.set_xlabel("k")
    ax.set_ylabel("evidence recall@k (%)")
    ax.set_xticks(KS)
    ax.set_title(f"LoCoMo dev ({results[0]['questions']} questions, categories 1-4)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
