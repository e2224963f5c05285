"""Schemathesis against the served OpenAPI document (`/openapi.json` of `agent-memory up`): for
every operation, generated valid and invalid inputs never produce a 5xx, and every 4xx is a JSON
error with a message (never a stack trace)."""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from tests.e2e.conftest import RunningMirror


def json_error_with_message(ctx: Any, response: Any, case: Any) -> bool | None:
    if 400 <= response.status_code < 500:
        ctype = {k.lower(): v for k, v in response.headers.items()}.get("content-type", [""])[0]
        assert ctype.startswith("application/json"), response.headers
        doc = response.json()
        assert isinstance(doc, dict) and doc.get("message"), doc
        assert "Traceback" not in response.text
    return None


def test_no_5xx_and_every_4xx_is_a_json_error(mirror: RunningMirror) -> None:
    key = (mirror.data_dir / "api_key").read_text().strip()
    schema = schemathesis.openapi.from_url(f"{mirror.url}/openapi.json", headers={"x-api-key": key})
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    calls: list[str] = []

    def fuzzer(op: Any) -> Any:
        @given(case=op.as_strategy())
        @settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def fuzz(case: Any) -> None:
            case.call_and_validate(base_url=mirror.url, headers={"x-api-key": key},
                                   checks=[not_a_server_error, json_error_with_message])
            calls.append(op.label)

        return fuzz

    for op in operations:
        fuzzer(op)()
    print(f"schemathesis: {len(calls)} calls over {len(operations)} operations, no 5xx")
