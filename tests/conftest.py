"""Shared fixtures: real servers started per test session on free loopback ports."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from agent_memory.embed.base import Embedder
from agent_memory.local.milvus_server import LoopbackMilvus
from agent_memory.local.processes import ServerProcess, start_moto


def new_user(prefix: str = "u") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    from agent_memory.embed.local_models import Usem3Embedder

    return Usem3Embedder()


@pytest.fixture(scope="session")
def moto_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_moto(log_path=tmp_path_factory.mktemp("moto") / "moto.log")
    yield server
    server.stop()
    assert server.proc.poll() is not None


def make_bucket(endpoint: str, name: str) -> None:
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                      aws_access_key_id="testing", aws_secret_access_key="testing")
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})


@pytest.fixture(scope="session")
def milvus_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackMilvus]:
    """A real Milvus 2.3.5 server confined to loopback (see agent_memory.local.milvus_server)."""
    server = LoopbackMilvus(Path(tmp_path_factory.mktemp("milvus"))).start()
    yield server
    server.stop()


@pytest.fixture
def milvus_server(milvus_process: LoopbackMilvus) -> str:
    """The session's Milvus server, answering: a machine stalled for longer than the server's
    etcd leases (47 s once in CI) leaves it "service not ready ... Abnormal" for good, so it is
    restarted, on the same port and data, before the next test that needs it."""
    if not milvus_process.healthy():
        milvus_process.restart()
    return milvus_process.uri


HELIX_API_KEY = "test-helix-key"


def start_helix_server(root: Path, port: int, log_path: Path) -> ServerProcess:
    """The test-only HelixDB HTTP server (tests/helix_http_server.py) in its own process, with
    :data:`HELIX_API_KEY`; ``root`` keeps its data, so a restart on the same root finds it."""
    import sys

    from agent_memory.local.processes import spawn_http_server

    with log_path.open("ab") as log:
        return spawn_http_server(
            [sys.executable, "-m", "tests.helix_http_server", "--root", str(root), "--port", str(port),
             "--api-key", HELIX_API_KEY], port, "/healthz", 60.0, log,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})


@pytest.fixture(scope="session")
def helix_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A session's HelixDB HTTP server; answers ``helix+http://`` URIs."""
    from agent_memory.local.processes import free_port

    root = tmp_path_factory.mktemp("helix-server")
    server = start_helix_server(root, free_port(), root / "server.log")
    yield f"helix+{server.url}"
    server.stop()
    assert server.proc.poll() is not None


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server (Debian package; `.ci/run` installs it) on a free loopback port."""
    import shutil
    import subprocess
    import time

    import redis

    from agent_memory.local.processes import die_with_parent, free_port

    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does it)")
    root = tmp_path_factory.mktemp("redis")
    port = free_port()
    with (root / "redis.log").open("ab") as log:
        proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no", "--dir", str(root)], stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=die_with_parent)
    server = ServerProcess(proc, f"redis://127.0.0.1:{port}/0")
    deadline = time.monotonic() + 20
    while True:
        try:
            redis.Redis.from_url(server.url).ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline or proc.poll() is not None:
                server.stop()
                raise
            time.sleep(0.05)
    yield server.url
    server.stop()
    assert proc.poll() is not None


def pytest_configure(config: pytest.Config) -> None:
    """Emulators accept any key; never let a test pick up real credentials (set once, for the
    whole session, so session- and module-scoped fixtures see them too)."""
    os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": "us-east-1"})
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        os.environ.pop(var, None)
