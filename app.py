#!/usr/bin/env python3
"""CDK entry point: ``npx cdk synth`` / ``npx cdk deploy [-c index=external -c index_uri=...] [-c auth=iam]``."""

from __future__ import annotations

from aws_cdk import App, Environment, Validations
from cdk_nag import AwsSolutionsChecks

from agent_memory.config import Settings
from stacks.agent_memory_stack import AgentMemoryStack
from stacks.options import DeployOptions


def build_app(app: App | None = None) -> tuple[App, AgentMemoryStack]:
    app = app or App()
    options = DeployOptions.from_context(app.node)
    stack = AgentMemoryStack(app, app.node.try_get_context("stack_name") or "AgentMemory",
                             settings=Settings(), options=options,
                             env=Environment(account=None, region=None),
                             description="agent-memory: long-term memory for LLM agents")
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app, stack


if __name__ == "__main__":
    built, _ = build_app()
    built.synth()
