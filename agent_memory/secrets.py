"""The index token from AWS Secrets Manager: the deployed stack keeps the Milvus/Zilliz/HelixDB
token in a secret and gives the functions its ARN (``AGENT_MEMORY_INDEX_TOKEN_SECRET_ARN``), so
the token is never in the template or the function's environment. One of the core's few AWS
adapters (with S3 and SQS); boto3 is imported only when a secret is configured."""

from __future__ import annotations

from agent_memory.config import Settings
from agent_memory.errors import BackendUnavailableError


def resolve_index_token(settings: Settings) -> Settings:
    """``settings`` with ``index_token`` read from its secret, unless a token was given directly."""
    arn = settings.index_token_secret_arn
    if not arn or settings.index_token:
        return settings
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    client = boto3.client("secretsmanager", region_name=settings.aws_region,
                          endpoint_url=settings.secrets_endpoint_url)
    try:
        token = client.get_secret_value(SecretId=arn)["SecretString"]
    except (BotoCoreError, ClientError) as exc:
        raise BackendUnavailableError(f"cannot read the index token secret {arn}: {exc}") from exc
    return settings.model_copy(update={"index_token": token})
