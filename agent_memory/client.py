"""HTTP clients for the memory API: :class:`MemoryClient` and :class:`AsyncMemoryClient`.

They have the methods and keyword arguments of the in-process :class:`agent_memory.Memory`
and return the same types, so code moves between the two by changing one line. Each call
is described once (:class:`_Api`: route, body, how to read the answer) and executed by a
sync or an async transport, so the two clients cannot drift apart.

Decisions:
- Requests are validated with the service's own Pydantic models before they are sent, so
  bad input fails at once with the message the server would give.
- ``remember`` always sends an ``idempotency_key`` (a random one unless you give yours): a
  retried POST after a lost answer then returns the same memory instead of a second one.
- The API indexes asynchronously (202, then the ingest worker). ``remember(wait=True)``, the
  default, polls until the new memories can be read back, so a recall right after sees
  them, as with ``Memory``; pass ``wait=False`` in hot paths.
- 429, 502, 503, 504 and connection errors are retried with exponential backoff and jitter
  (``Retry-After`` honoured); other errors raise at once as the library's own exceptions
  (:class:`NotFoundError`, :class:`InvalidInputError`, ...), so ``except`` clauses work
  for both ``Memory`` and the clients.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

import httpx

from agent_memory import errors
from agent_memory.conditions import Filters, as_filters
from agent_memory.ids import validate_id, validate_memory_id
from agent_memory.model import (
    CorrectionRequest,
    IndexRecord,
    Message,
    RecallHit,
    RecallRequest,
    RecallResult,
    RememberRequest,
    WorkingSetRequest,
    validated,
)
from agent_memory.portability.importer import parse_records
from agent_memory.portability.records import ImportRequest

T = TypeVar("T")
RETRY_STATUSES = frozenset({429, 502, 503, 504})
_ERRORS: dict[str, type[errors.AgentMemoryError]] = {
    cls.__name__: cls for cls in (errors.InvalidInputError, errors.ContentTooLargeError, errors.NotFoundError,
                                  errors.ConflictError, errors.ModelMismatchError,
                                  errors.BackendUnavailableError, errors.AuthenticationError,
                                  errors.ForbiddenError, errors.ArchivedError)}
_BY_STATUS: dict[int, type[errors.AgentMemoryError]] = {
    400: errors.InvalidInputError, 401: errors.AuthenticationError, 403: errors.AuthenticationError,
    404: errors.NotFoundError, 409: errors.ConflictError, 413: errors.ContentTooLargeError,
    415: errors.InvalidInputError, 422: errors.InvalidInputError, 429: errors.BackendUnavailableError,
}


def error_from_response(status: int, body: Any) -> errors.AgentMemoryError:
    """The library exception for an API error answer ``{"error": kind, "message": text}``."""
    kind = body.get("error") if isinstance(body, dict) else None
    message = body.get("message") if isinstance(body, dict) else None
    cls = _ERRORS.get(str(kind)) or _BY_STATUS.get(status) or (
        errors.BackendUnavailableError if status >= 500 else errors.AgentMemoryError)
    return cls(f"HTTP {status}: {message or body or 'no message'}")


@dataclass(frozen=True)
class _Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[Any], T]
    params: dict[str, Any] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    raw: bool = False
    """``parse`` gets the :class:`httpx.Response` itself (a JSON Lines body, a header to read)."""


def _records(rows: list[dict[str, Any]]) -> list[IndexRecord]:
    return [IndexRecord.model_validate(r) for r in rows]


def _recall_result(data: dict[str, Any]) -> RecallResult:
    result = RecallResult([RecallHit.model_validate(h) for h in data["memories"]], data.get("context", ""),
                          data.get("recall_id", ""), data.get("query", ""), int(data.get("rehydrated", 0)))
    result.rewritten_query = data.get("rewritten_query")
    result.gate = data.get("gate")
    return result


def _export_page(response: httpx.Response) -> tuple[list[dict[str, Any]], str | None]:
    records = [json.loads(line) for line in response.text.splitlines() if line.strip()]
    return records, response.headers.get("x-next-after")


def _import_batches(user_id: str, records: Sequence[dict[str, Any]], from_format: str,
                    batch_size: int) -> list[list[dict[str, Any]]]:
    """Every record checked here first, with the server's own rules, so a bad one stops the import
    before any batch is sent (the server checks each batch whole again)."""
    from agent_memory.portability.from_mem0 import mem0_converter

    convert = mem0_converter(user_id) if from_format == "mem0" else None
    parse_records(((f"record {i}", dict(r)) for i, r in enumerate(records, 1)), user_id=user_id, convert=convert)
    return [list(records[i:i + batch_size]) for i in range(0, len(records), batch_size)]


def _sum_reports(reports: list[dict[str, Any]]) -> dict[str, int]:
    return {k: sum(int(r[k]) for r in reports) for k in ("records", "created", "updated", "unchanged", "indexed")}


def _user_param(user_id: str | None, agent_id: str | None = None, run_id: str | None = None) -> dict[str, Any]:
    """Query parameters naming the user and the scope, each checked before anything is sent."""
    named = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    return {k: validate_id(v, k) for k, v in named.items() if v is not None}


class _Api:
    """Every API call as data: the route, the validated body, how to read the answer."""

    @staticmethod
    def remember(user_id: str, content: str | None, messages: Sequence[dict[str, Any] | Message] | None,
                 **fields: Any) -> _Call[list[str]]:
        fields["idempotency_key"] = fields.get("idempotency_key") or uuid.uuid4().hex
        req: RememberRequest = validated(RememberRequest, user_id=user_id, content=content,
                                         messages=messages, **fields)
        return _Call("POST", "/v1/memories", lambda d: list(d["memory_ids"]),
                     body=req.model_dump(mode="json", exclude_none=True))

    @staticmethod
    def recall(user_id: str, query: str, **fields: Any) -> _Call[RecallResult]:
        if fields.get("memory_types") is not None:
            fields["memory_types"] = list(fields["memory_types"])
        req: RecallRequest = validated(RecallRequest, user_id=user_id, query=query, **fields)
        return _Call("POST", "/v1/recall", _recall_result, body=req.model_dump(mode="json", exclude_none=True))

    @staticmethod
    def get(memory_id: str, user_id: str | None, **scope: str | None) -> _Call[dict[str, Any]]:
        return _Call("GET", f"/v1/memories/{validate_memory_id(memory_id)}", dict, _user_param(user_id, **scope))

    @staticmethod
    def forget(memory_id: str, user_id: str | None, **scope: str | None) -> _Call[IndexRecord]:
        return _Call("DELETE", f"/v1/memories/{validate_memory_id(memory_id)}",
                     lambda d: IndexRecord.model_validate(d["record"]), _user_param(user_id, **scope))

    @staticmethod
    def restore(memory_id: str, user_id: str | None, **scope: str | None) -> _Call[IndexRecord]:
        return _Call("POST", f"/v1/memories/{validate_memory_id(memory_id)}/restore",
                     lambda d: IndexRecord.model_validate(d["record"]), _user_param(user_id, **scope))

    @staticmethod
    def correct(memory_id: str, user_id: str | None, decision: str, of: str | None,
                **scope: str | None) -> _Call[IndexRecord]:
        req: CorrectionRequest = validated(CorrectionRequest, decision=decision, of=of)
        return _Call("POST", f"/v1/memories/{validate_memory_id(memory_id)}/correct",
                     lambda d: IndexRecord.model_validate(d["record"]), _user_param(user_id, **scope),
                     body=req.model_dump(mode="json", exclude_none=True))

    @staticmethod
    def timeline(user_id: str, include_inactive: bool, include_deleted: bool, limit: int,
                 before: datetime | None, filters: Filters | dict[str, Any] | str | None = None,
                 include_expired: bool = False, **scope: str | None) -> _Call[list[IndexRecord]]:
        params: dict[str, Any] = {"include_inactive": include_inactive, "include_deleted": include_deleted,
                                  "limit": limit, **_user_param(None, **scope)}
        if include_expired:
            params["include_expired"] = True
        if before is not None:
            params["before"] = before.isoformat()
        checked = as_filters(filters)
        if checked is not None:
            params["filters"] = checked.model_dump_json(exclude_none=True)
        return _Call("GET", f"/v1/users/{validate_id(user_id, 'user_id')}/memories",
                     lambda d: _records(d["memories"]), params)

    @staticmethod
    def versions(topic_id: str, user_id: str, **scope: str | None) -> _Call[list[IndexRecord]]:
        return _Call("GET", f"/v1/topics/{validate_id(topic_id, 'topic_id')}/versions",
                     lambda d: _records(d["versions"]), _user_param(user_id, **scope))

    @staticmethod
    def recalls(user_id: str, limit: int) -> _Call[list[dict[str, Any]]]:
        return _Call("GET", f"/v1/users/{validate_id(user_id, 'user_id')}/recalls",
                     lambda d: list(d["recalls"]), {"limit": limit})

    @staticmethod
    def users(limit: int) -> _Call[list[dict[str, Any]]]:
        return _Call("GET", "/v1/users", lambda d: list(d["users"]), {"limit": limit})

    @staticmethod
    def export_page(user_id: str, after: str | None, limit: int) -> _Call[tuple[list[dict[str, Any]], str | None]]:
        params: dict[str, Any] = {"limit": limit} if after is None else {"limit": limit, "after": after}
        return _Call("GET", f"/v1/users/{validate_id(user_id, 'user_id')}/export", _export_page, params, raw=True)

    @staticmethod
    def import_records(user_id: str, records: list[dict[str, Any]], from_format: str) -> _Call[dict[str, Any]]:
        body = validated(ImportRequest, records=records, from_format=from_format).model_dump(mode="json")
        return _Call("POST", f"/v1/users/{validate_id(user_id, 'user_id')}/import", dict, body=body)

    @staticmethod
    def erase_user(user_id: str, **scope: str | None) -> _Call[dict[str, int]]:
        return _Call("DELETE", f"/v1/users/{validate_id(user_id, 'user_id')}", lambda d: dict(d["erased"]),
                     _user_param(None, **scope))

    @staticmethod
    def _working(user_id: str, session_id: str, key: str | None = None) -> str:
        path = f"/v1/users/{validate_id(user_id, 'user_id')}/sessions/{validate_id(session_id, 'session_id')}/working"
        return path if key is None else f"{path}/{validate_id(key, 'key')}"

    @staticmethod
    def working_set(user_id: str, session_id: str, key: str, value: Any, ttl_s: float | None) -> _Call[None]:
        body = validated(WorkingSetRequest, value=value, ttl_s=ttl_s).model_dump(mode="json", exclude_none=True)
        return _Call("PUT", _Api._working(user_id, session_id, key), lambda d: None, body=body)

    @staticmethod
    def working_get(user_id: str, session_id: str, key: str) -> _Call[Any]:
        return _Call("GET", _Api._working(user_id, session_id, key), lambda d: d["value"])

    @staticmethod
    def working_delete(user_id: str, session_id: str, key: str) -> _Call[bool]:
        return _Call("DELETE", _Api._working(user_id, session_id, key), lambda d: bool(d["deleted"]))

    @staticmethod
    def working_items(user_id: str, session_id: str) -> _Call[dict[str, Any]]:
        return _Call("GET", _Api._working(user_id, session_id), lambda d: dict(d["items"]))

    @staticmethod
    def working_clear(user_id: str, session_id: str) -> _Call[int]:
        return _Call("DELETE", _Api._working(user_id, session_id), lambda d: int(d["cleared"]))

    @staticmethod
    def selfcheck() -> _Call[dict[str, Any]]:
        return _Call("POST", "/v1/selfcheck", dict)

    @staticmethod
    def health() -> _Call[dict[str, Any]]:
        return _Call("GET", "/health", dict)


def _remember_fields(session_id: str, memory_type: str, importance: float | None, topic_id: str | None,
                     source: str, metadata: dict[str, Any] | None, created_at: datetime | None,
                     idempotency_key: str | None, context: str | None, **extra: Any) -> dict[str, Any]:
    return {"session_id": session_id, "memory_type": memory_type, "importance": importance,
            "topic_id": topic_id, "source": source, "metadata": metadata or {}, "created_at": created_at,
            "idempotency_key": idempotency_key, "context": context, **extra}


class _Base:
    def __init__(self, base_url: str, api_key: str | None, *, timeout: float, retries: int,
                 backoff: float, index_wait: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.backoff = backoff
        self.index_wait = index_wait
        self._headers = {"x-api-key": api_key} if api_key else {}
        self._timeout = timeout

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        after = response.headers.get("retry-after") if response is not None else None
        if after and after.isdigit():
            return min(float(after), 30.0)
        return float(min(self.backoff * (2 ** attempt), 5.0) * (0.5 + random.random() / 2))

    def _result(self, call: _Call[T], response: httpx.Response) -> T:
        if call.raw and response.status_code < 400:
            return call.parse(response)
        try:
            data = response.json()
        except ValueError:
            data = response.text
        if response.status_code >= 400:
            raise error_from_response(response.status_code, data)
        return call.parse(data)

    def _retryable(self, response: httpx.Response | None, attempt: int) -> bool:
        return attempt < self.retries and (response is None or response.status_code in RETRY_STATUSES)


class MemoryClient(_Base):
    """The memory API over HTTP, synchronous. ``MemoryClient("http://127.0.0.1:8000", key)``."""

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 10.0, retries: int = 3,
                 backoff: float = 0.2, index_wait: float = 30.0, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(base_url, api_key, timeout=timeout, retries=retries, backoff=backoff, index_wait=index_wait)
        self._http = httpx.Client(base_url=self.base_url, headers=self._headers, timeout=timeout,
                                  transport=transport)

    def _run(self, call: _Call[T]) -> T:
        attempt = 0
        while True:
            response: httpx.Response | None = None
            try:
                response = self._http.request(call.method, call.path, params=call.params or None, json=call.body)
            except httpx.TransportError as exc:
                if not self._retryable(None, attempt):
                    raise errors.BackendUnavailableError(f"cannot reach {self.base_url}: {exc}") from exc
            if response is not None and not self._retryable(response, attempt):
                return self._result(call, response)
            time.sleep(self._delay(attempt, response))
            attempt += 1

    def remember(self, user_id: str, content: str | None = None, *,
                 messages: Sequence[dict[str, Any] | Message] | None = None, session_id: str = "default",
                 memory_type: str = "fact", importance: float | None = None, topic_id: str | None = None,
                 source: str = "user_said", metadata: dict[str, Any] | None = None,
                 created_at: datetime | None = None, idempotency_key: str | None = None,
                 context: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                 expires_at: datetime | None = None, ttl_days: float | None = None,
                 wait: bool = True) -> list[str]:
        ids = self._run(_Api.remember(user_id, content, messages, **_remember_fields(
            session_id, memory_type, importance, topic_id, source, metadata, created_at, idempotency_key, context,
            agent_id=agent_id, run_id=run_id, expires_at=expires_at, ttl_days=ttl_days)))
        if wait:
            deadline = time.monotonic() + self.index_wait
            for mid in ids:
                while not self._indexed(mid, user_id):
                    if time.monotonic() > deadline:
                        raise errors.BackendUnavailableError(
                            f"memory {mid} is stored but not indexed after {self.index_wait:.0f} s; it will be "
                            "indexed when the ingest worker catches up")
                    time.sleep(0.1)
        return ids

    def _indexed(self, memory_id: str, user_id: str) -> bool:
        try:
            self.get(memory_id, user_id=user_id)
            return True
        except errors.NotFoundError:
            return False

    def recall(self, user_id: str, query: str, *, top_k: int | None = None, min_score: float | None = None,
               memory_types: Sequence[str] | None = None, include_inferred: bool = False,
               min_importance: float | None = None,
               conversation: Sequence[dict[str, Any] | Message] | None = None,
               consistency: str | None = None, log: bool = True, include_cold: bool = False,
               gate: bool | None = None, agent_id: str | None = None, run_id: str | None = None,
               filters: Filters | dict[str, Any] | None = None, fetch_originals: bool = False) -> RecallResult:
        return self._run(_Api.recall(user_id, query, top_k=top_k, min_score=min_score, memory_types=memory_types,
                                     include_inferred=include_inferred, min_importance=min_importance,
                                     conversation=conversation, consistency=consistency, log=log,
                                     include_cold=include_cold, gate=gate, agent_id=agent_id, run_id=run_id,
                                     filters=filters, fetch_originals=fetch_originals))

    def get(self, memory_id: str, user_id: str | None = None, *, agent_id: str | None = None,
            run_id: str | None = None) -> dict[str, Any]:
        return self._run(_Api.get(memory_id, user_id, agent_id=agent_id, run_id=run_id))

    def forget(self, memory_id: str, user_id: str | None = None, *, agent_id: str | None = None,
            run_id: str | None = None) -> IndexRecord:
        return self._run(_Api.forget(memory_id, user_id, agent_id=agent_id, run_id=run_id))

    def restore(self, memory_id: str, user_id: str | None = None, *, agent_id: str | None = None,
            run_id: str | None = None) -> IndexRecord:
        return self._run(_Api.restore(memory_id, user_id, agent_id=agent_id, run_id=run_id))

    def correct(self, memory_id: str, user_id: str | None = None, *, decision: str, of: str | None = None,
                agent_id: str | None = None, run_id: str | None = None) -> IndexRecord:
        return self._run(_Api.correct(memory_id, user_id, decision, of, agent_id=agent_id, run_id=run_id))

    def timeline(self, user_id: str, *, include_inactive: bool = False, include_deleted: bool = False,
                 limit: int = 50, before: datetime | None = None, agent_id: str | None = None,
                 run_id: str | None = None, filters: Filters | dict[str, Any] | str | None = None,
                 include_expired: bool = False) -> list[IndexRecord]:
        return self._run(_Api.timeline(user_id, include_inactive, include_deleted, limit, before, filters,
                                          include_expired, agent_id=agent_id, run_id=run_id))

    def versions(self, topic_id: str, *, user_id: str, agent_id: str | None = None,
                 run_id: str | None = None) -> list[IndexRecord]:
        return self._run(_Api.versions(topic_id, user_id, agent_id=agent_id, run_id=run_id))

    def recalls(self, user_id: str, limit: int = 50) -> list[dict[str, Any]]:
        return self._run(_Api.recalls(user_id, limit))

    def users(self, limit: int = 1000) -> list[dict[str, Any]]:
        return self._run(_Api.users(limit))

    def erase_user(self, user_id: str, *, agent_id: str | None = None,
                   run_id: str | None = None) -> dict[str, int]:
        return self._run(_Api.erase_user(user_id, agent_id=agent_id, run_id=run_id))

    def export(self, user_id: str, page_size: int = 500) -> Iterator[dict[str, Any]]:
        """Every export record of the user (``agent-memory/v1``), fetched a page at a time."""
        after: str | None = None
        while True:
            records, after = self._run(_Api.export_page(user_id, after, page_size))
            yield from records
            if after is None:
                return

    def import_records(self, user_id: str, records: Sequence[dict[str, Any]], *, from_format: str = "agent-memory",
                       batch_size: int = 200) -> dict[str, int]:
        """Import records (or mem0 items) for the user, in batches; counts summed over batches."""
        batches = _import_batches(user_id, records, from_format, batch_size)
        return _sum_reports([self._run(_Api.import_records(user_id, b, from_format)) for b in batches])

    def working(self, session_id: str, user_id: str = "default") -> RemoteWorkingMemory:
        """The session's working memory, kept by the service (DynamoDB on AWS)."""
        return RemoteWorkingMemory(self, user_id, session_id)

    def selfcheck(self) -> dict[str, Any]:
        return self._run(_Api.selfcheck())

    def health(self) -> dict[str, Any]:
        return self._run(_Api.health())

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMemoryClient(_Base):
    """The memory API over HTTP for asyncio agents; the same methods as :class:`MemoryClient`, awaited."""

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 10.0, retries: int = 3,
                 backoff: float = 0.2, index_wait: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(base_url, api_key, timeout=timeout, retries=retries, backoff=backoff, index_wait=index_wait)
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=self._headers, timeout=timeout,
                                       transport=transport)

    async def _run(self, call: _Call[T]) -> T:
        attempt = 0
        while True:
            response: httpx.Response | None = None
            try:
                response = await self._http.request(call.method, call.path, params=call.params or None,
                                                    json=call.body)
            except httpx.TransportError as exc:
                if not self._retryable(None, attempt):
                    raise errors.BackendUnavailableError(f"cannot reach {self.base_url}: {exc}") from exc
            if response is not None and not self._retryable(response, attempt):
                return self._result(call, response)
            await asyncio.sleep(self._delay(attempt, response))
            attempt += 1

    async def remember(self, user_id: str, content: str | None = None, *,
                       messages: Sequence[dict[str, Any] | Message] | None = None, session_id: str = "default",
                       memory_type: str = "fact", importance: float | None = None, topic_id: str | None = None,
                       source: str = "user_said", metadata: dict[str, Any] | None = None,
                       created_at: datetime | None = None, idempotency_key: str | None = None,
                       context: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                       expires_at: datetime | None = None, ttl_days: float | None = None,
                       wait: bool = True) -> list[str]:
        ids = await self._run(_Api.remember(user_id, content, messages, **_remember_fields(
            session_id, memory_type, importance, topic_id, source, metadata, created_at, idempotency_key, context,
            agent_id=agent_id, run_id=run_id, expires_at=expires_at, ttl_days=ttl_days)))
        if wait:
            deadline = time.monotonic() + self.index_wait
            for mid in ids:
                while not await self._indexed(mid, user_id):
                    if time.monotonic() > deadline:
                        raise errors.BackendUnavailableError(
                            f"memory {mid} is stored but not indexed after {self.index_wait:.0f} s; it will be "
                            "indexed when the ingest worker catches up")
                    await asyncio.sleep(0.1)
        return ids

    async def _indexed(self, memory_id: str, user_id: str) -> bool:
        try:
            await self.get(memory_id, user_id=user_id)
            return True
        except errors.NotFoundError:
            return False

    async def recall(self, user_id: str, query: str, *, top_k: int | None = None, min_score: float | None = None,
                     memory_types: Sequence[str] | None = None, include_inferred: bool = False,
                     min_importance: float | None = None,
                     conversation: Sequence[dict[str, Any] | Message] | None = None,
                     consistency: str | None = None, log: bool = True,
                     include_cold: bool = False, gate: bool | None = None, agent_id: str | None = None,
                     run_id: str | None = None, filters: Filters | dict[str, Any] | None = None) -> RecallResult:
        return await self._run(_Api.recall(
            user_id, query, top_k=top_k, min_score=min_score, memory_types=memory_types,
            include_inferred=include_inferred, min_importance=min_importance, conversation=conversation,
            consistency=consistency, log=log, include_cold=include_cold, gate=gate, agent_id=agent_id, run_id=run_id,
            filters=filters))

    async def get(self, memory_id: str, user_id: str | None = None, *, agent_id: str | None = None,
                  run_id: str | None = None) -> dict[str, Any]:
        return await self._run(_Api.get(memory_id, user_id, agent_id=agent_id, run_id=run_id))

    async def forget(self, memory_id: str, user_id: str | None = None, *, agent_id: str | None = None,
                  run_id: str | None = None) -> IndexRecord:
        return await self._run(_Api.forget(memory_id, user_id, agent_id=agent_id, run_id=run_id))

    async def restore(self, memory_id: str, user_id: str | None = None, *, agent_id: str | None = None,
                  run_id: str | None = None) -> IndexRecord:
        return await self._run(_Api.restore(memory_id, user_id, agent_id=agent_id, run_id=run_id))

    async def correct(self, memory_id: str, user_id: str | None = None, *, decision: str, of: str | None = None,
                      agent_id: str | None = None, run_id: str | None = None) -> IndexRecord:
        return await self._run(_Api.correct(memory_id, user_id, decision, of, agent_id=agent_id, run_id=run_id))

    async def timeline(self, user_id: str, *, include_inactive: bool = False, include_deleted: bool = False,
                       limit: int = 50, before: datetime | None = None, agent_id: str | None = None,
                       run_id: str | None = None, filters: Filters | dict[str, Any] | str | None = None,
                       include_expired: bool = False) -> list[IndexRecord]:
        return await self._run(_Api.timeline(user_id, include_inactive, include_deleted, limit, before, filters,
                                                include_expired, agent_id=agent_id, run_id=run_id))

    async def versions(self, topic_id: str, *, user_id: str, agent_id: str | None = None,
                       run_id: str | None = None) -> list[IndexRecord]:
        return await self._run(_Api.versions(topic_id, user_id, agent_id=agent_id, run_id=run_id))

    async def recalls(self, user_id: str, limit: int = 50) -> list[dict[str, Any]]:
        return await self._run(_Api.recalls(user_id, limit))

    async def users(self, limit: int = 1000) -> list[dict[str, Any]]:
        return await self._run(_Api.users(limit))

    async def erase_user(self, user_id: str, *, agent_id: str | None = None,
                         run_id: str | None = None) -> dict[str, int]:
        return await self._run(_Api.erase_user(user_id, agent_id=agent_id, run_id=run_id))

    async def export(self, user_id: str, page_size: int = 500) -> AsyncIterator[dict[str, Any]]:
        after: str | None = None
        while True:
            records, after = await self._run(_Api.export_page(user_id, after, page_size))
            for record in records:
                yield record
            if after is None:
                return

    async def import_records(self, user_id: str, records: Sequence[dict[str, Any]], *,
                             from_format: str = "agent-memory", batch_size: int = 200) -> dict[str, int]:
        batches = _import_batches(user_id, records, from_format, batch_size)
        return _sum_reports([await self._run(_Api.import_records(user_id, b, from_format)) for b in batches])

    def working(self, session_id: str, user_id: str = "default") -> AsyncRemoteWorkingMemory:
        return AsyncRemoteWorkingMemory(self, user_id, session_id)

    async def selfcheck(self) -> dict[str, Any]:
        return await self._run(_Api.selfcheck())

    async def health(self) -> dict[str, Any]:
        return await self._run(_Api.health())

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class RemoteWorkingMemory:
    """:class:`agent_memory.working.WorkingMemory` over HTTP: the same five methods."""

    def __init__(self, client: MemoryClient, user_id: str, session_id: str) -> None:
        self._c, self.user_id, self.session_id = client, user_id, session_id

    def set(self, key: str, value: Any, ttl_s: float | None = None) -> None:
        self._c._run(_Api.working_set(self.user_id, self.session_id, key, value, ttl_s))

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self._c._run(_Api.working_get(self.user_id, self.session_id, key))
        except errors.NotFoundError:
            return default

    def delete(self, key: str) -> bool:
        return self._c._run(_Api.working_delete(self.user_id, self.session_id, key))

    def items(self) -> dict[str, Any]:
        return self._c._run(_Api.working_items(self.user_id, self.session_id))

    def clear(self) -> int:
        return self._c._run(_Api.working_clear(self.user_id, self.session_id))


class AsyncRemoteWorkingMemory:
    def __init__(self, client: AsyncMemoryClient, user_id: str, session_id: str) -> None:
        self._c, self.user_id, self.session_id = client, user_id, session_id

    async def set(self, key: str, value: Any, ttl_s: float | None = None) -> None:
        await self._c._run(_Api.working_set(self.user_id, self.session_id, key, value, ttl_s))

    async def get(self, key: str, default: Any = None) -> Any:
        try:
            return await self._c._run(_Api.working_get(self.user_id, self.session_id, key))
        except errors.NotFoundError:
            return default

    async def delete(self, key: str) -> bool:
        return await self._c._run(_Api.working_delete(self.user_id, self.session_id, key))

    async def items(self) -> dict[str, Any]:
        return await self._c._run(_Api.working_items(self.user_id, self.session_id))

    async def clear(self) -> int:
        return await self._c._run(_Api.working_clear(self.user_id, self.session_id))
