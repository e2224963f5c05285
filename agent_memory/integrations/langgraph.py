"""LangGraph: a ``BaseStore`` on this service, so ``graph.compile(store=AgentMemoryStore(m))``
gives a graph long-term memory that outlives threads, with recall's ranking for ``search``.

Namespaces are scopes: ``(*prefix, user_id)`` is the user's shared memory and
``(*prefix, user_id, agent_id)`` one agent's (``prefix`` defaults to ``("memories",)``, LangGraph's
usual first label). Anything else is an ``InvalidNamespaceError``: a namespace must name its
user, so one graph run can only reach the users it names, and a search never spans users.

An item is a memory: the value's text (its first string field among ``text_fields``, else the
value as JSON) is what is embedded and recalled; the value itself is kept whole in the memory's
original (``provenance["value"]``, up to :data:`MAX_VALUE_CHARS` as JSON: a LangGraph value is any
JSON, which the bounded, filterable ``metadata`` is not meant to hold), and the namespace, key and
first put time in ``metadata["langgraph"]``. A key is
a topic (``lg-`` + a hash of agent and key), so a ``put`` on an existing key is a new version that
supersedes the old one (history stays, as everywhere in this service), ``get`` answers the newest
version and ``delete`` forgets it. Puts are written as exact originals through the import path:
a put is the caller's explicit value for a key, not a statement for the duplicate and
change models to judge.

``search`` with a query is a recall (gate off, no similarity floor, agent-inferred memories
included) narrowed to the namespace; without a query it lists the newest items. ``filter``
(``{"k": v}``, ``{"k": {"$gte": 3}}``, ...) applies to the items' values. ``index=False`` is
accepted and ignored (every memory is searchable); TTLs are not supported (``supports_ttl`` is
False, so LangGraph refuses ``ttl=`` before it reaches the store).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from agent_memory.errors import AgentMemoryError
from agent_memory.ids import new_memory_id, validate_id
from agent_memory.integrations.matching import check, matches
from agent_memory.integrations.tools import Backend
from agent_memory.model import IndexRecord, utcnow
from agent_memory.portability.records import FORMAT

KEY = "langgraph"
"""The metadata key holding an item's namespace, key and first put time."""
MAX_VALUE_CHARS = 32_000
"""A value's JSON size limit (the service's limit on a memory's content)."""
PAGE = 200


class AgentMemoryStore(BaseStore):
    """A LangGraph store whose items are this service's memories (see the module docstring)."""

    supports_ttl = False

    def __init__(self, memory: Backend, *, prefix: Sequence[str] = ("memories",),
                 text_fields: Sequence[str] = ("content", "memory", "text", "data"),
                 source: str = "agent_inferred", session_id: str = "langgraph", max_users: int = 1000) -> None:
        self.memory = memory
        self.prefix = tuple(prefix)
        self.text_fields = tuple(text_fields)
        self.source = source
        self.session_id = session_id
        self.max_users = max_users

    # --------------------------------------------------------------- batching
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, PutOp):
                self._put(op.namespace, op.key, op.value)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(self._namespaces(op))
            else:
                raise ValueError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The same operations off the event loop (the memory calls block)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # ----------------------------------------------------------------- scopes
    def _scope(self, namespace: tuple[str, ...], *, user_required: bool = True) -> tuple[str | None, str | None]:
        """``(user_id, agent_id)`` of a namespace (or a search prefix, which may stop at the user)."""
        n = len(self.prefix)
        rest = namespace[n:]
        if namespace[:n] != self.prefix or len(rest) > 2 or (user_required and not rest):
            raise InvalidNamespaceError(
                f"namespace {namespace!r} is not {(*self.prefix, '<user_id>')!r} or "
                f"{(*self.prefix, '<user_id>', '<agent_id>')!r}")
        try:
            user = validate_id(rest[0], "user_id") if rest else None
            agent = validate_id(rest[1], "agent_id") if len(rest) == 2 else None
        except AgentMemoryError as exc:
            raise InvalidNamespaceError(str(exc)) from None
        return user, agent

    def _namespace(self, user: str, agent: str | None) -> tuple[str, ...]:
        return (*self.prefix, user, *([agent] if agent else []))

    @staticmethod
    def _topic(agent: str | None, key: str) -> str:
        return "lg-" + hashlib.sha256(json.dumps([agent or "", key]).encode()).hexdigest()[:40]

    def _current(self, user: str, agent: str | None, key: str) -> IndexRecord | None:
        """The newest version of a key (deleted or not), or None."""
        rows = [r for r in self.memory.versions(self._topic(agent, key), user_id=user, agent_id=agent)
                if r.agent_id == agent]
        return max(rows, key=lambda r: (r.created_at, r.id)) if rows else None

    # -------------------------------------------------------------- operations
    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        user, agent = self._scope(namespace)
        assert user is not None
        row = self._current(user, agent, key)
        if row is None or row.deleted_at is not None or KEY not in row.metadata or (
                row.expires_at is not None and row.expires_at <= utcnow()):
            return None
        return self._item(row, self._value(row))

    def _value(self, row: IndexRecord) -> Any:
        original = self.memory.get(row.id, user_id=row.user_id)["original"] or {}
        return original.get("provenance", {}).get("value")

    def _put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any] | None) -> None:
        user, agent = self._scope(namespace)
        assert user is not None
        current = self._current(user, agent, key)
        if value is None:
            if current is not None and current.deleted_at is None:
                self.memory.forget(current.id, user_id=user)
            return
        text = self._text(value)
        if len(json.dumps(value, default=str)) > MAX_VALUE_CHARS:
            raise ValueError(f"the value of {key!r} is larger than {MAX_VALUE_CHARS} characters as JSON")
        now = utcnow()
        first = (current.metadata.get(KEY, {}).get("created_at") if current is not None else None) or now.isoformat()
        new_id = new_memory_id()
        record = {
            "format": FORMAT, "memory_id": new_id, "user_id": user, "agent_id": agent, "session_id": self.session_id,
            "content": text, "summary": text.strip()[:512], "memory_type": "fact", "importance": 0.5,
            "topic_id": self._topic(agent, key), "source": self.source, "created_at": now, "stored_at": now,
            "metadata": {KEY: {"namespace": list(namespace), "key": key, "created_at": first}},
            "provenance": {"kind": "langgraph_put", "value": dict(value)},
            "state": {"supersedes": [current.id] if current is not None and current.is_active else []},
        }
        records = [record]
        if current is not None and current.is_active:  # the old version, superseded (S3 first, then index)
            old = dict(self.memory.get(current.id, user_id=user)["original"] or {})
            if old:
                records.insert(0, {**old, "format": FORMAT,
                                   "state": {**old["state"], "is_active": False, "superseded_by": new_id}})
        self.memory.import_records(user, [json.loads(json.dumps(r, default=_iso)) for r in records])

    def _text(self, value: Mapping[str, Any]) -> str:
        for field in self.text_fields:
            if isinstance(value.get(field), str) and value[field].strip():
                return str(value[field])
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        user, agent = self._scope(op.namespace_prefix)
        check(op.filter or {})
        want = op.offset + op.limit
        found: list[SearchItem] = []
        for row, score in self._candidates(user, agent, op.query, want):
            value = self._value(row)
            if isinstance(value, dict) and matches(value, op.filter or {}):
                found.append(self._item(row, value, score))
                if len(found) >= want:
                    break
        return found[op.offset:want]

    def _candidates(self, user: str | None, agent: str | None, query: str | None,
                    want: int) -> Iterator[tuple[IndexRecord, float | None]]:
        """The namespace's current items, best first for a query, newest first without one."""
        assert user is not None
        exact = (lambda r: r.agent_id == agent) if agent else (lambda r: True)
        if query:
            hits = self.memory.recall(user, query, top_k=min(100, max(want * 3, 10)), min_score=-1.0, gate=False,
                                      include_inferred=True, agent_id=agent)
            for h in hits:
                if KEY in h.metadata and exact(h):
                    yield _row(h, user), h.score
            return
        before: datetime | None = None
        while True:
            rows = self.memory.timeline(user, limit=PAGE, before=before, agent_id=agent)
            yield from ((r, None) for r in rows if KEY in r.metadata and exact(r))
            if len(rows) < PAGE:
                return
            before = rows[-1].created_at

    def _item(self, row: IndexRecord, value: Any, score: float | None = None) -> SearchItem:
        meta = row.metadata[KEY]
        return SearchItem(namespace=tuple(meta["namespace"]), key=meta["key"], value=value,
                          created_at=datetime.fromisoformat(meta["created_at"]), updated_at=row.created_at,
                          score=score)

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        users = self._users_named(conditions)
        found: set[tuple[str, ...]] = set()
        for user in users:
            for row, _ in self._candidates(user, None, None, 0):
                ns = tuple(row.metadata[KEY]["namespace"])
                if all(_matches_namespace(ns, c) for c in conditions):
                    found.add(ns[:op.max_depth] if op.max_depth is not None else ns)
        return sorted(found)[op.offset:op.offset + op.limit]

    def _users_named(self, conditions: Sequence[MatchCondition]) -> list[str]:
        """The user a prefix condition names; without one, every user of the service (for a
        key that may list users; a key bound to users gets the service's 403)."""
        n = len(self.prefix)
        for c in conditions:
            if c.match_type == "prefix" and len(c.path) > n and c.path[n] != "*":
                user, _ = self._scope(tuple(c.path[:n + 1]))
                return [user] if user else []
        return [u["user_id"] for u in self.memory.users(limit=self.max_users)]


def _row(hit: Any, user: str) -> IndexRecord:
    """A recall hit as the index row fields the store reads."""
    return IndexRecord(id=hit.memory_id, user_id=user, session_id=hit.session_id, memory_type=hit.memory_type,
                       summary=hit.summary, importance=hit.importance, created_at=hit.created_at,
                       topic_id=hit.topic_id, is_active=True, deleted_at=None, source=hit.source, storage_key="",
                       agent_id=hit.agent_id, run_id=hit.run_id, metadata=hit.metadata)


def _matches_namespace(ns: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(ns):
        return False
    part = ns[:len(path)] if condition.match_type == "prefix" else ns[len(ns) - len(path):]
    return all(p in ("*", q) for p, q in zip(path, part, strict=True))


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")
