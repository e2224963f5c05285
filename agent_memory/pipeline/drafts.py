"""From a remember request to drafts of memories: what the write pipeline decides to store.

- ``content``: one statement, as given (validated; duplicates are caught at indexing). Longer
  than ``chunk_tokens`` (640) it is split into overlapping chunks (``chunk_overlap`` 96 tokens;
  tokens estimated as one per CJK character and one per four other characters, the same
  estimate the prompt budget uses), each pointing to the whole document stored once at
  ``documents/{user_id}/{id}.json``.
- ``messages``: every user turn goes through the trigger (the learned model of
  :mod:`agent_memory.judge`; in its uncertain band a configured language model); kept turns become
  extracted third-person statements with their own type and importance (the request's values
  win when given; versions are found later by the change detector); an assistant turn that
  concludes something about the user becomes an ``agent_inferred`` statement. Every turn's
  decision, score and reason is returned so the caller can record it (``decisions/{user_id}/...``
  in the store) whether or not anything was kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_memory.errors import BackendUnavailableError
from agent_memory.judge.models import TurnVerdict
from agent_memory.model import RememberRequest
from agent_memory.pipeline.extract import Statement, extract, screened_pieces, statement
from agent_memory.pipeline.parts import facts_before_questions, is_question, told_parts
from agent_memory.pipeline.trigger import agent_turn_gate, decide_turn, user_voice
from agent_memory.prompt import estimate_tokens


@dataclass
class Draft:
    text: str
    context: str | None
    provenance: dict[str, Any]
    created_at: datetime | None = None
    memory_type: str | None = None
    topic_id: str | None = None
    importance: float | None = None
    source: str | None = None
    reasons: list[str] = field(default_factory=list)


_UNIT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\s\u3040-\u30ff\u3400-\u4dbf"
                   r"\u4e00-\u9fff\uac00-\ud7af]+\s*|\s+")


def chunks(text: str, size: int = 640, overlap: int = 96) -> list[str]:
    """Windows of about ``size`` tokens that overlap by about ``overlap`` tokens."""
    units = _UNIT.findall(text)
    costs = [estimate_tokens(u.strip()) if u.strip() else 0 for u in units]
    if sum(costs) <= size:
        return [text]
    out, start = [], 0
    while start < len(units):
        end, used = start, 0
        while end < len(units) and used + costs[end] <= size:
            used += costs[end]
            end += 1
        end = max(end, start + 1)
        out.append("".join(units[start:end]).strip())
        if end >= len(units):
            break
        back, kept = end, 0  # step back about ``overlap`` tokens for the next window
        while back > start + 1 and kept + costs[back - 1] <= overlap:
            back -= 1
            kept += costs[back]
        start = back
    return out


Extractor = Callable[[str, datetime], list[Statement]]
Screen = Callable[[list[str]], list[TurnVerdict]]
"""Texts -> the trigger model's verdicts (the embedding is computed inside)."""


MAX_SCREENED_CHARS = 600


def _pasted(text: str) -> bool:
    """A turn with line breaks or a long one is mostly a request with pasted material, whose
    sentences are somebody else's words: it is screened whole only."""
    return "\n" in text.strip() or len(text) > MAX_SCREENED_CHARS


def screenable(text: str) -> list[str]:
    """The sentences of a turn that are screened one by one: a single paragraph of a few
    sentences ("Wow, great! Anyway, I took my turtles to the beach yesterday."), a clause cut at a
    Chinese pause read with the clause before it (:func:`screened_pieces`); none for pasted
    material (:func:`_pasted`)."""
    return [] if _pasted(text) else screened_pieces(text)


def screened_parts(text: str) -> list[str]:
    """What :func:`screen_turns` reads of a turn besides the turn itself: the pieces of a short turn
    (:func:`screenable`) and, typed in lower case, the facts in front of closing questions
    (:func:`~agent_memory.pipeline.parts.facts_before_questions`), with the same limits."""
    if _pasted(text):
        return []
    return list(dict.fromkeys([*screened_pieces(text), *facts_before_questions(text)]))


def screen_turns(texts: list[str], screen: Screen) -> list[TurnVerdict]:
    """The trigger on each turn and on each sentence of a short multi-sentence turn (one
    ``screen`` call for all): a turn is kept when it is, or when one of its sentences is. A fact
    inside chit-chat is the usual shape of person-to-person talk: judged whole, LoCoMo's turns
    that yield an observation were kept 43 % of the time (conversations 0-2), sentence by
    sentence 90 %; on the training turns 5 points more noise is kept."""
    split = [screened_parts(t) for t in texts]
    verdicts = screen([*texts, *(p for parts in split for p in parts)])
    whole, rest = verdicts[:len(texts)], iter(verdicts[len(texts):])
    out = []
    for w, parts in zip(whole, split, strict=True):
        best = max(([next(rest) for _ in parts]), key=lambda v: v.score, default=None)
        if not w.keep and best is not None and best.keep:
            w = TurnVerdict(True, best.score, best.memory_type, best.uncertain or w.uncertain,
                            f"a sentence kept: {best.reason}")
        out.append(w)
    return out


CONTEXT_MESSAGES = 2
"""How many messages before a turn its statements keep as context. Two, not one (2026-12-04,
chosen on LoCoMo conversations 0-2 among four variants under a rule written before measuring; the
README, "Recall quality: LoCoMo", says which were added late): a reply is often about what was
said two messages back ("Did you go to the show?" - "Which one?" - "The one in Leeds." - "Yes! We
loved it."), and the question that should find the fact uses those words. LoCoMo's extracted
mode, R@10: conversations 0-2 75.5 -> 76.0, 3-5 (a check) 68.4 -> 68.9, all six 71.5 -> 71.9; R@1
fell 37.4 -> 36.4 (a wider context pulls the vector away from the statement, probably). Without
the message before (the turn alone, or no context) 0-2 gave 72.4 and 71.6: the context earns its
place."""


def statement_context(before: Sequence[str | None], turn: str) -> str | None:
    """The context a statement from ``turn`` is stored with: ``before`` (the messages before the
    turn that :func:`drafts` passes, the last ``CONTEXT_MESSAGES``) and, when the turn is short with
    several sentences (:func:`screenable`), the turn itself.

    Why the turn: a statement cut from a short turn often means nothing without the sentences the
    trigger left out ("It was tough, but I needed to do it for my biz." after "Hey Gina, I had to
    shut down my bank account."), and the question that should find it is asked in their words.
    Recall matches the context too (BM25 over context + summary, the embedding over context +
    the user's words), so the dropped sentences still count as evidence while only the kept one is
    stored as the memory. On LoCoMo conversations 0-2 the extracted mode's R@10 rose from 71.7 to
    75.9 (storing whole turns: 77.0). A long turn or one with line breaks is mostly pasted
    material, so its statements keep the messages before it alone."""
    previous = "\n".join(b for b in before if b) or None
    if not screenable(turn):
        return previous
    return f"{previous}\n{turn.strip()}" if previous else turn.strip()


def _memo(screen: Screen) -> Screen:
    """``screen`` that judges each distinct text once per request (sentences are judged when the
    turn is screened and again when its statements are written)."""
    seen: dict[str, TurnVerdict] = {}

    def call(texts: list[str]) -> list[TurnVerdict]:
        new = [t for t in dict.fromkeys(texts) if t not in seen]
        seen.update(zip(new, screen(new) if new else [], strict=True))
        return [seen[t] for t in texts]
    return call


def _judged(texts: list[str], verdicts: list[TurnVerdict], screen: Screen, when: list[datetime]
            ) -> list[list[Statement]]:
    """Statements of the turns the trigger model kept: each sentence the model keeps on its own
    becomes a statement (a greeting or a request inside a longer turn is left out); when no
    sentence stands alone, the whole turn is one. All sentences go through one ``screen`` call."""
    # the parts to choose among, none when the turn is its only part (nothing to choose)
    split = [parts if v.keep and (parts := told_parts(t)) != [t.strip()] else []
             for t, v in zip(texts, verdicts, strict=True)]
    flat = [p for parts in split for p in parts]
    judged = iter(screen(flat) if flat else [])
    out: list[list[Statement]] = []
    for text, v, parts, at in zip(texts, verdicts, split, when, strict=True):
        if not v.keep:
            out.append([])
            continue
        kept = [(p, sv) for p in parts if (sv := next(judged)).keep]
        # a question kept alone is still a question: beside a fact it is not stored ("Any tips for a
        # 15 year old taking the train alone?" after "Mia starts at a selective school in term 3")
        chosen = [k for k in kept if not is_question(k[0])] or kept or [(text.strip(), v)]
        made = [statement(p, sv.memory_type or v.memory_type or "fact", at, topic=False) for p, sv in chosen]
        if len(made) > 1 and screenable(text):
            # a sentence of a short turn is embedded with the rest of the turn: the question that
            # finds it is often asked about the moment, in words of the sentences around it
            for st in made:
                st.turn = text.strip()
        out.append(made)
    return out


def _agent_verdicts(voiced: list[str], screen: Screen, when: list[datetime]
                    ) -> tuple[list[TurnVerdict], list[list[Statement]]]:
    """The trigger model on agent turns in the user's voice, each judged whole (as measured), and
    the statements of those it keeps."""
    if not voiced:
        return [], []
    verdicts = screen(voiced)
    made = iter(_judged([t for t, v in zip(voiced, verdicts, strict=True) if v.keep], [v for v in verdicts if v.keep],
                        screen, [w for w, v in zip(when, verdicts, strict=True) if v.keep]))
    return verdicts, [next(made) if v.keep else [] for v in verdicts]


def drafts(req: RememberRequest, now: datetime, chunk_tokens: int = 640, chunk_overlap: int = 96,
           extractor: Extractor = extract, screen: Screen | None = None,
           uncertain: Extractor | None = None, model_extracts_kept: bool = False
           ) -> tuple[list[Draft], list[dict[str, Any]]]:
    """Drafts of memories and every turn's decision. With ``screen`` (the trigger model) the
    model decides user turns; without it, the rules do (:func:`decide_turn`). ``uncertain`` (a
    language model's extraction) decides the turns the model is unsure of: the cascade; with
    ``model_extracts_kept`` it also writes the statements of the turns the model kept. An agent
    turn that passes :func:`agent_turn_gate` is judged by the same model in the user's voice
    ("so you prefer window seats" as "I prefer window seats"), whole; without ``screen``, by the
    rules. On the held-out half of ``assistant-turns.jsonl`` the gate and the model keep 0.863 of
    the turns that state a fact about the user and drop 0.911 of the rest; the rules alone kept
    0.945 and dropped 0.686 (README, "Assistant turns")."""
    if req.content is not None:
        parts = chunks(req.content, chunk_tokens, chunk_overlap)
        if len(parts) == 1:
            return [Draft(req.content, req.context, {"kind": "statement"})], []
        return [Draft(p, req.context, {"kind": "chunk", "chunk": i, "of": len(parts)})
                for i, p in enumerate(parts)], []
    assert req.messages is not None
    msgs = req.messages
    live = [i for i, m in enumerate(msgs) if m.role in ("user", "assistant") and m.content.strip()]
    whens = {i: msgs[i].created_at or req.created_at or now for i in live}
    judged: dict[int, tuple[list[Statement], dict[str, Any]]] = {}
    if screen is not None:
        screen = _memo(screen)
        agents = [i for i in live if msgs[i].role == "assistant" and agent_turn_gate(msgs[i].content) is None]
        voiced = [user_voice(msgs[i].content) for i in agents]
        for i, v, statements in zip(agents, *_agent_verdicts(voiced, screen, [whens[i] for i in agents]), strict=True):
            judged[i] = statements, {"kind": v.memory_type, "score": v.score, "decided_by": "trigger model",
                                     "reason": f"inferred by the agent: {v.reason}" if v.keep else v.reason}
        users = [i for i in live if msgs[i].role == "user"]
        verdicts = screen_turns([msgs[i].content for i in users], screen)
        def to_model(v: TurnVerdict) -> bool:
            return uncertain is not None and (v.uncertain or (model_extracts_kept and v.keep))

        sure = [(i, v) for i, v in zip(users, verdicts, strict=True) if not to_model(v)]
        made = _judged([msgs[i].content for i, _ in sure], [v for _, v in sure], screen, [whens[i] for i, _ in sure])
        for (i, v), statements in zip(sure, made, strict=True):
            judged[i] = statements, {"kind": v.memory_type, "reason": v.reason, "score": v.score,
                                     "decided_by": "trigger model"}
        for i, v in zip(users, verdicts, strict=True):
            if uncertain is not None and to_model(v):
                try:
                    found = uncertain(msgs[i].content, whens[i])
                except BackendUnavailableError as exc:
                    # the model refines decisions; when it fails, the trigger model's verdict stands
                    [found] = _judged([msgs[i].content], [v], screen, [whens[i]])
                    judged[i] = found, {"kind": v.memory_type, "score": v.score, "decided_by": "trigger model",
                                        "reason": f"{v.reason}; the language model failed ({exc}), the trigger "
                                                  "model decided"}
                    continue
                note = "uncertain, the language model decided" if v.uncertain else "kept; the language model extracted"
                judged[i] = found, {"kind": found[0].memory_type if found else None, "score": v.score,
                                    "reason": f"{v.reason}; {note}", "decided_by": "language model"}
    out: list[Draft] = []
    decisions: list[dict[str, Any]] = []
    for i in live:
        m = msgs[i]
        text = user_voice(m.content) if m.role == "assistant" else m.content
        why: dict[str, Any]
        if i in judged:
            statements, why = judged[i]
        else:
            # the rules' trigger decides first (cheap, no model call for small talk); the
            # extractor (rules or a model) then writes the statements
            d = decide_turn(m.role, m.content)
            statements = extractor(text, whens[i]) if d.keep else []
            why = {"kind": d.kind, "reason": d.reason, "decided_by": "rules"}
        decisions.append({"turn": i, "role": m.role, "keep": bool(statements), **why, "statements": len(statements)})
        heard = statement_context([x.content for x in msgs[max(0, i - CONTEXT_MESSAGES):i]] if i else [req.context],
                                  m.content)
        for j, st in enumerate(statements):
            inferred = m.role == "assistant"
            out.append(Draft(
                st.text, heard,
                {"kind": "message", "turn": i, "role": m.role, "statement": j, "said": m.content,
                 "said_part": st.turn or st.said or text, "sentence": st.said or text,
                 "trigger": why["reason"], "trigger_score": why.get("score"),
                 "decided_by": why["decided_by"], "importance_reasons": st.reasons},
                # an inference takes no topic slot: through the topic it would retire what the user
                # said ("since you moved to Berlin" superseding "I moved to Lisbon")
                created_at=whens[i], memory_type=st.memory_type, topic_id=None if inferred else st.topic_id,
                importance=st.importance,
                source="agent_inferred" if inferred else None, reasons=st.reasons))
    return out, decisions
