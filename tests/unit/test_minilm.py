"""Our numpy forward pass of all-MiniLM-L6-v2 against figures sentence-transformers publishes."""

from __future__ import annotations

import numpy as np
import pytest

from agent_memory.embed.minilm import MiniLM


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM()


@pytest.mark.parametrize(("a", "b", "published"), [
    # sentence-transformers documentation, semantic textual similarity with all-MiniLM-L6-v2
    ("A man is eating food.", "A man is eating a piece of bread.", 0.7553),
    ("The new movie is awesome", "The new movie is so great", 0.8939),
    ("The cat sits outside", "The dog plays in the garden", 0.2838),
])
def test_similarity_matches_the_reference_implementation(model: MiniLM, a: str, b: str, published: float) -> None:
    v = model.encode([a, b])
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assert float(v[0] @ v[1]) == pytest.approx(published, abs=2e-4)


def test_padding_does_not_change_a_vector(model: MiniLM) -> None:
    short = "Tea."
    alone = model.encode([short])[0]
    batched = model.encode([short, "A much longer sentence that forces padding on the short one."])[0]
    assert np.allclose(alone, batched, atol=1e-5)
    assert model.encode([]).shape == (0, 384)
