"""``agent-memory up``: the whole stack on one machine, no Docker.

An emulator process provides S3 and SQS (moto by default); the bucket and queues
are created from the shared settings; the index is embedded (Milvus Lite) or a real
Milvus server on loopback; the real Lambda handlers run in this process behind the
HTTP gateway, the SQS poller and the self-check timer. On start, originals that were
stored but never indexed (the mirror stopped between the two) are indexed.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from agent_memory import runtime
from agent_memory.config import Settings
from agent_memory.errors import IndexSchemaError
from agent_memory.local.bootstrap import (
    Queues,
    ensure_bucket,
    ensure_queues,
    ensure_schedule_queue,
    ensure_working_table,
    make_events_client,
)
from agent_memory.local.lambda_runtime import HttpGateway, ScheduleQueuePoller, SqsPoller, Timer
from agent_memory.local.processes import start_moto
from agent_memory.local.watchdog import Watchdog
from agent_memory.service import Memory

SELFCHECK_RULE = "agent-memory-selfcheck-daily"
log = logging.getLogger(__name__)


@dataclass
class MirrorOptions:
    data_dir: Path = Path(".local")
    api_port: int = 8000
    emulator_port: int = 4566
    index: Literal["lite", "milvus", "helix"] = "lite"
    visibility_timeout_s: int = 10
    """Shorter than on AWS so a failed message is retried within seconds locally."""
    selfcheck_every_s: float = 86_400
    maintenance_every_s: float = 86_400
    """The daily maintenance function (expiry, then tiering), as its EventBridge rule runs it."""
    clock: Callable[[], datetime] | None = None
    """The memory service's clock (tests move it to make memories expire); None: the real one."""
    embedder: Any = None
    """An already-loaded embedder to reuse (tests); None: the configured one."""
    api_key: str | None = None
    s3_endpoint: str | None = None
    """Use this S3 server (e.g. MinIO from docker-compose) instead of the emulator's S3."""
    sqs_endpoint: str | None = None
    """Use this SQS endpoint (e.g. LocalStack) instead of starting moto."""
    index_uri: str | None = None
    """Use this index (e.g. the compose Milvus) instead of an embedded or loopback one."""
    emulator: Literal["moto", "localstack", "localstack-stack"] = "moto"
    """The AWS emulator for SQS (and S3 unless ``s3`` says otherwise). ``localstack-stack``: LocalStack
    with the app's own CDK template deployed into it (``make deploy-local``), the runtime bound to
    the deployed bucket, queues, API key and secret."""
    s3: Literal["emulator", "seaweedfs"] = "emulator"
    """``seaweedfs``: a real S3 server process (standing in for MinIO) instead of the emulator's S3."""
    watchdog_every_s: float = 15.0
    """How often the mirror asks its own Milvus server whether it answers, restarting it in place
    after two silent checks (:mod:`agent_memory.local.watchdog`); 0 turns the watch off."""


@dataclass
class Mirror:
    options: MirrorOptions
    settings: Settings | None = None
    queues: Queues | None = None
    api_key: str = ""
    reconciled: Any = None
    migrated: Any = None
    """The rebuild of an index of an older schema at start (a ReindexReport), if one was needed."""
    bucket_settings_skipped: list[str] = field(default_factory=list)
    stack: Any = None
    """The :class:`~agent_memory.local.deployed_stack.StackBinding` in ``localstack-stack`` mode."""
    _servers: list[Any] = field(default_factory=list)
    _parts: list[Any] = field(default_factory=list)
    _built: Memory | None = None

    @property
    def pid_file(self) -> Path:
        return self.options.data_dir / "mirror.pid"

    def _api_key(self) -> str:
        if self.options.api_key:
            return self.options.api_key
        path = self.options.data_dir / "api_key"
        if not path.exists():
            path.write_text(secrets.token_urlsafe(24))
            path.chmod(0o600)
        return path.read_text().strip()

    def start(self) -> Mirror:
        o = self.options
        o.data_dir.mkdir(parents=True, exist_ok=True)
        on_stack = o.emulator == "localstack-stack"
        if on_stack and (o.s3 != "emulator" or o.s3_endpoint or o.sqs_endpoint):
            raise ValueError("localstack-stack binds to the deployed stack's bucket and queues: no other S3/SQS")
        self.api_key = "" if on_stack else self._api_key()
        s3_url = o.s3_endpoint
        if not s3_url and o.s3 == "seaweedfs":
            from agent_memory.local.seaweedfs import LoopbackSeaweedFS

            weed = LoopbackSeaweedFS(o.data_dir / "seaweedfs").start()
            self._servers.append(weed)
            s3_url = weed.url
        emulator_url = ""
        if not (s3_url and o.sqs_endpoint):
            if o.emulator in ("localstack", "localstack-stack"):
                from agent_memory.local.localstack import start_localstack

                emulator = start_localstack(o.data_dir / "localstack", port=o.emulator_port)
            else:
                emulator = start_moto(port=o.emulator_port, record=o.data_dir / "moto-s3-writes.jsonl",
                                      log_path=o.data_dir / "moto.log")
            self._servers.append(emulator)
            emulator_url = emulator.url
        s3_url, sqs_url = s3_url or emulator_url, o.sqs_endpoint or emulator_url
        index_uri = o.index_uri or str((self.stack_dir if on_stack else o.data_dir) / "memory.db")
        watchdogs: list[Watchdog] = []
        if o.index == "milvus" and not o.index_uri:
            from agent_memory.local.milvus_server import LoopbackMilvus

            milvus = LoopbackMilvus(o.data_dir / "milvus-server").start()
            self._servers.append(milvus)
            index_uri = milvus.uri
            if o.watchdog_every_s:
                watchdogs.append(Watchdog(milvus, "the Milvus server", every_s=o.watchdog_every_s))
        if o.index == "helix" and not o.index_uri:
            index_uri = f"helix+embedded://{(o.data_dir / 'helix').resolve()}"
        for k, v in (("AWS_ACCESS_KEY_ID", "local"), ("AWS_SECRET_ACCESS_KEY", "local"),
                     ("AWS_DEFAULT_REGION", "us-east-1")):
            os.environ.setdefault(k, v)
        base = Settings()
        s = base.model_copy(update={
            "data_dir": o.data_dir, "store": "s3", "s3_endpoint_url": s3_url, "sqs_endpoint_url": sqs_url,
            "index_uri": index_uri, "visibility_timeout_s": o.visibility_timeout_s,
        })
        from agent_memory.queue.sqs import make_sqs_client
        from agent_memory.store.s3 import make_s3_client

        sqs = make_sqs_client(sqs_url, s.aws_region)
        if on_stack:
            s = self._bind_stack(emulator_url, s)
        else:
            self.bucket_settings_skipped = ensure_bucket(make_s3_client(s3_url, s.aws_region), s,
                                                         tls_only=s3_url.startswith("https://"))
            self.queues = ensure_queues(sqs, s)
        assert self.queues is not None
        s = s.model_copy(update={"api_keys": [*base.api_keys, self.api_key]})
        if emulator_url and o.emulator == "moto":  # working memory in DynamoDB, as deployed
            import boto3

            ensure_working_table(boto3.client("dynamodb", endpoint_url=emulator_url, region_name=s.aws_region), s)
            s = s.model_copy(update={"working_store": "dynamodb", "dynamodb_endpoint_url": emulator_url})
        s = s.model_copy(update={"write_queue_url": self.queues.queue_url})
        self.settings = s
        memory = self._open_memory(s)
        runtime.write_queue()
        from agent_memory.reindex import index_missing

        self.reconciled = index_missing(memory)
        from lambdas import api, ingest, selfcheck, tier

        if o.emulator == "localstack" and not o.sqs_endpoint:
            # EventBridge really schedules here: the rule delivers to a queue the runtime polls
            schedule_url = ensure_schedule_queue(sqs, make_events_client(sqs_url, s.aws_region),
                                                 SELFCHECK_RULE, o.selfcheck_every_s)
            trigger: Any = ScheduleQueuePoller(sqs, schedule_url, selfcheck.handler, SELFCHECK_RULE)
        else:
            trigger = Timer(selfcheck.handler, o.selfcheck_every_s, SELFCHECK_RULE)
        self._parts = [
            HttpGateway(api.handler, o.api_port, s.api_keys).start(),
            SqsPoller(sqs, self.queues.queue_url, self.queues.queue_arn, ingest.handler,
                      s.ingest_batch_size).start(),
            trigger.start(),
            Timer(tier.handler, o.maintenance_every_s, "agent-memory-tiering").start(),  # daily, like its rule
            *(w.start() for w in watchdogs),
        ]
        self.pid_file.write_text(str(os.getpid()))
        return self

    def _open_memory(self, s: Settings) -> Memory:
        """Configure the runtime and build its Memory (cold start: model load, index open). An index
        of an older schema is rebuilt from the originals first: locally S3 is the source of truth
        and a rebuild is always safe (on AWS, run `agent-memory reindex` on purpose)."""
        o = self.options
        for attempt in (1, 2):
            try:
                self._built = Memory(s, embedder=o.embedder, clock=o.clock) if o.clock or o.embedder else None
                runtime.configure(s, memory=self._built)  # the runtime closes only a Memory it built; stop() ours
                return runtime.memory()
            except IndexSchemaError as exc:
                if attempt == 2:
                    raise
                log.warning("%s; rebuilding it from the originals now", exc)
                from agent_memory.embed import make_embedder
                from agent_memory.index import open_index
                from agent_memory.reindex import StoredOriginals, reindex
                from agent_memory.store import make_store

                originals = StoredOriginals(make_store(s), s.key_prefix)
                target = open_index(s)
                try:
                    self.migrated = reindex(originals, originals.key_of, o.embedder or make_embedder(s), target,
                                            blend=s.context_blend)
                finally:
                    target.close()
        raise AssertionError("unreachable")

    @property
    def stack_dir(self) -> Path:
        return self.options.data_dir / "stack"

    def _bind_stack(self, endpoint: str, s: Settings) -> Settings:
        """Deploy the app's template into LocalStack and take every name from it (the queues' visibility
        timeout too: the template's, not the mirror's shorter one)."""
        from agent_memory.local.deployed_stack import deploy_and_bind
        from agent_memory.secrets import resolve_index_token

        # LocalStack keeps no state across restarts: each start deploys a fresh stack, so the index
        # of the last one goes too (wiped only now that this start's LocalStack holds its port)
        shutil.rmtree(self.stack_dir, ignore_errors=True)
        self.stack = stack = deploy_and_bind(endpoint, s.aws_region, self.stack_dir)
        self.queues = stack.queues
        self.api_key = stack.api_key
        key_file = self.options.data_dir / "api_key"  # where the README's curl reads it
        key_file.write_text(stack.api_key)
        key_file.chmod(0o600)
        # the index token comes from the deployed secret, read by the Lambda's own cold-start code
        return resolve_index_token(s.model_copy(update={
            "bucket_name": stack.bucket, "index_token_secret_arn": stack.secret_arn,
            "secrets_endpoint_url": endpoint}))

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self._parts[0].port}"

    def describe(self) -> dict[str, Any]:
        assert self.settings is not None and self.queues is not None
        return {
            "api": self.api_url, "api_key_file": str(self.options.data_dir / "api_key"),
            "emulator": self.settings.sqs_endpoint_url, "emulator_kind": self.options.emulator,
            "s3": self.settings.s3_endpoint_url,
            "bucket": self.settings.bucket_name, "bucket_settings_skipped": self.bucket_settings_skipped,
            "write_queue": self.queues.queue_url, "dead_letter_queue": self.queues.dlq_url,
            "index": self.settings.resolved_index_uri,
            "working_memory": self.settings.working_store,
            "embedding": runtime.memory().embedder.info.model_dump(),
            "reconciled_at_start": getattr(self.reconciled, "indexed", 0),
            "pids": {"runtime": os.getpid(), **{type(x).__name__: x.pid for x in self._servers}},
            **(self.stack.describe() if self.stack else {}),
        }

    def stop(self) -> None:
        for part in reversed(self._parts):
            part.stop()
        runtime.reset()
        if self._built is not None:
            self._built.close()
            self._built = None
        for server in reversed(self._servers):
            server.stop()
        self._parts.clear()
        self._servers.clear()
        self.pid_file.unlink(missing_ok=True)


def wait_for_signal() -> None:
    """Block until SIGINT/SIGTERM (they must be blocked first, or they would kill us before cleanup)."""
    signals = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    signal.sigwait(signals)


def stop_running(data_dir: Path) -> bool:
    """``make down``: signal the ``up`` process recorded in the pid file; it cleans up after itself."""
    pid_file = data_dir / "mirror.pid"
    if not pid_file.exists():
        return False
    try:
        os.kill(int(pid_file.read_text()), signal.SIGTERM)
    except (ProcessLookupError, ValueError):
        pid_file.unlink(missing_ok=True)
        return False
    return True
