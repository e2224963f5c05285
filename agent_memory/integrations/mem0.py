"""A mem0-shaped facade: ``from agent_memory.integrations.mem0 import Memory`` instead of
``from mem0 import Memory``, and the rest of a mem0 (2.x, open-source) script runs unchanged.

Methods, argument names and result shapes are mem0's: ``add`` -> ``{"results": [{"id", "memory",
"event", ...}]}``, ``search``/``get_all`` -> ``{"results": [items]}`` (items with ``id``,
``memory``, ``hash``, ``metadata``, ``score`` (search), ``created_at``, ``updated_at``,
``user_id``, ``role``, ...), ``get`` -> an item or None, ``update``/``delete``/``delete_all`` ->
``{"message": ...}``, ``history`` -> mem0's change rows. Ids are UUID strings, as mem0's.

Where the services differ, this service's rules hold, on purpose:
- every memory belongs to a user: ``user_id`` is required (mem0 also allows agent- or run-only
  memories); ``agent_id``/``run_id`` are the service's scopes, matched exactly as mem0 does (a
  filter on an agent returns that agent's memories, not the user's shared ones);
- ``infer=True`` runs this service's extraction (trigger + statements), ``infer=False`` stores
  each non-system message as it is; an exact repeat of an active memory is recorded as a
  confirmation of it (mem0 would store a second copy);
- ``update`` never overwrites: it writes a new version that supersedes the old one, keeping its
  id for mem0 callers (``get``/``search`` answer the newest version under the first id), and
  ``history`` is read from that version chain; ``delete`` is a soft delete (``forget``), the
  hard erasure is the service's ``erase_user``;
- ``expiration_date`` is the service's expiry (from the start of the next day, UTC); a date in
  the past is refused (mem0 would store a memory that is already hidden); an expired memory is
  never recalled, so ``search(show_expired=True)`` is refused, ``get_all`` can list it;
- ``search`` answers with this service's score (similarity x recency x importance), and
  ``threshold`` is its ``min_score``; the recall gate is off (mem0 has none).

Metadata filters (``{"k": v}``, ``{"k": {"gte": 3}}``, ``in``/``nin``/``contains``,
``AND``/``OR``/``NOT``): equality, ``in`` and ranges go to the index with the search (the
service's ``filters``), and every condition is checked again on the results.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Union

from agent_memory.conditions import Filters, as_filters
from agent_memory.errors import InvalidInputError, NotFoundError
from agent_memory.integrations.matching import check, matches
from agent_memory.model import utcnow
from agent_memory.portability.from_mem0 import expiration_day, expiry_of
from agent_memory.portability.records import FORMAT

if TYPE_CHECKING:
    from agent_memory.client import MemoryClient
    from agent_memory.service import Memory as Service

log = logging.getLogger(__name__)
SCOPES = ("user_id", "agent_id", "run_id")
PROMOTED = ("user_id", "agent_id", "run_id", "actor_id", "role", "expiration_date")
RESERVED = "mem0"
"""The metadata key under which this facade keeps what mem0 has and the service has not (the
first version's id and created_at, role, actor). Never shown as metadata."""
_UNSET: Any = object()


Backend = Union["Service", "MemoryClient"]
"""In-process :class:`agent_memory.Memory` or the HTTP :class:`agent_memory.MemoryClient`."""


def _hex(memory_id: Any) -> str:
    try:
        return uuid.UUID(str(memory_id)).hex
    except ValueError:
        raise ValueError(f"Memory with id {str(memory_id)[:60]!r} not found: not a valid id") from None


def _uuid(hex_id: str) -> str:
    return str(uuid.UUID(hex_id))


def _entity(value: Any, name: str) -> str | None:
    """mem0's rule for ids (trimmed, no whitespace); the service validates them again."""
    if value is None:
        return None
    text = str(value).strip()
    if not text or any(c.isspace() for c in text):
        raise ValueError(f"Invalid {name}: cannot be empty or contain whitespace")
    return text


def _split_filters(filters: Mapping[str, Any] | None, kwargs: Mapping[str, Any], method: str) -> tuple[
        dict[str, str], dict[str, Any]]:
    """The scope (user/agent/run) and the metadata conditions of a mem0 ``filters`` dict."""
    top = sorted(set(SCOPES) & set(kwargs))
    if top:
        raise ValueError(f"Top-level entity parameters {set(top)} are not supported in {method}(). "
                         "Use filters={'user_id': '...'} instead.")
    filters = dict(filters or {})
    scope = {k: v for k in SCOPES if (v := _entity(filters.pop(k, None), k)) is not None}
    if "user_id" not in scope:
        raise ValueError("filters must contain user_id: every memory of this service belongs to a user. "
                         "Example: filters={'user_id': 'u1'}")
    check(filters)
    return scope, filters


class Memory:
    """mem0's ``Memory`` API over this service (in-process :class:`agent_memory.Memory` by default,
    or any backend with its methods, e.g. :class:`agent_memory.MemoryClient`)."""

    def __init__(self, backend: Backend | None = None) -> None:
        if backend is None:
            from agent_memory.service import Memory as Service

            backend = Service()
        self.backend: Backend = backend

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """mem0's constructor. mem0's vector store, LLM and embedder settings do not apply (the
        service has its own); an ``agent_memory`` key holds :class:`~agent_memory.Settings` fields."""
        from agent_memory.config import Settings
        from agent_memory.service import Memory as Service

        ignored = sorted(set(config_dict) - {"agent_memory"})
        if ignored:
            log.warning("mem0 settings %s do not apply to agent_memory and are ignored", ignored)
        return cls(Service(Settings(**dict(config_dict.get("agent_memory") or {}))))

    # ------------------------------------------------------------------ write
    def add(self, messages: str | dict[str, Any] | list[dict[str, Any]], *, user_id: str | None = None,
            agent_id: str | None = None, run_id: str | None = None, metadata: dict[str, Any] | None = None,
            timestamp: Any = None, expiration_date: Any = None, infer: bool = True,
            memory_type: str | None = None, prompt: str | None = None) -> dict[str, Any]:
        """Remember ``messages`` (a string, a message or a list of messages) for the user."""
        if memory_type is not None:
            raise ValueError("memory_type: procedural memories (mem0's LLM summaries) are not supported")
        expires_at, day = expiry_of(expiration_date), expiration_day(expiration_date)
        if prompt is not None:
            log.warning("add(prompt=...) is ignored: extraction uses the service's own models")
        owner = _entity(user_id, "user_id")
        if owner is None:
            raise ValueError("user_id is required: every memory of this service belongs to a user")
        agent_id, run_id = _entity(agent_id, "agent_id"), _entity(run_id, "run_id")
        turns = [{"role": "user", "content": messages}] if isinstance(messages, str) else (
            [messages] if isinstance(messages, dict) else list(messages))
        user_meta = {k: v for k, v in (metadata or {}).items() if k not in (*SCOPES, "actor_id", RESERVED)}
        created = _when(timestamp)
        if infer:
            said = [{"role": t["role"], "content": t["content"]} for t in turns if t.get("role") != "system"]
            ids = self.backend.remember(owner, messages=said, created_at=created, agent_id=agent_id, run_id=run_id,
                                        expires_at=expires_at,
                                        metadata={**user_meta, **({RESERVED: {"expiration_date": day}} if day else {})})
            return {"results": [{"id": _uuid(mid), "memory": self.backend.get(mid)["original"]["content"],
                                 "event": "ADD"} for mid in ids]}
        results = []
        for turn in turns:
            role, content = turn.get("role"), turn.get("content")
            if role is None or content is None or role == "system":
                continue
            own = {"role": role, **({"actor_id": turn["name"]} if turn.get("name") else {}),
                   **({"expiration_date": day} if day else {})}
            for mid in self.backend.remember(owner, str(content), metadata={**user_meta, RESERVED: own},
                                             source="agent_inferred" if role == "assistant" else "user_said",
                                             created_at=created, agent_id=agent_id, run_id=run_id,
                                             expires_at=expires_at):
                results.append({"id": _uuid(mid), "memory": content, "event": "ADD",
                                "actor_id": turn.get("name"), "role": role})
        return {"results": results}

    def update(self, memory_id: str, text: str | None = None, metadata: dict[str, Any] | None = None,
               expiration_date: Any = _UNSET, data: str | None = None) -> dict[str, str]:
        """A new version of the memory (text and/or metadata); the old one is kept, superseded."""
        text = text if text is not None else data
        if text is None and metadata is None and expiration_date is _UNSET:
            raise ValueError("At least one of text, metadata, or expiration_date must be provided.")
        first = _hex(memory_id)
        chain = self._chain(first)
        current = chain[-1]
        if current["state"]["deleted_at"] is not None:
            raise ValueError(f"Memory with id {memory_id} not found. Please provide a valid 'memory_id'")
        own = {**current["metadata"].get(RESERVED, {}), "id": _uuid(first),
               "created_at": chain[0]["created_at"]}
        expires = current["expires_at"]
        if expiration_date is not _UNSET:
            own["expiration_date"] = expiration_day(expiration_date)
            expires = expiry_of(expiration_date)
            own = {k: v for k, v in own.items() if v is not None}
        user_meta = {k: v for k, v in current["metadata"].items() if k != RESERVED}
        user_meta.update({k: v for k, v in (metadata or {}).items() if k not in (*SCOPES, "actor_id", RESERVED)})
        new_id = uuid.uuid4().hex
        topic = current["topic_id"] or f"mem0-{first}"
        now = utcnow().isoformat()
        content = text if text is not None else current["content"]
        new = {**current, "format": FORMAT, "memory_id": new_id, "content": content, "summary": content.strip()[:512],
               "metadata": {**user_meta, RESERVED: own}, "topic_id": topic, "created_at": now, "stored_at": now,
               "expires_at": expires.isoformat() if isinstance(expires, datetime) else expires,
               "idempotency_key": None, "provenance": {"kind": "update", "updates": current["memory_id"]},
               "state": {**current["state"], "is_active": True, "supersedes": [current["memory_id"]],
                         "superseded_by": None, "duplicate_of": None, "confirmations": 0}}
        old = {**current, "format": FORMAT, "topic_id": topic,
               "state": {**current["state"], "is_active": False, "superseded_by": new_id}}
        # Written as exact originals (the import path): an explicit update is a new version by the
        # caller's word, not something for the duplicate and change models to judge.
        self.backend.import_records(current["user_id"], [old, new])
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, str]:
        current = self._chain(_hex(memory_id))[-1]
        if current["state"]["deleted_at"] is not None:
            raise ValueError(f"Memory with id {memory_id} not found")
        self.backend.forget(current["memory_id"], user_id=current["user_id"])
        return {"message": "Memory deleted successfully!"}

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None,
                   run_id: str | None = None) -> dict[str, str]:
        """Forget every active memory of the scope (soft deletes; ``erase_user`` is the hard one)."""
        if user_id is None and (agent_id or run_id):
            raise ValueError("user_id is required: every memory of this service belongs to a user")
        if user_id is None:
            raise ValueError("At least one filter is required to delete all memories.")
        scope = {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)) if v}
        for original in list(self._originals(scope, {})):
            self.backend.forget(original["memory_id"], user_id=original["user_id"])
        return {"message": "Memories deleted successfully!"}

    # ------------------------------------------------------------------- read
    def get(self, memory_id: str) -> dict[str, Any] | None:
        try:
            chain = self._chain(_hex(memory_id))
        except NotFoundError:
            return None
        if chain[-1]["state"]["deleted_at"] is not None:
            return None
        return {**_item(chain[-1]), "score": None}

    def get_all(self, *, filters: dict[str, Any] | None = None, top_k: int = 20, show_expired: bool = False,
                **kwargs: Any) -> dict[str, Any]:
        scope, conditions = _split_filters(filters, kwargs, "get_all")
        _check_top_k(top_k)
        out: list[dict[str, Any]] = []
        for original in self._originals(scope, conditions, include_expired=show_expired):
            if len(out) >= top_k:
                break
            out.append(_item(original))
        return {"results": out}

    def search(self, query: str, *, top_k: int = 20, filters: dict[str, Any] | None = None,
               threshold: float = 0.1, rerank: bool = False, explain: bool = False,
               reference_date: Any = None, show_expired: bool = False, **kwargs: Any) -> dict[str, Any]:
        scope, conditions = _split_filters(filters, kwargs, "search")
        _check_top_k(top_k)
        if not isinstance(query, str) or not query.strip():
            raise ValueError("Invalid query: cannot be empty or whitespace-only.")
        if show_expired:
            raise ValueError("show_expired=True: this service never recalls an expired memory (get_all can list it)")
        if threshold is not None and not 0 <= threshold <= 1:
            raise ValueError(f"Invalid threshold: {threshold}. Must be between 0 and 1 (inclusive).")
        if top_k == 0:
            return {"results": []}
        narrowed = bool(conditions) or len(scope) > 1
        hits = self.backend.recall(scope["user_id"], query.strip(), top_k=min(100, top_k * 4 if narrowed else top_k),
                                   min_score=threshold or 0.0, gate=False, include_inferred=True,
                                   agent_id=scope.get("agent_id"), run_id=scope.get("run_id"),
                                   filters=_index_filters(conditions))
        out = []
        for h in hits:
            shown = {k: v for k, v in h.metadata.items() if k != RESERVED}
            if not _in_scope(h.agent_id, h.run_id, scope) or not matches(shown, conditions):
                continue
            hit = {**h.model_dump(), "user_id": scope["user_id"]}
            out.append({**_shape(hit, h.content, shown, h.created_at.isoformat()), "score": h.score})
            if len(out) == top_k:
                break
        return {"results": [_ordered(r) for r in out]}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """mem0's change rows (ADD, UPDATE..., DELETE), read from the memory's version chain."""
        first = _hex(memory_id)
        try:
            chain = self._chain(first)
        except NotFoundError:
            return []
        rows = []
        created = chain[0]["created_at"]
        for i, version in enumerate(chain):
            own = version["metadata"].get(RESERVED, {})
            rows.append({"id": _uuid(version["memory_id"]), "memory_id": _uuid(first),
                         "old_memory": chain[i - 1]["content"] if i else None, "new_memory": version["content"],
                         "event": "UPDATE" if i else "ADD", "created_at": created,
                         "updated_at": version["created_at"], "is_deleted": False,
                         "actor_id": own.get("actor_id"), "role": own.get("role")})
        last = chain[-1]
        if last["state"]["deleted_at"] is not None:
            own = last["metadata"].get(RESERVED, {})
            rows.append({"id": _uuid(last["memory_id"]), "memory_id": _uuid(first), "old_memory": last["content"],
                         "new_memory": None, "event": "DELETE", "created_at": created,
                         "updated_at": last["state"]["deleted_at"], "is_deleted": True,
                         "actor_id": own.get("actor_id"), "role": own.get("role")})
        return rows

    def reset(self) -> None:
        raise NotImplementedError("reset() would erase every user: use the service's erase_user(user_id)")

    # ---------------------------------------------------------------- helpers
    def _original(self, hex_id: str) -> dict[str, Any]:
        found = self.backend.get(hex_id)
        if found.get("original") is None:
            raise NotFoundError(f"memory {hex_id} is archived; a restore was requested")
        return dict(found["original"])

    def _chain(self, first: str) -> list[dict[str, Any]]:
        """The memory and every version that superseded it, oldest first."""
        chain = [self._original(first)]
        seen = {first}
        while (nxt := chain[-1]["state"]["superseded_by"]) and nxt not in seen and len(chain) < 1000:
            seen.add(nxt)
            chain.append(self._original(nxt))
        return chain

    def _originals(self, scope: Mapping[str, str], conditions: Mapping[str, Any],
                   include_expired: bool = False) -> Iterator[dict[str, Any]]:
        """The user's active memories in the scope meeting ``conditions``, newest first."""
        before: datetime | None = None
        while True:
            rows = self.backend.timeline(scope["user_id"], limit=200, before=before,
                                         agent_id=scope.get("agent_id"), run_id=scope.get("run_id"),
                                         filters=_index_filters(conditions), include_expired=include_expired)
            for row in rows:
                shown = {k: v for k, v in row.metadata.items() if k != RESERVED}
                if _in_scope(row.agent_id, row.run_id, scope) and matches(shown, conditions):
                    yield self._original(row.id)
            if len(rows) < 200:
                return
            before = rows[-1].created_at


def _index_filters(conditions: Mapping[str, Any]) -> Filters | None:
    """The conditions the index can apply itself (equality, ``in``, ranges on top-level keys), so a
    narrow filter is not starved by the search's ``top_k``; the rest (``ne``, ``nin``,
    ``contains``, ``AND``/``OR``/``NOT``, ``*``) and these again are checked on the results. One
    the service's filter language refuses (a range on plain text) is left to that check alone."""
    pushed: dict[str, Any] = {}
    for key, cond in conditions.items():
        if key in ("AND", "OR", "NOT", RESERVED):
            continue
        if isinstance(cond, Mapping):
            ops = {str(op).lstrip("$"): v for op, v in cond.items()}
            if ops and set(ops) <= {"eq", "in", "gt", "gte", "lt", "lte"}:
                pushed[key] = ops
        elif cond != "*" and isinstance(cond, str | int | float | bool):
            pushed[key] = cond
    if not pushed:
        return None
    try:
        return as_filters({"metadata": pushed})
    except InvalidInputError:
        return None


def _check_top_k(top_k: Any) -> None:
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0:
        raise ValueError(f"Invalid top_k: {top_k}. Must be a non-negative integer.")


def _when(timestamp: Any) -> datetime | None:
    """``add(timestamp=...)`` (mem0's platform option): epoch seconds, ISO text or a datetime."""
    if timestamp is None:
        return None
    if isinstance(timestamp, int | float):
        return datetime.fromtimestamp(timestamp, UTC)
    when = timestamp if isinstance(timestamp, datetime) else datetime.fromisoformat(str(timestamp))
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _in_scope(agent_id: str | None, run_id: str | None, scope: Mapping[str, str]) -> bool:
    """mem0's exact match: an agent's filter wants that agent's memories only (the service's
    agent view would add the user's shared ones)."""
    return scope.get("agent_id", agent_id) == agent_id and scope.get("run_id", run_id) == run_id


def _item(original: Mapping[str, Any]) -> dict[str, Any]:
    shown = {k: v for k, v in original["metadata"].items() if k != RESERVED}
    return _ordered(_shape(original, original["content"], shown, _iso(original["created_at"])))


def _shape(memory: Mapping[str, Any], content: str, shown: dict[str, Any], version_at: str) -> dict[str, Any]:
    """One mem0 item from an original or a recall hit: the first version's id and created_at,
    this version's text and time, the scope and mem0's role/actor promoted as mem0 does."""
    own = memory["metadata"].get(RESERVED, {})
    promoted = {**own, "user_id": memory["user_id"], "agent_id": memory.get("agent_id"),
                "run_id": memory.get("run_id")}
    return {"id": own.get("id") or _uuid(memory["memory_id"]), "memory": content,
            "hash": hashlib.md5(content.encode()).hexdigest(), "metadata": shown or None,
            "created_at": own.get("created_at") or version_at, "updated_at": version_at,
            **{k: v for k in PROMOTED if (v := promoted.get(k)) is not None}}


def _ordered(item: dict[str, Any]) -> dict[str, Any]:
    keys = ["id", "memory", "hash", "metadata", "score", "created_at", "updated_at", *PROMOTED]
    return {k: item[k] for k in keys if k in item}


def _iso(value: Any) -> str:
    return value if isinstance(value, str) else datetime.isoformat(value)
