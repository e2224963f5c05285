"""The judgement models at run time: load the committed weights, answer with a score and a reason.

Weights are per embedding provider (the features include the embedding): ``weights/<model>-
<provider>.npz``. For a provider without its own weights (an OpenAI or Bedrock embedding, the
test-only hash model) the lexical-only weights (``<model>-lexical.npz``) serve, trained on the
same corpora without the embedding; ``agent-memory train judge --provider X`` trains a provider's
own. Each verdict carries its score and the band the cascade uses: inside ``band`` a configured
language model decides (the cascade: :func:`agent_memory.pipeline.drafts.drafts` for turns,
``Versions._change_verdicts`` (:mod:`agent_memory.versions`) for pairs, :mod:`agent_memory.llm` for the models).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from agent_memory.judge.answer import AnswerModel
from agent_memory.judge.features import Array, pair_features, text_features
from agent_memory.judge.linear import LinearModel, load_arrays
from agent_memory.judge.mlp import HiddenLayerModel
from agent_memory.judge.rules import rule_signals
from agent_memory.pipeline.questions import marked_questions

if TYPE_CHECKING:
    from agent_memory.embed import Embedder

WEIGHTS = Path(__file__).resolve().parent / "weights"
Classifier = LinearModel | HiddenLayerModel
LEXICAL = "lexical"


@dataclass(frozen=True)
class TurnVerdict:
    keep: bool
    score: float
    """P(worth keeping)."""
    memory_type: str | None
    uncertain: bool
    """Inside the cascade's band: a configured language model decides."""
    reason: str


@dataclass(frozen=True)
class ChangeVerdict:
    label: str
    """``new_version``, ``duplicate`` or ``unrelated``."""
    score: float
    """The probability of ``label``."""
    probs: dict[str, float]
    uncertain: bool
    decided_by: str = "change model"
    threshold: float | None = None
    """The cut ``label`` had to reach (None: unrelated, or a language model decided): kept with
    the decision because ``Settings.change_threshold`` can move it."""


@dataclass(frozen=True)
class GateVerdict:
    personal: float
    """P(the answer depends on what this user said)."""
    general: bool
    """The query classifier's decision: nothing personal is asked."""


def feature_row(text: str, vector: Array | None, rules: bool) -> Array:
    """A text's features as the trigger, type and gate models see them, in training and at run
    time alike (the rules' signals appended when the model was trained with them)."""
    base = text_features(text, vector)
    return np.concatenate([base, rule_signals(text)]) if rules else base


class Judge:
    """The trigger, the memory-type model, the change detector and the query gate of one
    embedding provider. Stateless after loading; safe to share between threads.

    A model given as a weights file is read on first use: a recall needs the gate alone, and the
    five-network trigger takes ~50 ms to read, which a Lambda's first recall need not pay."""

    def __init__(self, provider: str, trigger: Classifier | Path, types: Classifier | Path,
                 pair: Classifier | Path, gate: Classifier | Path) -> None:
        self.provider = provider
        self._models: dict[str, Classifier | Path] = {"trigger": trigger, "types": types, "pair": pair, "gate": gate}
        self._lock = threading.Lock()
        self.uses_vectors = provider != LEXICAL

    def _model(self, name: str) -> Classifier:
        model = self._models[name]
        if isinstance(model, Path):
            with self._lock:
                model = self._models[name]
                if isinstance(model, Path):
                    model = self._models[name] = load_model(model)
        return model

    def _replace(self, name: str, model: Classifier) -> None:
        # a new dict: a copy of this Judge (copy.copy shares the dict) changes only itself
        self._models = {**self._models, name: model}

    @property
    def trigger(self) -> Classifier:
        return self._model("trigger")

    @trigger.setter
    def trigger(self, model: Classifier) -> None:
        self._replace("trigger", model)

    @property
    def types(self) -> Classifier:
        return self._model("types")

    @property
    def pair(self) -> Classifier:
        return self._model("pair")

    @property
    def gate(self) -> Classifier:
        return self._model("gate")

    def _vec(self, vector: Array | None) -> Array | None:
        return vector if self.uses_vectors else None

    def _features(self, model: Classifier, text: str, vector: Array | None) -> Array:
        return feature_row(text, self._vec(vector), bool(model.meta.get("rules")))

    def turn_matrix(self, texts: Sequence[str], vectors: Sequence[Array] | None) -> Array:
        rows = [self._features(self.trigger, t, vectors[i] if vectors is not None else None)
                for i, t in enumerate(texts)]
        return np.vstack(rows) if rows else np.zeros((0, self.trigger.dim), dtype=np.float32)

    def turns(self, texts: Sequence[str], vectors: Sequence[Array] | None = None) -> list[TurnVerdict]:
        """Keep or drop each user turn, with its memory type when kept."""
        if not texts:
            return []
        x = self.turn_matrix(texts, vectors)
        keep_p = self.trigger.proba(x)[:, self.trigger.classes.index("keep")]
        types = self.types.proba(x)
        threshold = float(self.trigger.meta["threshold"])
        lo, hi = self.trigger.meta.get("band", [threshold, threshold])
        out = []
        for p, t in zip(keep_p, types, strict=True):
            kind = self.types.classes[int(np.argmax(t))]
            keep = bool(p >= threshold)
            out.append(TurnVerdict(keep, round(float(p), 4), kind if keep else None, bool(lo <= p < hi),
                                   f"trigger model: keep {p:.2f} (threshold {threshold:.2f})"))
        return out

    def screen(self, texts: Sequence[str], embedder: Embedder) -> list[TurnVerdict]:
        """:meth:`turns` with the texts embedded first, in one batch, when these models read the
        embedding (the service's trigger and the evaluation's, one code path)."""
        if not texts:
            return []
        texts = [marked_questions(t) for t in texts]
        vectors = list(embedder.embed_documents(texts)) if self.uses_vectors else None
        return self.turns(texts, vectors)

    def change(self, existing: Sequence[str], new: str, existing_vectors: Sequence[Array | None],
               new_vector: Array | None, similarities: Sequence[float],
               new_version_threshold: float | None = None) -> list[ChangeVerdict]:
        """For each existing memory, is ``new`` a new version of it, the same fact, or unrelated?
        ``new_version_threshold`` replaces the trained one (``Settings.change_threshold``)."""
        if not existing:
            return []
        x = np.vstack([pair_features(e, new, self._vec(v), self._vec(new_vector), s)
                       for e, v, s in zip(existing, existing_vectors, similarities, strict=True)])
        probs = self.pair.proba(x)
        trained = self.pair.meta.get("thresholds", {})
        cut = {cls: float(trained.get(cls, 0.5)) for cls in ("duplicate", "new_version")}
        if new_version_threshold is not None:
            cut["new_version"] = new_version_threshold
        lo, hi = self.pair.meta.get("band", [1.0, 1.0])
        out = []
        for old, row in zip(existing, probs, strict=True):
            p = {c: round(float(v), 4) for c, v in zip(self.pair.classes, row, strict=True)}
            label = "unrelated"
            candidates = ("duplicate", "new_version") if _same_numbers(old, new) else ("new_version",)
            for cls in candidates:  # a decision needs its own threshold, else unrelated
                if p[cls] >= cut[cls] and p[cls] >= max(p[c] for c in candidates) - 1e-9:
                    label = cls
            best = max(p["duplicate"], p["new_version"])
            out.append(ChangeVerdict(label, p[label], p, bool(lo <= best < hi), threshold=cut.get(label)))
        return out

    def query(self, text: str, vector: Array | None) -> GateVerdict:
        x = self._features(self.gate, text, vector)
        p = float(self.gate.proba(x)[0, self.gate.classes.index("personal")])
        return GateVerdict(round(p, 4), p < float(self.gate.meta["threshold"]))

    @property
    def answer(self) -> AnswerModel | None:
        """The gate's second look after the search (None: the provider has no embedding to match)."""
        return AnswerModel.from_meta(self.gate.meta.get("answer"))

    @property
    def min_similarity(self) -> float | None:
        """The relevance floor chosen with the gate for a personal query (None: the model's default)."""
        value = self.gate.meta.get("min_similarity")
        return None if value is None else float(value)


def _same_numbers(a: str, b: str) -> bool:
    """A statement with other numbers is never the same fact ("PIN 1234" / "PIN 5678", "room 3" /
    "room 4"): the model may call it a duplicate, this rule does not let it."""
    na, nb = re.findall(r"\d+", a), re.findall(r"\d+", b)
    return not na or not nb or sorted(na) == sorted(nb)


_CACHE: dict[str, Judge] = {}
_LOCK = threading.Lock()


def load_model(path: Path) -> Classifier:
    """Either kind of weights file, read once: a hidden layer's holds ``w1``."""
    classes, arrays, meta = load_arrays(path)
    kind: type[LinearModel] | type[HiddenLayerModel] = HiddenLayerModel if "w1" in arrays else LinearModel
    return kind.from_arrays(classes, arrays, meta)


def weights_path(model: str, provider: str, folder: Path = WEIGHTS) -> Path:
    return folder / f"{model}-{provider}.npz"


def load_judge(provider: str, folder: Path = WEIGHTS) -> Judge:
    """The provider's own weights when trained, else the lexical-only ones (cached per process)."""
    with _LOCK:
        key = f"{folder}:{provider}"
        if key not in _CACHE:
            name = provider if weights_path("trigger", provider, folder).exists() else LEXICAL
            paths = [weights_path(m, name, folder) for m in ("trigger", "types", "pair", "gate")]
            if missing := [str(p) for p in paths if not p.exists()]:
                raise FileNotFoundError(f"judgement weights missing: {', '.join(missing)}")
            _CACHE[key] = Judge(name, *paths)  # each read on first use
        return _CACHE[key]
