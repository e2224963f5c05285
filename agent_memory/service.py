"""The ``Memory`` facade: remember, recall, get, forget, versions, timeline, erase.

The same object runs in-process (embedded defaults) and inside the Lambdas. Writes
are split in two steps so the API can answer before the slow part:

1. :meth:`Memory.stage` validates, assigns ids and writes the originals to the raw
   store (S3). Nothing reaches the index before its original exists.
2. :meth:`Memory.index_originals` embeds, resolves topic versions and writes the
   index. It is idempotent (rows are replaced by id), so a retry, a duplicate
   queue delivery or a re-index all converge to the same state.

:meth:`Memory.remember` does both at once for in-process use.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from agent_memory import dietary, newer_first
from agent_memory.audit import RecallLog
from agent_memory.conditions import Filters, as_filters
from agent_memory.config import Settings
from agent_memory.embed import Embedder, make_embedder, memory_vectors
from agent_memory.errors import (
    AgentMemoryError,
    ArchivedError,
    ConflictError,
    InvalidInputError,
    NotFoundError,
)
from agent_memory.filters import MemoryFilter, exactly, matches, visible
from agent_memory.ids import memory_id_for_key, new_memory_id, validate_id, validate_memory_id
from agent_memory.index import VectorIndex, open_index
from agent_memory.judge import Judge, load_judge
from agent_memory.judge.answer import MAX_CHARS as ANSWER_MAX_CHARS
from agent_memory.judge.corrections import correction_pairs
from agent_memory.judge.models import TurnVerdict
from agent_memory.judge.profile import asks_about_whole_user
from agent_memory.lexical import doc_tokens, lexical_relevance
from agent_memory.llm import LLM
from agent_memory.model import (
    CorrectionRequest,
    IndexRecord,
    Message,
    Original,
    RecallHit,
    RecallRequest,
    RecallResult,
    RememberRequest,
    to_ms,
    utcnow,
    validated,
)
from agent_memory.prompt import build_context
from agent_memory.ranking import Candidate, Ranked, RankingParams, carry_versions, dense_candidates, fuse, rank
from agent_memory.selfcheck import run_selfcheck
from agent_memory.store import RawStore, make_store
from agent_memory.store.cold import load_cold, save_cold
from agent_memory.store.keys import original_key, user_prefix
from agent_memory.store.originals import read_original, request_restore
from agent_memory.timewindows import time_windows
from agent_memory.versions import Versions
from agent_memory.working import WorkingMemory, WorkingStore, make_working_store


class Memory:
    """Long-term memory for agents. ``Memory()`` needs no server: Milvus Lite + files under ``.local``."""

    def __init__(self, settings: Settings | None = None, *, embedder: Embedder | None = None,
                 index: VectorIndex | None = None, store: RawStore | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.settings = settings or Settings()
        self.clock: Callable[[], datetime] = clock or utcnow
        """What "now" is for storing, expiry and ranking (tests move it to see memories expire)."""
        self.embedder = embedder or make_embedder(self.settings)
        self.index = index or open_index(self.settings)
        try:
            self.index.ensure(self.embedder.info)
        except AgentMemoryError:
            if index is None:  # ours: release it (a Milvus Lite file or a HelixDB folder stays locked)
                self.index.close()
            raise
        self.store = store or make_store(self.settings)
        self.recall_log = RecallLog(self.store, self.settings.recall_log_prefix)
        self._working: WorkingStore | None = None
        self._llm: LLM | None = None
        self._judge: Judge | None = None
        self._versions = Versions(self)
        """The change detector and the topic versions (:mod:`agent_memory.versions`)."""

    @property
    def llm(self) -> LLM:
        """Extraction and query rewriting (offline rules by default; see :mod:`agent_memory.llm`)."""
        if self._llm is None:
            from agent_memory.llm import make_llm

            self._llm = make_llm(self.settings)
        return self._llm

    @property
    def judge(self) -> Judge:
        """The learned trigger, change and gate models for this embedding model (loaded once)."""
        if self._judge is None:
            self._judge = load_judge(self.embedder.info.provider)
        return self._judge

    def screen(self, texts: list[str]) -> list[TurnVerdict]:
        """The trigger model's verdict on each text (embedded here, in one batch)."""
        return self.judge.screen(texts, self.embedder)

    # ------------------------------------------------------------------ keys
    def storage_key(self, user_id: str, memory_id: str) -> str:
        return original_key(self.settings.key_prefix, user_id, memory_id)

    # ----------------------------------------------------------------- write
    def remember(self, user_id: str, content: str | None = None, *,
                 messages: Sequence[dict[str, Any] | Message] | None = None,
                 session_id: str = "default", memory_type: str = "fact",
                 importance: float | None = None, topic_id: str | None = None,
                 source: str = "user_said", metadata: dict[str, Any] | None = None,
                 created_at: datetime | None = None, idempotency_key: str | None = None,
                 context: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                 expires_at: datetime | None = None, ttl_days: float | None = None,
                 wait: bool = True) -> list[str]:
        """Store a statement (``content``) or what is worth keeping in ``messages``; return ids.

        ``agent_id`` / ``run_id`` scope the memory to one agent / run of the user (see
        :meth:`recall`); without them it is the user's shared memory. ``expires_at`` or
        ``ttl_days`` (days from now; default: the ``ttl_days_by_type`` setting) make it expire:
        never recalled from then on, erased by the daily job (:mod:`agent_memory.expiry`).

        In-process the memory is indexed before this returns, whatever ``wait`` says; the
        argument is here so code runs unchanged against :class:`agent_memory.MemoryClient`,
        where ``wait=False`` returns as soon as the original is stored."""
        req = self.validate_remember(
            user_id=user_id, content=content, messages=messages, session_id=session_id, context=context,
            memory_type=memory_type, importance=importance, topic_id=topic_id, source=source,
            metadata=metadata or {}, created_at=created_at, idempotency_key=idempotency_key,
            agent_id=agent_id, run_id=run_id, expires_at=expires_at, ttl_days=ttl_days)
        originals = self.stage(req)
        self.index_originals(originals)
        return [o.memory_id for o in originals]

    def remember_many(self, requests: Sequence[dict[str, Any]], batch_size: int = 256) -> list[list[str]]:
        """Bulk import: validate everything first (nothing is written if one request is bad), then
        store all originals and index them in batches. Returns the ids per request."""
        reqs = [self.validate_remember(**r) for r in requests]
        # ids are made in request order (the pipeline is CPU work, held by the GIL anyway): memories
        # sharing a created_at are ordered by id when recall looks for neighbours, so ids made by
        # threads in whatever order they ran ranked the same import differently from run to run
        prepared = [self._prepare(r) for r in reqs]
        with ThreadPoolExecutor(max_workers=16) as pool:  # S3 puts are I/O: overlap them
            staged = list(pool.map(self._write, reqs, prepared))
        flat = [o for group in staged for o in group]
        for i in range(0, len(flat), batch_size):
            self.index_originals(flat[i:i + batch_size])
        self.index.flush()
        return [[o.memory_id for o in group] for group in staged]

    def validate_remember(self, **fields: Any) -> RememberRequest:
        req: RememberRequest = validated(RememberRequest, **fields)
        if req.content is not None and len(req.content) > self.settings.max_content_chars:
            from agent_memory.errors import ContentTooLargeError

            raise ContentTooLargeError(
                f"content has {len(req.content)} characters; the limit is {self.settings.max_content_chars}")
        import json

        if len(json.dumps(req.metadata, default=str)) > self.settings.max_metadata_bytes:
            raise InvalidInputError(f"metadata is larger than {self.settings.max_metadata_bytes} bytes")
        return req

    def prepare(self, req: RememberRequest) -> list[Original]:
        """Turn a request into originals (ids, summaries, timestamps) through the write pipeline
        (:mod:`agent_memory.pipeline.drafts`: trigger + extraction for ``messages``, chunking for
        long ``content``). No I/O."""
        return self._prepare(req)[0]

    def _prepare(self, req: RememberRequest) -> tuple[list[Original], list[dict[str, Any]], str | None]:
        from agent_memory.pipeline.drafts import drafts

        now = self.clock()
        cascade = self.llm.extract if self.llm.name != "offline" else None
        found, decisions = drafts(req, now, self.settings.chunk_tokens, self.settings.chunk_overlap,
                                  extractor=self.llm.extract, screen=self.screen if self.settings.judge else None,
                                  uncertain=cascade, model_extracts_kept=self.settings.llm_extracts == "kept")
        originals = []
        for i, d in enumerate(found):
            mid = (memory_id_for_key(req.user_id, req.idempotency_key, i)
                   if req.idempotency_key else new_memory_id())
            from_messages = req.messages is not None
            memory_type = d.memory_type if from_messages and d.memory_type else req.memory_type
            originals.append(Original(
                memory_id=mid, user_id=req.user_id, session_id=req.session_id, content=d.text,
                summary=_summary(d.text, self.settings.summary_chars, whole=d.provenance.get("kind") == "chunk"),
                context=d.context,
                memory_type=memory_type,
                importance=(req.importance if req.importance is not None else
                            d.importance if d.importance is not None else self.settings.default_importance),
                topic_id=req.topic_id or d.topic_id, source=d.source or req.source,
                metadata=req.metadata, created_at=d.created_at or req.created_at or now, stored_at=now,
                idempotency_key=req.idempotency_key, embedding=self.embedder.info, provenance=d.provenance,
                agent_id=req.agent_id, run_id=req.run_id, expires_at=self._expiry(req, memory_type, now),
            ))
        document = None
        if originals and originals[0].provenance.get("kind") == "chunk":
            document = f"{user_prefix(self.settings.documents_prefix, req.user_id)}{originals[0].memory_id}.json"
            for o in originals:
                o.provenance["document"] = document
        return originals, decisions, document

    def _expiry(self, req: RememberRequest, memory_type: str, now: datetime) -> datetime | None:
        """``expires_at``, else now + ``ttl_days``, else now + the type's default, else never."""
        if req.expires_at is not None:
            return req.expires_at
        days = req.ttl_days if req.ttl_days is not None else self.settings.ttl_days_by_type.get(memory_type)
        return None if days is None else now + timedelta(days=days)

    def stage(self, req: RememberRequest) -> list[Original]:
        """Validate and write originals to the raw store (step 1 of a write).

        With an ``idempotency_key`` an original that already exists is returned as it is,
        so a retried request never makes a second memory."""
        return self._write(req, self._prepare(req))

    def _write(self, req: RememberRequest,
               prepared: tuple[list[Original], list[dict[str, Any]], str | None]) -> list[Original]:
        originals, decisions, document = prepared
        if decisions:  # every turn's decision, kept or not, on the record
            key = f"{user_prefix(self.settings.decisions_prefix, req.user_id)}{utcnow():%Y%m%dT%H%M%S%fZ}.json"
            self.store.put_json(key, {"user_id": req.user_id, "session_id": req.session_id, "decisions": decisions,
                                      "agent_id": req.agent_id, "run_id": req.run_id,
                                      "memory_ids": [o.memory_id for o in originals]})
        if document and req.content is not None:
            self.store.put_json(document, {"user_id": req.user_id, "agent_id": req.agent_id, "run_id": req.run_id,
                                           "content": req.content,
                                           "chunks": [o.memory_id for o in originals]})
        out = []
        for o in originals:
            key = self.storage_key(o.user_id, o.memory_id)
            if o.idempotency_key:
                try:
                    out.append(Original.model_validate(self.store.get_json(key)))
                    continue
                except NotFoundError:
                    pass
            self.store.put_json(key, o.model_dump(mode="json"))
            out.append(o)
        return out

    def index_originals(self, originals: Sequence[Original]) -> None:
        """Embed and index originals already in the raw store (step 2), resolving topic versions."""
        if not originals:
            return
        vectors = memory_vectors(self.embedder, originals, self.settings.context_blend)
        if self.settings.deduplicate or self.settings.detect_changes:
            originals = self._versions.detect(originals, vectors.in_context)
        originals = [o if o.state.duplicate_of else self._versions.resolve(o) for o in originals]
        records = [IndexRecord.from_original(o, self.storage_key(o.user_id, o.memory_id),
                                             self.settings.index_content_bytes) for o in originals]
        self.index.write(records, vectors.stored)
        self._versions.written(originals)

    def index_stored(self, jobs: Sequence[tuple[str, Sequence[str]]]) -> int:
        """Step 2 as the queue worker runs it: ``(user_id, memory_ids)`` per job, originals read
        from the store in parallel (:meth:`read_stored`), then one :meth:`index_originals` for all.
        An original that cannot be read raises its error (``NotFoundError`` when missing) and
        nothing is indexed. Returns the count."""
        originals, failed = self.read_stored(jobs)
        if failed:
            raise next(iter(failed.values()))
        self.index_originals(originals)
        return len(originals)

    def read_stored(self, jobs: Sequence[tuple[str, Sequence[str]]]
                    ) -> tuple[list[Original], dict[int, Exception]]:
        """The originals of ``jobs`` (``(user_id, memory_ids)`` each, one per queue message), read
        from the store in parallel — on the ingest worker the reads, not embedding, were the cost
        (100 sequential GETs per batch) — and which jobs could not be read: job position -> the
        error of its first unreadable original. The originals are those of the readable jobs
        only, so the worker indexes them and fails just the others.

        SQS may deliver a message twice in one batch: each memory is still read, embedded and
        written once (the index would keep one row either way; Milvus Lite and 2.3.5 were checked)."""
        keys_of = [[self.storage_key(user_id, mid) for mid in mids] for user_id, mids in jobs]
        keys = list(dict.fromkeys(k for ks in keys_of for k in ks))
        got = dict(zip(keys, self.store.get_each(keys), strict=True))
        failed: dict[int, Exception] = {}
        originals: dict[str, Original] = {}
        for i, ks in enumerate(keys_of):
            try:
                for k in ks:
                    doc = got[k]
                    if isinstance(doc, Exception):
                        raise doc
                    if k not in originals:
                        originals[k] = Original.model_validate(doc)
            except Exception as exc:  # this job fails alone; the batch goes on
                failed[i] = exc
        good = {k for i, ks in enumerate(keys_of) if i not in failed for k in ks}
        return [o for k, o in originals.items() if k in good], failed

    def _load_original(self, user_id: str, memory_id: str) -> Original | None:
        return read_original(self.store, self.storage_key(user_id, memory_id))

    # ------------------------------------------------------------------ read
    def recall(self, user_id: str, query: str, *, top_k: int | None = None,
               min_score: float | None = None, memory_types: Sequence[str] | None = None,
               include_inferred: bool = False, min_importance: float | None = None,
               conversation: Sequence[dict[str, Any] | Message] | None = None,
               consistency: str | None = None, log: bool = True, include_cold: bool = False,
               gate: bool | None = None, agent_id: str | None = None, run_id: str | None = None,
               filters: Filters | dict[str, Any] | None = None, fetch_originals: bool = False) -> RecallResult:
        """The few memories most relevant to ``query``, best first, with a ``context`` block.

        Scopes: with ``agent_id`` only that agent's memories and the user's shared ones (no agent)
        are searched, never another agent's; ``run_id`` narrows the same way (that run's memories
        and those of no run). Without them, every memory of the user.

        ``filters`` adds conditions that must all hold: on ``metadata`` keys (equality, ``in``,
        numeric and date ranges), ``session_id``, ``topic_id``, ``memory_types`` and ``created_at``
        (see :mod:`agent_memory.conditions`).

        ``include_cold`` first re-hydrates the user's cold memories (see :mod:`agent_memory.tiering`);
        a recall that finds nothing hot does so by itself when the user has a cold tier.

        With ``conversation``, a query that refers back into it ("do the same as last time") is
        rewritten to be self-contained first (:mod:`agent_memory.pipeline.rewrite`).

        With ``whole_user_questions`` (opt-in), a question about the user as a whole ("what do you
        know about me?": :mod:`agent_memory.judge.profile`), which no memory is similar to, is
        answered by the gate with no relevance floor (the request's own ``min_score`` still applies):
        the user's ``top_k`` memories come back in the usual ranked order.

        Content comes from the index rows, which hold it whole up to ``index_content_bytes``; longer
        memories are read from the store, and every one with ``fetch_originals``."""
        req: RecallRequest = validated(
            RecallRequest, user_id=user_id, query=query, top_k=top_k, min_score=min_score,
            memory_types=list(memory_types) if memory_types is not None else None,
            include_inferred=include_inferred, min_importance=min_importance,
            conversation=conversation, consistency=consistency, log=log, include_cold=include_cold, gate=gate,
            agent_id=agent_id, run_id=run_id, filters=filters, fetch_originals=fetch_originals)
        return self.recall_request(req)

    def recall_request(self, req: RecallRequest) -> RecallResult:
        rehydrated = self.rehydrate(req.user_id)["rehydrated"] if req.include_cold else 0
        result, entry = self._recall_once(req, rehydrated)
        if not result and not req.include_cold and self._cold(req.user_id):
            # nothing hot matched and the user has a cold tier: re-hydrate it and search again
            rehydrated = self.rehydrate(req.user_id)["rehydrated"]
            if rehydrated:
                result, entry = self._recall_once(req, rehydrated)
        if entry is not None:  # queued: written in the background (see :mod:`agent_memory.audit`)
            t0 = time.perf_counter()
            self.recall_log.submit(req.user_id, result.recall_id, entry)
            result.timings_ms["log"] = (time.perf_counter() - t0) * 1e3
        return result

    def _recall_once(self, req: RecallRequest, rehydrated: int) -> tuple[RecallResult, dict[str, Any] | None]:
        t0 = time.perf_counter()
        c0 = time.thread_time()
        s = self.settings
        top_k = req.top_k or s.top_k
        min_score = req.min_score if req.min_score is not None else (
            s.min_score if s.min_score is not None else self.embedder.default_min_score)
        now = self.clock()  # one instant for the filter's expiry, the ranking and the hits' check
        flt = MemoryFilter(user_id=req.user_id, memory_types=req.memory_types,
                           sources=None if req.include_inferred else ("user_said",),
                           min_importance=req.min_importance, agent_ids=visible(req.agent_id, "agent_id"),
                           run_ids=visible(req.run_id, "run_id"), where=req.filters, live_at_ms=to_ms(now))
        query = self.llm.rewrite(req.query, req.conversation) if req.conversation else req.query
        vector = self.embedder.embed_query(query)
        t_embed = time.perf_counter()
        c_embed = time.thread_time()
        whole_user = s.whole_user_questions and asks_about_whole_user(query)
        gate = self._gate(query, vector, whole_user) if (s.recall_gate if req.gate is None else req.gate) else None
        if whole_user and req.min_score is None:
            min_score = -1.0  # no memory is similar to "what do you know about me?": every one may answer it
        elif (gate is not None and gate["decision"] == "answer" and not gate.get("keywords")
              and req.min_score is None and s.min_score is None and self.judge.min_similarity is not None):
            min_score = self.judge.min_similarity  # the floor calibrated with the gate for personal queries
        t_gate = time.perf_counter()
        c_gate = time.thread_time()
        limit = max(s.candidate_limit, top_k)
        strong = req.consistency == "strong"
        windows = time_windows(query, now) if s.time_boost else []
        params = RankingParams.from_settings(
            s, min_score, s.dense_weight if s.dense_weight is not None else self.embedder.default_dense_weight,
            windows)
        lexical_used = False
        # superseded versions are searched too: their match carries over to the version that
        # replaced them (ranking.carry_versions), and they are never returned themselves
        search_flt = replace(flt, active_only=False)
        if s.hybrid and s.lexical_max_docs:
            # One search as wide as the lexical corpus: it returns every memory of the user that
            # passes the filter, with its exact similarity, when there are fewer than the cap.
            found = self.index.search(vector, search_flt, limit=s.lexical_max_docs, strong=strong)
            if len(found) < s.lexical_max_docs:
                corpus = [h.record for h in found]
                # BM25 over the summary, and over the context with it (the tokens of
                # f"{context} {summary}", joined from the cached tokens of each: lexical.doc_tokens)
                said = [doc_tokens(r.summary) for r in corpus]
                heard = [doc_tokens(r.context) + t if r.context else t for r, t in zip(corpus, said, strict=True)]
                lexical = lexical_relevance(query, said, heard, s.small_store)
                candidates = carry_versions(fuse(found, corpus, lexical.tolist(), params,
                                                 limit=len(corpus)))[:limit]
                lexical_used = True
            else:
                candidates = carry_versions(dense_candidates(found[:limit], params))
        else:
            candidates = carry_versions(dense_candidates(
                self.index.search(vector, search_flt, limit=limit, strong=strong), params))
        t_search = time.perf_counter()
        c_search = time.thread_time()
        if gate is not None and not gate.get("keywords") and not whole_user:
            look = self._second_look if s.recall_gate_second_look else self._override
            gate = look(gate, candidates)
        ranked = rank(candidates, now, params, top_k)
        answering = gate is None or gate["decision"] == "answer"  # the gate decides "answer" or "nothing"
        moves: list[dict[str, Any]] = []
        if s.newer_first and answering:
            ranked, moves = newer_first.order(ranked, self._versions.new_version_probabilities)
        if s.dietary_constraints and answering:
            ranked = dietary.make_room(ranked, query, top_k)
        if not answering:
            ranked = [Ranked(r.hit, r.parts, False, "general_query") for r in ranked]
        t_rank = time.perf_counter()
        c_rank = time.thread_time()
        chosen = [r for r in ranked if r.chosen]
        hits = self._hits(chosen, req, now)
        t_fetch = time.perf_counter()
        c_fetch = time.thread_time()
        recall_id = new_memory_id()
        result = RecallResult(hits, build_context(hits, s.context_max_chars), recall_id, req.query, rehydrated)
        result.rewritten_query = query if query != req.query else None
        result.gate = gate
        result.timings_ms = {"embed": (t_embed - t0) * 1e3, "gate": (t_gate - t_embed) * 1e3,
                             "search": (t_search - t_gate) * 1e3,
                             "rank": (t_rank - t_search) * 1e3, "fetch": (t_fetch - t_rank) * 1e3}
        result.cpu_ms = {"embed": (c_embed - c0) * 1e3, "gate": (c_gate - c_embed) * 1e3,
                         "search": (c_search - c_gate) * 1e3, "rank": (c_rank - c_search) * 1e3,
                         "fetch": (c_fetch - c_rank) * 1e3}
        entry: dict[str, Any] | None = None
        if req.log and s.recall_log:
            entry = {
                "recall_id": recall_id, "user_id": req.user_id, "agent_id": req.agent_id, "run_id": req.run_id,
                "at": now.isoformat(),
                "query": req.query, "rewritten_query": result.rewritten_query, "top_k": top_k, "min_score": min_score,
                "filter": flt.to_expr(),
                "time_windows": [{"said": w.said, "start": w.start.isoformat(), "end": w.end.isoformat()}
                                 for w in windows],
                "model": self.embedder.info.model_dump(), "hybrid": lexical_used, "gate": gate,
                "timings_ms": dict(result.timings_ms),
                "cpu_ms": {k: round(v, 3) for k, v in result.cpu_ms.items()},
                "candidates": [{"memory_id": r.hit.record.id, "summary": r.hit.record.summary,
                                **r.parts.model_dump(), "chosen": r.chosen, "reason": r.reason}
                               for r in ranked],
                "chosen": [h.memory_id for h in hits],
                "newer_first": moves,
                "archived": [h.memory_id for h in hits if h.archived],
                "rehydrated": rehydrated,
            }
        return result, entry

    def _hits(self, chosen: list[Ranked], req: RecallRequest, now: datetime) -> list[RecallHit]:
        """The chosen rows as hits, with their content from the row when it holds it (no S3 GET),
        else from the original: one longer than ``index_content_bytes``, or every one when the
        request says ``fetch_originals``.

        Never shown: a row of another user, an expired one, or, when its original is read, one
        whose original is gone. A row answered from the index is trusted as its original's copy:
        every write puts the original first, and every erasure (``erase_user``, ``erase_records``:
        scoped erasure, expiry) removes the index rows before the originals, so a row outlives its
        original only when something outside the service deletes the original, or when an ingest
        worker that read an original before an erasure writes its row after it (a window of one
        batch; the S3 read this replaces showed such a row in listings already, not in recall)."""
        fetch = [r for r in chosen if req.fetch_originals or r.hit.record.content is None]
        fetched = self.store.fetch([r.hit.record.storage_key for r in fetch])
        from_store = {r.hit.record.id for r in fetch}
        hits = []
        for r in chosen:
            rec = r.hit.record
            archived = rec.storage_key in fetched.archived
            if rec.id not in from_store:
                doc: dict[str, Any] | None = {"user_id": rec.user_id, "content": rec.content,
                                              "metadata": rec.metadata}
            elif archived:
                # In GLACIER / DEEP_ARCHIVE: serve what the index has now, ask S3 for a copy
                # so a later recall returns the full original. The row is this user's (filter).
                self._request_restore(rec.storage_key)
                doc = {"user_id": rec.user_id, "content": rec.content or rec.summary, "metadata": rec.metadata}
            else:
                doc = fetched.docs[rec.storage_key]
            if (doc is None or doc.get("user_id") != req.user_id or rec.user_id != req.user_id
                    or (rec.expires_at and rec.expires_at <= now)):
                continue  # never show an index row whose original is gone, not this user's, or expired
            hits.append(RecallHit(
                memory_id=rec.id, content=doc.get("content") or rec.summary, summary=rec.summary,
                score=r.parts.score, similarity=r.parts.similarity, parts=r.parts,
                created_at=rec.created_at, memory_type=rec.memory_type, importance=rec.importance,
                topic_id=rec.topic_id, source=rec.source, session_id=rec.session_id,
                metadata=doc.get("metadata", {}), agent_id=rec.agent_id, run_id=rec.run_id,
                expires_at=rec.expires_at, archived=archived and rec.content is None, reason=r.reason))
        return hits

    def _gate(self, query: str, vector: Any, whole_user: bool = False) -> dict[str, Any]:
        """The query model's verdict: is anything personal asked? (~0.1-0.2 ms: a small network over
        the query's embedding, which recall computes anyway, and its hashed n-grams). A question
        about the user as a whole is answered whatever the model says: the model's score stays in
        the verdict beside the reason."""
        v = self.judge.query(query, vector)
        threshold = float(self.judge.gate.meta["threshold"])
        if whole_user:
            return {"personal": v.personal, "threshold": threshold, "decision": "answer", "whole_user": True,
                    "reason": "a question about the user as a whole (judge.profile): answered with no floor"}
        if _keywords_only(query):
            return {"personal": v.personal, "threshold": threshold, "decision": "answer", "keywords": True,
                    "reason": "a keyword search, not a question: the gate judges questions and requests"}
        return {"personal": v.personal, "threshold": threshold, "decision": "nothing" if v.general else "answer",
                "reason": (f"query model: personal {v.personal:.2f} < {threshold:.2f}, a general question"
                           if v.general else f"query model: personal {v.personal:.2f} >= {threshold:.2f}")}

    def _override(self, gate: dict[str, Any], candidates: Sequence[Candidate]) -> dict[str, Any]:
        """A question the query model calls general is answered anyway when a memory matches it more
        strongly than 98 % of general questions match anything (``override_similarity``, chosen by
        ``train judge`` on stored training profiles): it asks about something this user told us."""
        override = self.judge.gate.meta.get("override_similarity")
        if gate["decision"] != "nothing" or override is None or not candidates:
            return gate
        strongest = max(candidates, key=lambda c: c.similarity)
        if strongest.similarity < float(override):
            return gate
        return {**gate, "decision": "answer", "overridden_by": strongest.record.id,
                "reason": f"{gate['reason']}; but memory {strongest.record.id} matches it strongly "
                          f"(similarity {strongest.similarity:.2f} >= {float(override):.2f})"}

    def _second_look(self, gate: dict[str, Any], candidates: Sequence[Candidate]) -> dict[str, Any]:
        """The gate's decision with what the search found (:mod:`agent_memory.judge.answer`): the
        query model's score and the best candidate's similarity together decide, unless the most
        relevant candidate is a long memory (a document chunk), whose similarity it cannot read."""
        model = self.judge.answer
        if model is None or not candidates:
            return gate
        top = candidates[0].record  # the most relevant (candidates come sorted by relevance)
        if top.content is None or len(top.content) > ANSWER_MAX_CHARS:
            return {**gate, "second_look": f"skipped: the most relevant memory ({top.id}) is longer than the "
                                           f"statements the answer model reads ({ANSWER_MAX_CHARS} characters)"}
        best = max(candidates, key=lambda c: c.similarity)
        score = model.score(gate["personal"], best.similarity)
        answer = score >= model.threshold
        return {**gate, "decision": "answer" if answer else "nothing", "answer_score": round(score, 4),
                "answer_threshold": model.threshold, "best_similarity": round(best.similarity, 4),
                "best_memory": best.record.id,
                "reason": f"{gate['reason']}; with the best match (memory {best.record.id}, similarity "
                          f"{best.similarity:.2f}): answer {score:.2f} {'>=' if answer else '<'} {model.threshold:.2f}"}

    def _request_restore(self, key: str) -> None:
        request_restore(self.store, key)

    def _owned_record(self, memory_id: str, user_id: str | None, agent_id: str | None = None,
                      run_id: str | None = None) -> IndexRecord:
        validate_memory_id(memory_id)
        for value, kind in ((user_id, "user_id"), (agent_id, "agent_id"), (run_id, "run_id")):
            if value is not None:
                validate_id(value, kind)
        scope = MemoryFilter(user_id=user_id or "", active_only=False, include_deleted=True, sources=None,
                             agent_ids=visible(agent_id, "agent_id"), run_ids=visible(run_id, "run_id"))
        found = self.index.get([memory_id])
        if found and (user_id is None or found[0].user_id == user_id) and _passes(found[0], scope):
            return found[0]
        if user_id is not None and not found:  # a cold memory: out of the index, in the user's manifest
            cold = [r for r in self._cold(user_id) if r.id == memory_id and _passes(r, scope)]
            if cold:
                return cold[0]
        raise NotFoundError(f"memory {memory_id} not found")

    def get(self, memory_id: str, user_id: str | None = None, *, agent_id: str | None = None,
            run_id: str | None = None) -> dict[str, Any]:
        """The index record and the original. With ``user_id``, another user's memory is 'not found';
        with ``agent_id`` / ``run_id``, so is another agent's / run's."""
        rec = self._owned_record(memory_id, user_id, agent_id, run_id)
        try:
            original = self._load_original(rec.user_id, memory_id)
        except ArchivedError:
            self._request_restore(rec.storage_key)
            return {"record": rec.model_dump(mode="json"), "original": None, "archived": True}
        if original is None:
            raise NotFoundError(f"memory {memory_id} has no original in the store")
        return {"record": rec.model_dump(mode="json"), "original": original.model_dump(mode="json")}

    def timeline(self, user_id: str, *, include_inactive: bool = False, include_deleted: bool = False,
                 limit: int = 50, before: datetime | None = None, agent_id: str | None = None,
                 run_id: str | None = None, filters: Filters | dict[str, Any] | str | None = None,
                 include_expired: bool = False) -> list[IndexRecord]:
        """The user's memories, newest first; page with ``before`` = last item's created_at.
        ``agent_id`` / ``run_id`` show what that agent / run sees (as :meth:`recall` does);
        ``filters`` as in :meth:`recall`; expired memories (until the daily job erases them) only
        with ``include_expired``."""
        if not 1 <= limit <= 1000:
            raise InvalidInputError("limit must be between 1 and 1000")
        flt = MemoryFilter(user_id=user_id, active_only=not include_inactive,
                           include_deleted=include_deleted, sources=None,
                           created_before_ms=int(before.timestamp() * 1000) if before else None,
                           agent_ids=visible(agent_id, "agent_id"), run_ids=visible(run_id, "run_id"),
                           where=as_filters(filters), live_at_ms=None if include_expired else to_ms(self.clock()))
        rows = [*self.index.query(flt), *(r for r in self._cold(user_id) if _passes(r, flt))]
        return sorted(rows, key=lambda r: (r.created_at, r.id), reverse=True)[:limit]

    def _cold(self, user_id: str) -> list[IndexRecord]:
        return load_cold(self.store, self.settings.cold_prefix, validate_id(user_id, "user_id"))

    def rehydrate(self, user_id: str, limit: int | None = None) -> dict[str, Any]:
        """Re-embed and re-index up to ``limit`` (``rehydrate_limit``) of the user's cold memories
        (see :mod:`agent_memory.tiering`), newest first; archived originals get a restore request."""
        cold = self._cold(user_id)
        if not cold:
            return {"rehydrated": 0, "archived_pending": 0, "remaining_cold": 0}
        limit = self.settings.rehydrate_limit if limit is None else limit
        batch = sorted(cold, key=lambda r: (r.created_at, r.id), reverse=True)[:limit]
        fetched = self.store.fetch([r.storage_key for r in batch])
        originals = []
        for r in batch:
            doc = fetched.docs.get(r.storage_key)
            if doc is None:
                continue
            original = Original.model_validate(doc)
            original.state.tier, original.state.cold_at = "hot", None
            self.store.put_json(r.storage_key, original.model_dump(mode="json"))
            originals.append(original)
        for key in fetched.archived:
            self.store.restore(key)
        if originals:
            self.index_originals(originals)
        done = {o.memory_id for o in originals}
        remaining = [r for r in cold if r.id not in done]
        save_cold(self.store, self.settings.cold_prefix, user_id, remaining)
        return {"rehydrated": len(done), "archived_pending": len(fetched.archived), "remaining_cold": len(remaining)}

    def versions(self, topic_id: str, *, user_id: str, agent_id: str | None = None,
                 run_id: str | None = None) -> list[IndexRecord]:
        """Every version of one topic of one user, oldest first (the active one is last); with
        ``agent_id`` / ``run_id`` only the versions that agent / run sees."""
        flt = MemoryFilter(user_id=user_id, topic_id=topic_id, active_only=False,
                           include_deleted=True, sources=None, agent_ids=visible(agent_id, "agent_id"),
                           run_ids=visible(run_id, "run_id"))
        rows = {r.id: r for r in [*(c for c in self._cold(user_id) if _passes(c, flt)), *self.index.query(flt)]}
        return sorted(rows.values(), key=lambda r: (r.created_at, r.id))

    def users(self, limit: int = 1000) -> list[dict[str, Any]]:
        """Users with originals in the store and how many each has (the canary excluded), by id.
        Counted from the store, the source of truth, so it includes memories not yet indexed."""
        if not 1 <= limit <= 10_000:
            raise InvalidInputError("limit must be between 1 and 10000")
        counts: dict[str, int] = {}
        for key in self.store.list_keys(self.settings.key_prefix):
            user, _, name = key.removeprefix(self.settings.key_prefix).partition("/")
            if name.endswith(".json") and user != self.settings.canary_user_id:
                counts[user] = counts.get(user, 0) + 1
        return [{"user_id": u, "memories": n} for u, n in sorted(counts.items())[:limit]]

    def recalls(self, user_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """The recall log of one user, newest first."""
        return self.recall_log.list(user_id, limit)

    # ------------------------------------------------------------ forgetting
    def forget(self, memory_id: str, user_id: str | None = None, *, agent_id: str | None = None,
               run_id: str | None = None) -> IndexRecord:
        """Soft delete: the memory stays in history (``deleted_at`` set) but never comes back from recall.
        With ``agent_id`` / ``run_id``, a memory that agent / run cannot see is 'not found'."""
        return self._set_deleted(memory_id, user_id, self.clock(), agent_id, run_id)

    def restore(self, memory_id: str, user_id: str | None = None, *, agent_id: str | None = None,
                run_id: str | None = None) -> IndexRecord:
        """Undo :meth:`forget`."""
        return self._set_deleted(memory_id, user_id, None, agent_id, run_id)

    def correct(self, memory_id: str, user_id: str | None = None, *, decision: str, of: str | None = None,
                agent_id: str | None = None, run_id: str | None = None) -> IndexRecord:
        """Overrule the change detector on one memory: the memory it judged, the newer one.

        Why: the detector errs at measured rates (held-out, it supersedes about one unrelated
        memory in nine and finds about six changes in ten; README, "Judgement"), and a wrong
        verdict hides a true memory or leaves a stale one current. ``decision="unrelated"`` undoes
        what it did: a memory stored as a duplicate is active again; one that joined another's
        topic as its new value leaves the topic, is active again, and the topic's newest remaining
        memory is current once more. ``decision="new_version", of=X``: this memory and X are
        values of one attribute, so they share a topic and the newer is current (the topic rule
        everywhere: the latest ``created_at`` wins); an earlier link of this memory is undone
        first. ``provenance.change`` then says the caller decided, when, and keeps the verdict it
        replaced (``was``). Refused with a 409: a deleted (restore it first) or cold memory, ``of``
        in another agent's or run's scope, and "unrelated" for a memory the detector never linked
        (its topic came from the caller, or it is the older side: correct the newer one)."""
        req: CorrectionRequest = validated(CorrectionRequest, decision=decision, of=of)
        rec = self._owned_record(memory_id, user_id, agent_id, run_id)
        o = self._correctable(rec)
        target = None
        if req.of is not None:
            if req.of == memory_id:
                raise InvalidInputError("a memory cannot be a new version of itself")
            target = self._owned_record(req.of, rec.user_id, agent_id, run_id)
            self._correctable(target)
            if (target.agent_id, target.run_id) != (rec.agent_id, rec.run_id):
                raise ConflictError(f"memory {req.of} belongs to another agent or run than {memory_id}: "
                                    "versions are kept per scope")
        self._versions.correct(o, target, req.decision)
        return self._owned_record(memory_id, user_id, agent_id, run_id)

    def _correctable(self, rec: IndexRecord) -> Original:
        if rec.deleted_at is not None:
            raise ConflictError(f"memory {rec.id} is deleted: restore it first")
        if rec.tier == "cold":
            raise ConflictError(f"memory {rec.id} is in the cold tier: rehydrate it first")
        return self._original_of(rec)

    def _original_of(self, rec: IndexRecord) -> Original:
        """``rec``'s original, to be rewritten: an archived one gets a restore request and a 409."""
        try:
            original = self._load_original(rec.user_id, rec.id)
        except ArchivedError as exc:
            self._request_restore(rec.storage_key)
            raise ArchivedError(f"memory {rec.id}'s original is archived; a restore was requested, "
                                "try again when it completes (hours for GLACIER)") from exc
        if original is None:
            raise NotFoundError(f"memory {rec.id} has no original in the store")
        return original

    def _set_deleted(self, memory_id: str, user_id: str | None, when: datetime | None,
                     agent_id: str | None = None, run_id: str | None = None) -> IndexRecord:
        rec = self._owned_record(memory_id, user_id, agent_id, run_id)
        original = self._original_of(rec)
        original.state.deleted_at = when
        self.store.put_json(rec.storage_key, original.model_dump(mode="json"))  # S3 first
        if rec.tier == "cold":
            save_cold(self.store, self.settings.cold_prefix, rec.user_id,
                      [r.model_copy(update={"deleted_at": when}) if r.id == memory_id else r
                       for r in self._cold(rec.user_id)])
        else:
            self.index.set_state(memory_id, rec.is_active, when)
        return rec.model_copy(update={"deleted_at": when})

    def erase_user(self, user_id: str, *, agent_id: str | None = None, run_id: str | None = None) -> dict[str, int]:
        """Remove every index entry, every original (all S3 versions) and the recall log of a user.

        With ``agent_id`` and/or ``run_id``, only what belongs to exactly that agent / run (never the
        shared memories): its memories (index row, every S3 version, the whole document of a
        chunked one), its turn decisions and the recalls made as that agent / run."""
        if agent_id is not None or run_id is not None:
            return self._erase_scope(user_id, agent_id, run_id)
        prefix = user_prefix(self.settings.key_prefix, user_id)
        n_index = self.index.delete_user(user_id)
        n_objects = self.store.delete_all_versions(prefix)
        for prefix in (self.settings.cold_prefix, self.settings.documents_prefix, self.settings.decisions_prefix):
            n_objects += self.store.delete_all_versions(user_prefix(prefix, user_id))
        n_logs = self.recall_log.erase(user_id)
        return {"index_entries": n_index, "object_versions": n_objects, "recall_logs": n_logs}

    def _erase_scope(self, user_id: str, agent_id: str | None, run_id: str | None) -> dict[str, int]:
        flt = MemoryFilter(user_id=user_id, active_only=False, include_deleted=True, sources=None,
                           agent_ids=exactly(agent_id, "agent_id"), run_ids=exactly(run_id, "run_id"))
        rows = {r.id: r for r in [*(r for r in self._cold(user_id) if _passes(r, flt)), *self.index.query(flt)]}
        counts = self.erase_records(user_id, list(rows.values()))

        def in_scope(doc: dict[str, Any]) -> bool:
            return ((agent_id is None or doc.get("agent_id") == agent_id)
                    and (run_id is None or doc.get("run_id") == run_id))

        counts["object_versions"] += self.store.delete_where(
            user_prefix(self.settings.decisions_prefix, user_id), in_scope)
        self.recall_log.flush()  # a queued entry written after the erasure would outlive it
        counts["recall_logs"] = self.store.delete_where(user_prefix(self.settings.recall_log_prefix, user_id), in_scope)
        return counts

    def erase_records(self, user_id: str, records: Sequence[IndexRecord]) -> dict[str, int]:
        """Hard-delete these memories of one user: the index rows, then every S3 version of each
        original (and of the whole document of a chunked one), the cold-manifest entries and their
        summaries in the recall log. Used by a scoped erasure and by the expiry job."""
        if not records:
            return {"index_entries": 0, "object_versions": 0, "recall_logs": 0, "recall_logs_scrubbed": 0}
        ids = {r.id for r in records}
        documents: set[str] = set()
        for r in records:
            with suppress(AgentMemoryError):  # archived or gone: its own versions still go below
                original = self._load_original(user_id, r.id)
                if original is not None and original.provenance.get("document"):
                    documents.add(str(original.provenance["document"]))
        # The index rows go first: recall answers from a row without reading its original, so a
        # row must never outlive the original (as in ``erase_user``).
        hot = [r.id for r in records if r.tier != "cold"]
        self.index.delete(hot)
        n_objects = sum(self.store.delete_all_versions(r.storage_key) for r in records)
        n_objects += sum(self.store.delete_all_versions(d) for d in sorted(documents))
        cold = self._cold(user_id)
        if any(r.id in ids for r in cold):
            save_cold(self.store, self.settings.cold_prefix, user_id, [r for r in cold if r.id not in ids])
        scrubbed = self.recall_log.scrub(user_id, ids)  # the log keeps who was chosen, not what they said
        return {"index_entries": len(hot), "object_versions": n_objects, "recall_logs": 0,
                "recall_logs_scrubbed": scrubbed}

    # ---------------------------------------------------------- working memory
    def working(self, session_id: str, user_id: str = "default") -> WorkingMemory:
        """Task state for one session (see :mod:`agent_memory.working`): a TTL'd key-value store
        kept out of the long-term index."""
        if self._working is None:
            self._working = make_working_store(self.settings)
        return WorkingMemory(self._working, user_id, session_id, self.settings.working_ttl_s)

    # -------------------------------------------------------------- operations
    def iter_originals(self, user_id: str | None = None) -> Iterable[Original]:
        """Every original in the store (the source of truth), optionally of one user."""
        prefix = user_prefix(self.settings.key_prefix, user_id) if user_id else self.settings.key_prefix
        for key in self.store.list_keys(prefix):
            if key.endswith(".json"):
                yield Original.model_validate(self.store.get_json(key))

    def corrections(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Every caller's correction of the change detector (:meth:`correct`), of one user or all,
        as a labelled pair for ``agent-memory train judge --extra-pairs``
        (:mod:`agent_memory.judge.corrections`). A pair whose other memory is gone or archived is
        left out (an export asks for no restores)."""
        if user_id is not None:
            validate_id(user_id, "user_id")

        def load(owner: str, memory_id: str) -> Original | None:
            with suppress(ArchivedError):
                return self._load_original(owner, memory_id)
            return None

        return correction_pairs(self.iter_originals(user_id), load)

    def export(self, user_id: str, page_size: int = 500) -> Iterable[dict[str, Any]]:
        """Every export record of the user (``agent-memory/v1``, see :mod:`agent_memory.portability`)."""
        from agent_memory.portability import iter_pages

        for page in iter_pages(self, user_id, page_size):
            yield from page.records

    def import_records(self, user_id: str, records: Sequence[dict[str, Any]], *,
                       from_format: str = "agent-memory") -> dict[str, int]:
        """Import export records (or mem0 ``get_all()`` items) of one user: validated whole first,
        idempotent by memory id, states kept as given (see :mod:`agent_memory.portability`)."""
        from dataclasses import asdict

        from agent_memory.portability import import_records, parse_records
        from agent_memory.portability.from_mem0 import mem0_converter

        if from_format not in ("agent-memory", "mem0"):
            raise InvalidInputError(f"from_format {from_format!r}: choose agent-memory or mem0")
        convert = (mem0_converter(user_id, summary_chars=self.settings.summary_chars,
                                  importance=self.settings.default_importance) if from_format == "mem0" else None)
        parsed = parse_records(((f"record {i}", r) for i, r in enumerate(records, 1)),
                               user_id=validate_id(user_id, "user_id"), settings=self.settings, convert=convert)
        return {"records": len(parsed), **asdict(import_records(self, parsed))}

    def health(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": "ok"}
        for name, check in (("index", self.index.ping), ("store", self.store.ping)):
            try:
                check()
                out[name] = "ok"
            except AgentMemoryError as exc:
                out[name] = f"unavailable: {exc}"
                out["status"] = "degraded"
        out["embedding"] = self.embedder.info.model_dump()
        return out

    def selfcheck(self) -> dict[str, Any]:
        """The canary: write a memory for a reserved user, recall it at once (Strong), check it
        ranks first, erase it. Returns ``ok`` and timings; never raises for a failed check."""
        return run_selfcheck(self)

    def close(self) -> None:
        """Write the queued recall-log entries, then release the index."""
        try:
            self.recall_log.close()
        finally:
            self.index.close()


def _keywords_only(query: str) -> bool:
    """One to three words (or up to six CJK characters) with no question mark: a search for
    memories about a thing ("coffee", "护照"), which the gate, trained on questions and requests,
    has no business refusing."""
    q = query.strip()
    if re.search(r"[?？]", q):
        return False
    cjk = re.findall(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", q)
    words = re.findall(r"[^\W\d_]+|\d+", re.sub(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", " ", q))
    return (len(words) <= 3 and not cjk) or (not words and len(cjk) <= 6)


def _passes(r: IndexRecord, flt: MemoryFilter) -> bool:
    """``flt`` applied to a row outside the index (a cold one): the fields listings use."""
    return ((not flt.active_only or r.is_active) and (flt.include_deleted or r.deleted_at is None)
            and (flt.topic_id is None or r.topic_id == flt.topic_id)
            and (flt.created_before_ms is None or r.created_at.timestamp() * 1000 < flt.created_before_ms)
            and (flt.agent_ids is None or (r.agent_id or "") in flt.agent_ids)
            and (flt.run_ids is None or (r.run_id or "") in flt.run_ids) and matches(r, flt.where)
            and (flt.live_at_ms is None or r.expires_at is None or to_ms(r.expires_at) > flt.live_at_ms)
            and (flt.expired_at_ms is None or (r.expires_at is not None and to_ms(r.expires_at) <= flt.expired_at_ms)))


SUMMARY_MAX_BYTES = 4000  # the index's summary field holds 4096 bytes


def _summary(text: str, chars: int, whole: bool = False) -> str:
    """What the index keeps and searches. A chunk is kept whole (it is already bounded by
    ``chunk_tokens``): cutting it to ``summary_chars`` would hide most of it from search."""
    text = text.strip()
    if not whole:
        return text[:chars]
    data = text.encode("utf-8")[:SUMMARY_MAX_BYTES]
    return data.decode("utf-8", errors="ignore")
