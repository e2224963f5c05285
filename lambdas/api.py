"""REST API (API Gateway proxy events): routing, validation and error mapping only.

Every route calls one method of :class:`agent_memory.Memory`. Errors become JSON
``{"error": <kind>, "message": <text>}`` with the status the core error carries;
an unexpected exception is logged and answered 500 without a stack trace.
"""

from __future__ import annotations

import json
from datetime import datetime
from http import HTTPStatus
from typing import Annotated, Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError as RouteNotFound
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import console, runtime
from agent_memory.access import check_access
from agent_memory.errors import AgentMemoryError, ForbiddenError, InvalidInputError, NotFoundError
from agent_memory.model import CorrectionRequest, RecallRequest, RememberRequest, WorkingSetRequest
from agent_memory.portability import FORMAT, export_page
from agent_memory.portability.records import ImportRequest
from agent_memory.queue import IndexJob
from lambdas import TRACED_MODULES

logger = Logger(service="agent-memory-api")
tracer = Tracer(service="agent-memory-api", patch_modules=TRACED_MODULES)
metrics = Metrics(namespace="AgentMemory", service="api")
app = APIGatewayRestResolver(enable_validation=True)
app.enable_swagger(path="/swagger", title="agent-memory", version="1")


def _key_binding(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """Enforce which users the caller's API key may act for (``api_key_users``)."""
    bindings = runtime.settings().api_key_users
    if bindings:
        event = app.current_event
        key = event.request_context.identity.api_key
        try:
            check_access(bindings.get(key) if key else None, event.path,
                         event.multi_value_query_string_parameters or {}, event.decoded_body)
        except ForbiddenError as exc:
            return _error(HTTPStatus.FORBIDDEN, "ForbiddenError", str(exc))
    return next_middleware(app)


app.use(middlewares=[_key_binding])


def _error(status: int, kind: str, message: str, details: Any = None) -> Response[Any]:
    body: dict[str, Any] = {"error": kind, "message": message}
    if details is not None:
        body["details"] = details
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)


@app.exception_handler(AgentMemoryError)
def _core_error(exc: AgentMemoryError) -> Response[Any]:
    if exc.status_code >= 500:
        logger.warning("backend unavailable", extra={"error": str(exc)})
    return _error(exc.status_code, type(exc).__name__, str(exc))


@app.exception_handler(RequestValidationError)
def _validation_error(exc: RequestValidationError) -> Response[Any]:
    details = [{"loc": list(e.get("loc", [])), "msg": str(e.get("msg", "")).removeprefix("Value error, ")}
               for e in exc.errors()]
    summary = "; ".join(f"{'.'.join(str(x) for x in d['loc'])}: {d['msg']}" for d in details)
    return _error(HTTPStatus.UNPROCESSABLE_ENTITY, "ValidationError", summary or "invalid request", details)


@app.exception_handler(RouteNotFound)
def _no_route(exc: RouteNotFound) -> Response[Any]:
    return _error(HTTPStatus.NOT_FOUND, "NotFound", "no such route")


@app.exception_handler(Exception)
def _unexpected(exc: Exception) -> Response[Any]:
    logger.exception("unhandled error")
    return _error(HTTPStatus.INTERNAL_SERVER_ERROR, "InternalError", "internal error; see the service logs")


@app.get("/health")
def health() -> Response[Any]:
    result = runtime.memory().health()
    return Response(status_code=200 if result["status"] == "ok" else 503,
                    content_type=content_types.APPLICATION_JSON, body=result)


@app.get("/console")
def console_root() -> Response[str]:
    """The memory console (see agent_memory/console). Relative redirect, so it works under a stage."""
    return Response(status_code=302, headers={"Location": "console/index.html"}, body="")


@app.get("/console/<name>")
def console_file(name: str) -> Response[str]:
    found = console.asset(name)
    if found is None:
        raise NotFoundError(f"no console file {name[:60]!r}")
    text, ctype = found
    return Response(status_code=200, content_type=ctype, body=text,
                    headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff",
                             "Content-Security-Policy": "default-src 'self'; connect-src 'self'; "
                                                        "frame-ancestors 'none'"})


@app.get("/openapi.json")
def openapi() -> Response[str]:
    return Response(status_code=200, content_type=content_types.APPLICATION_JSON,
                    body=app.get_openapi_json_schema(title="agent-memory", version="1"))


@app.post("/v1/memories")
def remember(body: RememberRequest) -> Response[Any]:
    """Store the originals, enqueue indexing, answer 202 at once."""
    m = runtime.memory()
    req = m.validate_remember(**body.model_dump())
    originals = m.stage(req)
    if not originals:
        return Response(status_code=200, content_type=content_types.APPLICATION_JSON,
                        body={"memory_ids": [], "status": "nothing_to_remember"})
    message_id = runtime.write_queue().send(IndexJob(req.user_id, [o.memory_id for o in originals]))
    metrics.add_metric(name="MemoriesAccepted", unit="Count", value=len(originals))
    return Response(status_code=202, content_type=content_types.APPLICATION_JSON,
                    body={"memory_ids": [o.memory_id for o in originals], "status": "queued",
                          "message_id": message_id})


@app.post("/v1/recall")
def recall(body: RecallRequest) -> dict[str, Any]:
    """The recall log entry is written while the answer is serialized; the handler returns only
    once it is in the store (a Lambda is frozen after returning: a write still queued could be
    lost)."""
    memory = runtime.memory()
    answer = memory.recall_request(body).to_dict()
    memory.recall_log.flush()
    return answer


AgentId = Annotated[str | None, Query(description="Act as this agent: its memories and the user's shared ones.")]
RunId = Annotated[str | None, Query(description="Narrow to this run: its memories and those of no run.")]


@app.get("/v1/memories/<memory_id>")
def get_memory(memory_id: str, user_id: Annotated[str | None, Query()] = None, agent_id: AgentId = None,
               run_id: RunId = None) -> dict[str, Any]:
    return runtime.memory().get(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)


@app.delete("/v1/memories/<memory_id>")
def forget(memory_id: str, user_id: Annotated[str | None, Query()] = None, agent_id: AgentId = None,
           run_id: RunId = None) -> dict[str, Any]:
    rec = runtime.memory().forget(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
    return {"memory_id": rec.id, "deleted_at": rec.deleted_at, "record": rec.model_dump(mode="json")}


@app.post("/v1/memories/<memory_id>/restore")
def restore(memory_id: str, user_id: Annotated[str | None, Query()] = None, agent_id: AgentId = None,
            run_id: RunId = None) -> dict[str, Any]:
    rec = runtime.memory().restore(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
    return {"memory_id": rec.id, "deleted_at": None, "record": rec.model_dump(mode="json")}


@app.post("/v1/memories/<memory_id>/correct")
def correct(memory_id: str, body: CorrectionRequest, user_id: Annotated[str | None, Query()] = None,
            agent_id: AgentId = None, run_id: RunId = None) -> dict[str, Any]:
    """Overrule the change detector on this memory (see ``Memory.correct``)."""
    rec = runtime.memory().correct(memory_id, user_id=user_id, decision=body.decision, of=body.of,
                                   agent_id=agent_id, run_id=run_id)
    return {"memory_id": rec.id, "record": rec.model_dump(mode="json")}


@app.get("/v1/users")
def users(limit: Annotated[int, Query(ge=1, le=10_000)] = 1000) -> dict[str, Any]:
    """Users with memories and their counts (for the console)."""
    return {"users": runtime.memory().users(limit=limit)}


@app.get("/v1/users/<user_id>/memories")
def timeline(user_id: str, include_inactive: Annotated[bool, Query()] = False,
             include_deleted: Annotated[bool, Query()] = False,
             include_expired: Annotated[bool, Query(description="Also memories past expires_at that the "
                                                                "daily job has not erased yet.")] = False,
             limit: Annotated[int, Query(ge=1, le=1000)] = 50,
             before: Annotated[datetime | None, Query()] = None, agent_id: AgentId = None,
             run_id: RunId = None,
             filters: Annotated[str | None, Query(max_length=8_000, description=(
                 "A JSON object of conditions, ANDed, as `filters` of POST /v1/recall (e.g. "
                 '{"metadata": {"project": "apollo", "priority": {"gte": 2}}})'))] = None) -> dict[str, Any]:
    if before is not None and before.tzinfo is None:
        raise InvalidInputError("before must be timezone-aware")
    rows = runtime.memory().timeline(user_id, include_inactive=include_inactive,
                                     include_deleted=include_deleted, limit=limit, before=before,
                                     agent_id=agent_id, run_id=run_id, filters=filters,
                                     include_expired=include_expired)
    items = [r.model_dump(mode="json") for r in rows]
    return {"memories": items, "next_before": items[-1]["created_at"] if len(items) == limit else None}


@app.get("/v1/topics/<topic_id>/versions")
def versions(topic_id: str, user_id: Annotated[str, Query()], agent_id: AgentId = None,
             run_id: RunId = None) -> dict[str, Any]:
    rows = runtime.memory().versions(topic_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
    return {"topic_id": topic_id, "versions": [r.model_dump(mode="json") for r in rows]}


@app.delete("/v1/users/<user_id>")
def erase_user(user_id: str,
               agent_id: Annotated[str | None, Query(description="Erase only this agent's memories.")] = None,
               run_id: Annotated[str | None, Query(description="Erase only this run's memories.")] = None,
               ) -> dict[str, Any]:
    """Erasure: every memory of the user, or with ``agent_id`` / ``run_id`` exactly that scope's."""
    return {"user_id": user_id, "agent_id": agent_id, "run_id": run_id,
            "erased": runtime.memory().erase_user(user_id, agent_id=agent_id, run_id=run_id)}


@app.get("/v1/users/<user_id>/export")
def export(user_id: str, after: Annotated[str | None, Query()] = None,
           limit: Annotated[int, Query(ge=1, le=1000)] = 500) -> Response[str]:
    """One page of the user's export as JSON Lines (format in ``X-Export-Format``); the next page
    starts after the memory id in ``X-Next-After`` (absent on the last page)."""
    page = export_page(runtime.memory(), user_id, after, limit)
    headers = {"X-Export-Format": FORMAT, "X-Archived": str(len(page.archived))}
    if page.next_after:
        headers["X-Next-After"] = page.next_after
    return Response(status_code=200, content_type="application/x-ndjson", headers=headers,
                    body="".join(json.dumps(r, ensure_ascii=False) + "\n" for r in page.records))


@app.post("/v1/users/<user_id>/import")
def import_(user_id: str, body: ImportRequest) -> dict[str, Any]:
    """Import a batch of records for this user, indexed before the answer (the judgement models
    are not re-run on an import). A bad record refuses the whole batch with its position."""
    report = runtime.memory().import_records(user_id, body.records, from_format=body.from_format)
    return {"user_id": user_id, **report}


@app.get("/v1/users/<user_id>/recalls")
def recalls(user_id: str, limit: Annotated[int, Query(ge=1, le=500)] = 50) -> dict[str, Any]:
    return {"recalls": runtime.memory().recalls(user_id, limit=limit)}


WORKING = "/v1/users/<user_id>/sessions/<session_id>/working"


@app.put(WORKING + "/<key>")
def working_set(user_id: str, session_id: str, key: str, body: WorkingSetRequest) -> dict[str, Any]:
    """Working memory: per-session task state with a time to live, never indexed."""
    runtime.memory().working(session_id, user_id=user_id).set(key, body.value, ttl_s=body.ttl_s)
    return {"key": key, "stored": True}


@app.get(WORKING + "/<key>")
def working_get(user_id: str, session_id: str, key: str) -> dict[str, Any]:
    missing = object()
    value = runtime.memory().working(session_id, user_id=user_id).get(key, missing)
    if value is missing:
        raise NotFoundError(f"no working-memory entry {key!r} in this session (or it expired)")
    return {"key": key, "value": value}


@app.delete(WORKING + "/<key>")
def working_delete(user_id: str, session_id: str, key: str) -> dict[str, Any]:
    return {"key": key, "deleted": runtime.memory().working(session_id, user_id=user_id).delete(key)}


@app.get(WORKING)
def working_items(user_id: str, session_id: str) -> dict[str, Any]:
    return {"items": runtime.memory().working(session_id, user_id=user_id).items()}


@app.delete(WORKING)
def working_clear(user_id: str, session_id: str) -> dict[str, Any]:
    return {"cleared": runtime.memory().working(session_id, user_id=user_id).clear()}


@app.post("/v1/selfcheck")
def selfcheck() -> Response[Any]:
    result = runtime.memory().selfcheck()
    metrics.add_metric(name="SelfCheckSuccess", unit="Count", value=1 if result["ok"] else 0)
    return Response(status_code=200 if result["ok"] else 503,
                    content_type=content_types.APPLICATION_JSON, body=result)


def _unsupported_media_type(event: dict[str, Any]) -> dict[str, Any] | None:
    """A body must be JSON: anything else is refused before routing (Powertools would try to
    read a form-encoded body as form fields)."""
    if not event.get("body"):
        return None
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    ctype = headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "application/json":
        return None
    return {"statusCode": 415, "headers": {"Content-Type": "application/json"},
            "body": json.dumps({"error": "UnsupportedMediaType",
                                "message": "send the body as JSON with Content-Type: application/json"})}


def _too_deep(event: dict[str, Any]) -> dict[str, Any] | None:
    """A JSON body nested deeper than the parser's recursion limit (thousands of levels) is refused
    here as a 422; Powertools' parser would raise ``RecursionError`` and the answer would be a 500.
    Validation refuses anything nested deeper than its limit (metadata: 5 levels) anyway."""
    body = event.get("body") or ""
    if body.count("{") + body.count("[") < 200:  # cheap: most bodies cannot be deep
        return None
    try:
        json.loads(body)
    except RecursionError:
        return {"statusCode": 422, "headers": {"Content-Type": "application/json"},
                "body": json.dumps({"error": "ValidationError",
                                    "message": "the JSON body is nested too deeply (metadata: max depth 5)"})}
    except ValueError:
        return None  # not JSON: the resolver answers that
    return None


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    refused = _unsupported_media_type(event) or _too_deep(event)
    return refused if refused is not None else app.resolve(event, context)
