"""A stored memory's vector: one embedding without the blend; with it (``context_blend``, the
default) a statement cut from ``messages`` also embeds its own turn or its words alone, and the
index keeps the normalised sum."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np

from agent_memory.embed import memory_vectors
from agent_memory.embed.base import Vectors, normalize
from agent_memory.embed.hashing import HashingEmbedder
from agent_memory.model import Original

NOW = datetime(2026, 3, 2, tzinfo=UTC)


class Counting(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> Vectors:
        self.texts += texts
        return super().embed_documents(texts)


def original(summary: str, context: str | None, **provenance: Any) -> Original:
    return Original(memory_id="m" * 32, user_id="u", session_id="s", content=summary, summary=summary,
                    context=context, memory_type="fact", importance=0.5, created_at=NOW, stored_at=NOW,
                    provenance=provenance)


def test_without_the_blend_each_memory_is_one_embedding_of_its_words_in_context() -> None:
    e = Counting()
    said = original("The user adopted a greyhound", "summarise this article",
                    kind="message", said_part="we adopted a greyhound")
    v = memory_vectors(e, [said])
    assert e.texts == ["summarise this article\nwe adopted a greyhound"]
    assert np.array_equal(v.stored, v.in_context)


def test_the_blend_sums_a_statements_words_alone_with_its_words_in_context() -> None:
    e = Counting()
    said = original("The user adopted a greyhound", "summarise this article",
                    kind="message", said_part="we adopted a greyhound")
    given = original("a reply", "the caller's own context", kind="statement")
    bare = original("no context at all", None, kind="message")
    v = memory_vectors(e, [said, given, bare], blend=True)
    assert e.texts == ["summarise this article\nwe adopted a greyhound", "we adopted a greyhound",
                       "the caller's own context\na reply", "no context at all"]
    in_context, words = HashingEmbedder().embed_documents(e.texts[:2])
    assert np.allclose(v.stored[0], normalize(in_context + words)[0], atol=1e-6)
    assert np.allclose(v.in_context[0], in_context)  # what the change detector searches with
    assert np.allclose(v.stored[1:], v.in_context[1:])  # a caller's context and no context: one text
    assert np.allclose(np.linalg.norm(v.stored, axis=1), 1.0, atol=1e-5)


def test_the_blend_takes_the_whole_turn_when_the_context_holds_it() -> None:
    """A sentence the trigger kept from a short turn means little alone ("It was hard to let go"
    after "I sold the old piano"): when its context ends with its turn, the blend's second text is
    that turn, not the kept words; a turn the context does not hold (a long or pasted one) falls
    back to the words."""
    turn = "So I finally sold the old piano. It was hard to let go."
    kept = original("It was hard to let go.", f"thanks!\n{turn}", kind="message",
                    said_part="It was hard to let go.", said=turn)
    pasted = original("The user runs a bakery", "summarise this", kind="message",
                      said_part="I run a bakery", said="I run a bakery\n[three pages of pasted text]")
    e = Counting()
    memory_vectors(e, [kept, pasted], blend=True)
    assert e.texts == [f"thanks!\n{turn}\nIt was hard to let go.", turn,
                       "summarise this\nI run a bakery", "I run a bakery"]


def test_a_text_two_statements_share_is_embedded_once() -> None:
    """Two statements of one short turn share their second text (the turn): it is embedded once,
    and each still gets the same vector it would get alone."""
    turn = "So I finally sold the old piano. It was hard to let go."
    a = original("The user sold the old piano.", f"thanks!\n{turn}", kind="message",
                 said_part="So I finally sold the old piano.", said=turn)
    b = original("It was hard to let go.", f"thanks!\n{turn}", kind="message",
                 said_part="It was hard to let go.", said=turn)
    e = Counting()
    both = memory_vectors(e, [a, b], blend=True)
    assert e.texts.count(turn) == 1 and len(e.texts) == 3
    for i, o in enumerate((a, b)):
        alone = memory_vectors(HashingEmbedder(), [o], blend=True)
        assert np.allclose(both.stored[i], alone.stored[0], atol=1e-6)
        assert np.allclose(both.in_context[i], alone.in_context[0], atol=1e-6)
