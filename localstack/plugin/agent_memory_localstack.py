"""A LocalStack Lambda executor that prepares functions without Docker and never runs them.

LocalStack's only community executor (``docker``) pulls a runtime image when a function is
created; with no Docker engine the function goes to ``Failed`` and so does the stack. Selected
with ``LAMBDA_RUNTIME_EXECUTOR=agent-memory`` (``agent_memory/local/localstack.py`` puts this
folder on LocalStack's PYTHONPATH; the ``.dist-info`` beside it registers the entry point), the
template's functions are created as declared (code, role, environment, log group) and an
invocation is refused with a message naming who runs the handlers: the agent-memory runtime,
in its own process, fed by its own queue poller, gateway and timers.

This file runs inside LocalStack's Python 3.13 venv, not the project's.
"""

from __future__ import annotations

from typing import Any, NoReturn

from localstack.services.lambda_.invocation.plugins import RuntimeExecutorPlugin
from localstack.services.lambda_.invocation.runtime_executor import LambdaRuntimeException, RuntimeExecutor

REFUSAL = ("agent-memory: LocalStack does not run this function (no Docker); the agent-memory runtime "
           "runs the handlers in-process (`make deploy-local`)")


class RefusingExecutor(RuntimeExecutor):
    """Functions become Active at once; any invocation fails before anything is started."""

    def start(self, env_vars: dict[str, str]) -> NoReturn:
        raise LambdaRuntimeException(REFUSAL)

    def stop(self) -> None:
        return None

    def get_address(self) -> str:
        raise LambdaRuntimeException(REFUSAL)

    def get_endpoint_from_executor(self) -> str:
        raise LambdaRuntimeException(REFUSAL)

    def get_runtime_endpoint(self) -> str:
        raise LambdaRuntimeException(REFUSAL)

    def invoke(self, payload: dict[str, Any]) -> NoReturn:
        raise LambdaRuntimeException(REFUSAL)

    def get_logs(self) -> str:
        return REFUSAL

    @classmethod
    def prepare_version(cls, function_version: Any) -> None:
        return None  # no image to pull, no runtime-init binary to download

    @classmethod
    def cleanup_version(cls, function_version: Any) -> None:
        return None


class RefusingExecutorPlugin(RuntimeExecutorPlugin):
    name = "agent-memory"

    def load(self, *args: Any, **kwargs: Any) -> type[RuntimeExecutor]:
        return RefusingExecutor
