"""LocalStack on the host, without Docker.

LocalStack 2026.3 runs as a plain process only under Python 3.13, so it lives in its own venv
(``.venv-localstack``, made by ``make localstack``; override with AGENT_MEMORY_LOCALSTACK_PYTHON).
It serves S3, SQS, EventBridge (and, for ``make deploy-local``, CloudFormation with everything the
app's template uses) on one gateway port bound to 127.0.0.1; it cannot run Lambdas without
Docker, which is why the local runtime calls the handlers itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent_memory.local.processes import ServerProcess, free_port, spawn_http_server

PINS = ["localstack-core[runtime]==2026.3.0", "cbor2<6", "pyopenssl<25", "cryptography<45", "joserfc<1.2",
        "service-identity"]


def localstack_python() -> Path:
    configured = os.environ.get("AGENT_MEMORY_LOCALSTACK_PYTHON")
    candidates = [Path(configured)] if configured else []
    here = Path.cwd()
    candidates += [here / ".venv-localstack" / "bin" / "python",
                   Path(__file__).resolve().parents[2] / ".venv-localstack" / "bin" / "python"]
    for cand in candidates:
        if cand.exists():
            return cand
    raise RuntimeError("LocalStack is not installed: run `make localstack` (needs Python 3.13)")


EXECUTOR_PLUGIN = Path(__file__).resolve().parents[2] / "localstack" / "plugin"
"""A LocalStack Lambda executor that creates functions without Docker and refuses to run them
(``localstack/plugin/agent_memory_localstack.py``): the runtime runs the handlers."""

SERVICES = ("s3,sqs,events,sts,iam,cloudformation,lambda,apigateway,logs,cloudwatch,sns,secretsmanager,ssm,"
            "kms,ecr")
"""What the app's template and ``cdk bootstrap`` use (services load lazily: unused ones cost nothing)."""


def start_localstack(data_dir: Path, port: int = 0, timeout_s: float = 90.0) -> ServerProcess:
    port = port or free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GATEWAY_LISTEN": f"127.0.0.1:{port}", "OVERRIDE_IN_DOCKER": "0", "DISABLE_EVENTS": "1",
        "FILESYSTEM_ROOT": str(data_dir.resolve()), "DNS_ADDRESS": "0", "LOCALSTACK_TELEMETRY": "0",
        "SERVICES": SERVICES, "EAGER_SERVICE_LOADING": "0",
        "LAMBDA_RUNTIME_EXECUTOR": "agent-memory",
        "PYTHONPATH": os.pathsep.join(p for p in (str(EXECUTOR_PLUGIN), os.environ.get("PYTHONPATH")) if p),
    }
    log = (data_dir / "localstack.log").open("ab")
    return spawn_http_server([str(localstack_python()), "-m", "localstack.runtime.main"], port,
                             "/_localstack/health", timeout_s, log, env=env)
