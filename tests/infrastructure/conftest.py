"""Synthesize the stack once per variant per session (each synth takes seconds)."""

from __future__ import annotations

import os
from typing import Any

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")

_cache: dict[str, Any] = {}


def synth(**context: str) -> Any:
    from aws_cdk import App
    from aws_cdk.assertions import Template

    from app import build_app

    key = repr(sorted(context.items()))
    if key not in _cache:
        app, stack = build_app(App(context={"bundle": "source", **context}))
        app.synth()  # runs cdk-nag; a finding without an acknowledgment fails here
        _cache[key] = (stack, Template.from_stack(stack))
    return _cache[key]


@pytest.fixture(scope="session")
def default_stack() -> Any:
    return synth()


@pytest.fixture(scope="session")
def template(default_stack: Any) -> Any:
    return default_stack[1]
