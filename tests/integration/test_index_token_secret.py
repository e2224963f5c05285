"""The deployed functions read the index token from Secrets Manager (moto server over HTTP)."""

from __future__ import annotations

import boto3
import pytest

from agent_memory import Settings, runtime
from agent_memory.errors import BackendUnavailableError
from agent_memory.local.processes import ServerProcess
from agent_memory.secrets import resolve_index_token


def test_index_token_comes_from_the_secret(moto_server: ServerProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    sm = boto3.client("secretsmanager", endpoint_url=moto_server.url, region_name="us-east-1")
    arn = sm.create_secret(Name="agent-memory-index-token-test", SecretString="s3cr3t-token")["ARN"]
    base = Settings(index_token_secret_arn=arn, secrets_endpoint_url=moto_server.url)
    assert resolve_index_token(base).index_token == "s3cr3t-token"
    assert resolve_index_token(base.model_copy(update={"index_token": "given"})).index_token == "given"

    monkeypatch.setenv("AGENT_MEMORY_INDEX_TOKEN_SECRET_ARN", arn)
    monkeypatch.setenv("AGENT_MEMORY_SECRETS_ENDPOINT_URL", moto_server.url)
    runtime.reset()
    try:
        assert runtime.settings().index_token == "s3cr3t-token"
    finally:
        runtime.reset()

    missing = base.model_copy(update={"index_token_secret_arn": arn.replace("test", "gone")})
    with pytest.raises(BackendUnavailableError, match="index token secret"):
        resolve_index_token(missing)
