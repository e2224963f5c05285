"""The data model: what a caller sends, what S3 keeps, what the index keeps, what recall returns.

Pydantic models validate at the edge (the Python facade and the HTTP API use the
same ones), so a bad id or a naive timestamp is refused before anything is written.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agent_memory.conditions import Filters
from agent_memory.config import INDEX_CONTENT_BYTES, MemoryType, Source
from agent_memory.errors import InvalidInputError
from agent_memory.ids import validate_id, validate_memory_id
from agent_memory.metadata import check_metadata

ORIGINAL_SCHEMA_VERSION = 1
CONTEXT_INDEX_CHARS = 600
"""The tail of a memory's context kept in the index (for lexical matching and embedding)."""
_EARLIEST = datetime(1970, 1, 2, tzinfo=UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


def from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def scope_label(agent_id: str | None, run_id: str | None) -> str:
    """``shared``, ``agent:<id>``, ``run:<id>`` or ``agent:<id>/run:<id>``: a memory's scope for people."""
    parts = [*([f"agent:{agent_id}"] if agent_id else []), *([f"run:{run_id}"] if run_id else [])]
    return "/".join(parts) or "shared"


def check_timestamp(value: datetime, name: str) -> datetime:
    """Timezone-aware, after 1970 and not in the future (a day of clock skew allowed)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware (e.g. 2026-01-31T09:00:00+00:00)")
    value = value.astimezone(UTC)
    if value < _EARLIEST or value > utcnow() + timedelta(days=1):
        raise ValueError(f"{name} {value.isoformat()} is out of range (1970 .. now)")
    return value


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant", "system", "tool"]
    content: str = Field(min_length=1, max_length=32_000)
    created_at: datetime | None = None


class RememberRequest(BaseModel):
    """A request to remember: one statement (``content``) or a conversation (``messages``)."""

    model_config = ConfigDict(extra="forbid")

    user_id: str
    content: str | None = Field(None, min_length=1)
    messages: list[Message] | None = Field(None, min_length=1, max_length=200)
    context: str | None = Field(None, max_length=4_000)
    """What came just before this statement in the conversation (e.g. the question it answers).
    It is embedded and matched together with the content, kept in the original, never shown as
    the memory itself. With ``messages`` each turn gets the two messages before it as context (this
    field before the first turn), and a statement from a short turn of several sentences the turn
    too (``drafts.statement_context``)."""
    session_id: str = "default"
    memory_type: MemoryType = "fact"
    importance: float | None = Field(None, ge=0.0, le=1.0)
    topic_id: str | None = None
    source: Source = "user_said"
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Your own fields, filterable at recall (``filters``): see :mod:`agent_memory.metadata` for the bounds."""
    created_at: datetime | None = None
    idempotency_key: str | None = None
    agent_id: str | None = None
    """The agent this memory belongs to; None: the user's shared memory, seen by every agent."""
    run_id: str | None = None
    """The run (task, episode) this memory belongs to; None: not tied to a run."""
    expires_at: datetime | None = None
    """From this instant on the memory is never recalled, and the daily job erases it."""
    ttl_days: float | None = Field(None, gt=0, le=36_500)
    """Expire this many days after the memory is stored (instead of ``expires_at``). Neither: the
    ``ttl_days_by_type`` setting for its type, else never."""

    @field_validator("user_id", "session_id")
    @classmethod
    def _ids(cls, v: str, info: Any) -> str:
        return validate_id(v, info.field_name)

    @field_validator("topic_id", "idempotency_key", "agent_id", "run_id")
    @classmethod
    def _optional_ids(cls, v: str | None, info: Any) -> str | None:
        return None if v is None else validate_id(v, info.field_name)

    @field_validator("created_at")
    @classmethod
    def _created(cls, v: datetime | None) -> datetime | None:
        return None if v is None else check_timestamp(v, "created_at")

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, v: dict[str, Any]) -> dict[str, Any]:
        return check_metadata(v)

    @field_validator("expires_at")
    @classmethod
    def _expires(cls, v: datetime | None) -> datetime | None:
        if v is None:
            return None
        if v.tzinfo is None or v.utcoffset() is None:
            raise ValueError("expires_at must be timezone-aware (e.g. 2026-01-31T09:00:00+00:00)")
        if v <= utcnow():
            raise ValueError(f"expires_at {v.isoformat()} is in the past: nothing would be remembered")
        return v.astimezone(UTC)

    @model_validator(mode="after")
    def _one_of(self) -> RememberRequest:
        if self.expires_at is not None and self.ttl_days is not None:
            raise ValueError("give at most one of 'expires_at' or 'ttl_days'")
        if (self.content is None) == (self.messages is None):
            raise ValueError("give exactly one of 'content' or 'messages'")
        if self.content is not None and not self.content.strip():
            raise ValueError("content must not be blank")
        return self


class RecallRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: str
    query: str = Field(min_length=1, max_length=4_000)
    top_k: int | None = Field(None, ge=1, le=100)
    min_score: float | None = Field(None, ge=-1.0, le=1.0)
    memory_types: list[MemoryType] | None = Field(None, min_length=1)
    include_inferred: bool = False
    min_importance: float | None = Field(None, ge=0.0, le=1.0)
    conversation: list[Message] | None = None
    consistency: Literal["strong", "bounded"] | None = None
    log: bool = True
    include_cold: bool = False
    """Re-hydrate the user's cold memories (up to ``rehydrate_limit``) before searching."""
    gate: bool | None = None
    """Answer nothing when the query asks nothing personal (the recall gate); None: the
    ``recall_gate`` setting. False always searches (e.g. an agent that wants memories anyway)."""
    agent_id: str | None = None
    """Recall as this agent: its own memories plus the user's shared ones, never another agent's.
    None: every memory of the user (the user's own view)."""
    run_id: str | None = None
    """Narrow to this run: memories of this run plus those tied to no run."""
    filters: Filters | None = None
    """Conditions on metadata, session, topic, types and creation time, all of which must hold."""
    fetch_originals: bool = False
    """Read every chosen memory's original from the store (S3) instead of answering from the
    index rows that hold the whole content: slower, and checks each against the source of truth."""

    @field_validator("user_id")
    @classmethod
    def _uid(cls, v: str) -> str:
        return validate_id(v, "user_id")

    @field_validator("agent_id", "run_id")
    @classmethod
    def _scope_ids(cls, v: str | None, info: Any) -> str | None:
        return None if v is None else validate_id(v, info.field_name)

    @field_validator("query")
    @classmethod
    def _query(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("query must not be blank")
        return v


class EmbeddingInfo(BaseModel):
    provider: str
    model: str
    version: str
    dim: int


class MemoryState(BaseModel):
    """The mutable part of a memory. It lives in the S3 original, so a re-index restores it."""

    is_active: bool = True
    deleted_at: datetime | None = None
    superseded_by: str | None = None
    supersedes: list[str] = Field(default_factory=list)
    duplicate_of: str | None = None
    """Set when this memory repeated an active one (stored for the record, never active)."""
    confirmations: int = 0
    """How many later memories repeated this one."""
    tier: Literal["hot", "cold"] = "hot"
    """``cold``: out of the vector index (see :mod:`agent_memory.tiering`), still in S3."""
    cold_at: datetime | None = None


class Original(BaseModel):
    """The full original as stored at ``memories/{user_id}/{memory_id}.json``: the source of truth."""

    def embedding_texts(self) -> tuple[str, ...]:
        """What the vector represents (see :func:`agent_memory.embed.memories.memory_vectors`): the statement
        in its conversational context. For a statement the pipeline extracted, the user's own words
        ("我对花生过敏") rather than the third-person rewrite ("用户对花生过敏"): questions are asked
        in the user's words, and the rewrite's subject pulls the vector away from them (similarity
        to "点餐时要注意什么" 0.27 vs 0.15).

        A statement the pipeline cut from ``messages`` has a context the service chose (the messages
        before its turn), which may be about something else entirely: in an assistant chat "also we
        adopted a rescue greyhound called Pixel" after a job update and a request to summarise an
        article is 0.13 similar to "what's my dog's name?" with that context and 0.32 without. Such
        a statement names a second text, which the ``context_blend`` setting (the default) adds to
        its vector: its own turn when the context holds that turn (a short turn with several
        sentences, :func:`agent_memory.pipeline.drafts.statement_context`), else its words. The
        turn, not the words, because a kept sentence often means nothing without the ones the
        trigger left out ("It was hard to let go" after "So I finally sold the old piano"; its
        words alone took "What did I sell last weekend?" from 0.20 to 0.11, under the floor). A
        context the caller passed with ``content`` is taken as given: one text."""
        text = str(self.provenance.get("said_part") or self.summary)
        ctx = (self.context or "")[-CONTEXT_INDEX_CHARS:]
        if not ctx:
            return (text,)
        if self.provenance.get("kind") == "message":
            turn = str(self.provenance.get("said") or "").strip()
            return (f"{ctx}\n{text}", turn if turn and ctx.endswith(turn) else text)
        return (f"{ctx}\n{text}",)

    def said(self) -> str:
        """The statement in the user's words, else its summary: what the change model compares
        with the user's memories (its pairs are written the way people say things)."""
        return str(self.provenance.get("sentence") or self.provenance.get("said_part") or self.summary)

    schema_version: int = ORIGINAL_SCHEMA_VERSION
    memory_id: str
    user_id: str
    session_id: str
    content: str
    summary: str
    context: str | None = None
    memory_type: MemoryType
    importance: float
    topic_id: str | None = None
    source: Source = "user_said"
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    stored_at: datetime
    idempotency_key: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    expires_at: datetime | None = None
    """After this instant the memory is never recalled; the daily job erases it (every version)."""
    embedding: EmbeddingInfo | None = None
    state: MemoryState = Field(default_factory=MemoryState)
    provenance: dict[str, Any] = Field(default_factory=dict)
    """How this memory came to be (raw statement, extraction from messages, chunk of what)."""


class IndexRecord(BaseModel):
    """One row of the vector index (without its vector)."""

    id: str
    user_id: str
    session_id: str
    memory_type: str
    summary: str
    importance: float
    created_at: datetime
    topic_id: str | None
    is_active: bool
    deleted_at: datetime | None
    source: str
    storage_key: str

    context: str = ""
    agent_id: str | None = None
    run_id: str | None = None
    expires_at: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    tier: Literal["hot", "cold"] = "hot"
    """Not stored in the index: ``cold`` marks a row read from the user's cold manifest."""
    content: str | None = Field(None, exclude=True)
    """The original's whole content when the row holds it (up to ``index_content_bytes``), else
    None: recall then reads the original. Internal to the index (never in listings or manifests)."""

    @classmethod
    def from_original(cls, o: Original, storage_key: str,
                      content_bytes: int = INDEX_CONTENT_BYTES) -> IndexRecord:
        """The row of ``o``; its content is kept whole when it has at most ``content_bytes`` bytes."""
        return cls(
            id=o.memory_id, user_id=o.user_id, session_id=o.session_id,
            memory_type=o.memory_type, summary=o.summary, importance=o.importance,
            created_at=o.created_at, topic_id=o.topic_id, is_active=o.state.is_active,
            deleted_at=o.state.deleted_at, source=o.source, storage_key=storage_key,
            context=(o.context or "")[-CONTEXT_INDEX_CHARS:], agent_id=o.agent_id, run_id=o.run_id,
            expires_at=o.expires_at, metadata=o.metadata,
            content=o.content if len(o.content.encode("utf-8")) <= content_bytes else None,
        )

    @property
    def scope(self) -> str:
        return scope_label(self.agent_id, self.run_id)


class ScoreParts(BaseModel):
    """Why a memory ranked where it did: score = relevance x decay x importance x type, where
    relevance fuses the dense similarity, the lexical (BM25) match and the best neighbour's."""

    similarity: float
    lexical: float = 0.0
    relevance: float = 0.0
    time_weight: float = 1.0
    """``1 + time_boost`` when the memory falls in a time window the query names, else 1."""
    decay: float
    importance_weight: float
    type_weight: float
    score: float
    via_version: str | None = None
    """An older, superseded version of this memory that matched the query better: its match
    counts for this one (the newest value answers a question asked in the old one's words)."""


class RecallHit(BaseModel):
    memory_id: str
    content: str
    summary: str
    score: float
    similarity: float
    parts: ScoreParts
    created_at: datetime
    memory_type: str
    importance: float
    topic_id: str | None
    source: str
    session_id: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    agent_id: str | None = None
    run_id: str | None = None
    expires_at: datetime | None = None
    archived: bool = False
    """The original is in an archive storage class and the index row does not hold its whole
    content: ``content`` is the index summary and a restore was requested; a later recall
    returns the full original."""
    reason: str = "chosen"
    """Why it is here: ``chosen`` (it passed the relevance floor and ranked in ``top_k``),
    ``dietary_constraint`` (a dietary restriction given a slot for a request that names food,
    whatever its similarity: see :mod:`agent_memory.dietary`) or ``newer_first`` (chosen, and moved
    ahead of an earlier memory it may replace: see :mod:`agent_memory.newer_first`)."""


class RecallResult(list[RecallHit]):
    """The hits, best first, plus the ``context`` block for a system prompt and the audit id."""

    def __init__(self, hits: list[RecallHit], context: str, recall_id: str, query: str,
                 rehydrated: int = 0) -> None:
        super().__init__(hits)
        self.context = context
        self.recall_id = recall_id
        self.query = query
        self.rehydrated = rehydrated
        """Cold memories re-embedded and re-indexed by this recall (see agent_memory.tiering)."""
        self.rewritten_query: str | None = None
        """The self-contained query actually searched, when ``conversation`` changed it."""
        self.timings_ms: dict[str, float] = {}
        """Where the time went: embed, gate, search (index + BM25 + fusion), rank, fetch (originals), log."""
        self.cpu_ms: dict[str, float] = {}
        """The recalling thread's CPU time in the same phases (log excepted): a phase whose wall time
        is far above it waited, for a server or for a core another process held."""
        self.gate: dict[str, Any] | None = None
        """The recall gate's decision: ``personal`` (P(the query is about this user)), ``threshold``,
        ``decision`` (``answer`` or ``nothing``) and ``reason``; None when the gate was off."""

    @property
    def hits(self) -> list[RecallHit]:
        return list(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "recall_id": self.recall_id,
            "query": self.query,
            "memories": [h.model_dump(mode="json") for h in self],
            "context": self.context,
            "rehydrated": self.rehydrated,
            "rewritten_query": self.rewritten_query,
            "gate": self.gate,
        }


class WorkingSetRequest(BaseModel):
    """Body of ``PUT .../working/{key}``: any JSON value and an optional time to live."""

    model_config = ConfigDict(extra="forbid")

    value: Any
    ttl_s: float | None = Field(None, gt=0, le=30 * 86_400)


class CorrectionRequest(BaseModel):
    """Body of ``POST /v1/memories/{id}/correct``: the caller's verdict on what the change
    detector decided for this memory (see :meth:`agent_memory.Memory.correct`)."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["unrelated", "new_version"]
    of: str | None = None
    """With ``new_version``: the memory this one is another value of."""

    @field_validator("of")
    @classmethod
    def _of(cls, v: str | None) -> str | None:
        return None if v is None else validate_memory_id(v)

    @model_validator(mode="after")
    def _of_when_needed(self) -> CorrectionRequest:
        if self.decision == "new_version" and self.of is None:
            raise ValueError("a new_version needs `of`: the memory this one is a new value of")
        if self.decision == "unrelated" and self.of is not None:
            raise ValueError("`of` goes with new_version only")
        return self


def validated(model: type[Any], **fields: Any) -> Any:
    """Build a request model, turning pydantic's report into one readable error (the same text
    in-process, from the CLI, and from the HTTP client before anything is sent)."""
    try:
        return model(**fields)
    except ValidationError as exc:
        parts = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"]) or "request"
            parts.append(f"{loc}: {err['msg'].removeprefix('Value error, ')}")
        raise InvalidInputError("; ".join(parts)) from None
