"""Thin AWS Lambda handlers: Powertools around the ``agent_memory`` core."""

TRACED_MODULES = ("botocore",)
"""What X-Ray patches (``Tracer(patch_modules=...)``): the AWS calls (S3, SQS, Secrets Manager),
each a subsegment. Powertools' default patches every library X-Ray knows that is installed, and
importing them for the patch is paid at every cold start (in a Lambda-like probe, SQLAlchemy alone
took 0.26 s and httpx 0.12 s); httpx carries only the optional LLM and remote-embedding calls,
which are not traced."""
