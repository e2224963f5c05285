"""A standardized multinomial logistic regression: numpy inference, numpy training.

Why this and not a library: inference is one matrix product (microseconds, nothing to add to the
Lambda bundle), and training a few thousand rows full-batch with Adam takes seconds; scikit-learn
would be a 40 MB dependency for ten lines. Training is deterministic (zero init, full batch), so
``agent-memory train judge`` reproduces the committed weights bit for bit on the same machine.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float32]


@dataclass
class LinearModel:
    classes: tuple[str, ...]
    weights: Array
    """(features, classes)"""
    bias: Array
    mean: Array
    scale: Array
    meta: dict[str, Any] = field(default_factory=dict)
    """Thresholds chosen on the training split and how they were chosen (saved with the weights)."""

    @property
    def dim(self) -> int:
        return int(self.weights.shape[0])

    def logits(self, x: npt.ArrayLike) -> Array:
        z = (np.atleast_2d(np.asarray(x, dtype=np.float32)) - self.mean) / self.scale
        out: Array = (z @ self.weights + self.bias).astype(np.float32)
        return out

    def proba(self, x: npt.ArrayLike) -> Array:
        """Class probabilities, one row per input row."""
        return softmax(self.logits(x))

    def save(self, path: Path) -> None:
        save_arrays(path, self.classes, self.meta, weights=self.weights, bias=self.bias, mean=self.mean,
                    scale=self.scale)

    @classmethod
    def from_arrays(cls, classes: tuple[str, ...], arrays: dict[str, Array], meta: dict[str, Any]) -> LinearModel:
        return cls(classes, arrays["weights"], arrays["bias"], arrays["mean"], arrays["scale"], meta)

    @classmethod
    def load(cls, path: Path) -> LinearModel:
        return cls.from_arrays(*load_arrays(path))


def save_arrays(path: Path, classes: tuple[str, ...], meta: dict[str, Any], **arrays: Array) -> None:
    """One weights file: float32 arrays, the class names and the meta as JSON (any model kind)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:  # np.savez would add ".npz" to a name without it
        payload: dict[str, Any] = {k: v.astype(np.float32) for k, v in arrays.items()}
        np.savez_compressed(f, **payload, classes=np.array(classes), meta=np.array(json.dumps(meta, sort_keys=True)))


def load_arrays(path: Path) -> tuple[tuple[str, ...], dict[str, Array], dict[str, Any]]:
    """A weights file's class names, arrays and meta, read once."""
    with np.load(path, allow_pickle=False) as z:  # plain arrays only: a weights file runs no code
        arrays = {k: z[k] for k in z.files if k not in ("classes", "meta")}
        return tuple(str(c) for c in z["classes"]), arrays, json.loads(str(z["meta"]))


def softmax(z: Array) -> Array:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: Array = e / e.sum(axis=1, keepdims=True)
    return out


def standardizer(xa: Array, standardize: npt.ArrayLike | None = None, raw_scale: float = 10.0) -> tuple[Array, Array]:
    """Mean and scale per column: dense columns standardized, sparse ones (outside ``standardize``;
    default: non-zero in fewer than a fifth of the rows) only multiplied by ``raw_scale``."""
    mean = xa.mean(axis=0)
    scale = xa.std(axis=0)
    scale[scale < 1e-6] = 1.0
    dense = (xa != 0).mean(axis=0) >= 0.2 if standardize is None else np.asarray(standardize, dtype=bool)
    mean[~dense] = 0.0
    scale[~dense] = 1.0 / raw_scale
    return mean.astype(np.float32), scale.astype(np.float32)


def class_weights(ya: npt.NDArray[np.int64], classes: int) -> Array:
    """Per-row weights summing to 1, each class weighing the same in total."""
    counts = np.maximum(np.bincount(ya, minlength=classes), 1).astype(np.float32)
    w = (len(ya) / (classes * counts))[ya]
    out: Array = (w / w.sum()).astype(np.float32)
    return out


def fit(x: npt.ArrayLike, y: npt.ArrayLike, classes: tuple[str, ...], *, l2: float = 0.03, iterations: int = 400,
        learning_rate: float = 0.05, balanced: bool = True, meta: dict[str, Any] | None = None,
        standardize: npt.ArrayLike | None = None, raw_scale: float = 10.0) -> LinearModel:
    """Fit by full-batch Adam on the mean (class-balanced) cross-entropy plus ``l2`` x |W|^2.

    ``y`` holds class indices. Dense features are standardized with the training rows' mean and
    standard deviation (kept in the model); columns outside ``standardize`` (a boolean mask;
    default: the columns non-zero in at least a fifth of the rows) are only multiplied by
    ``raw_scale``: standardizing a rare hashed n-gram blows it up into a memorised row (out of
    fold on the turns: 39 % of the noise dropped instead of 87 % at the same keep rate).
    ``l2`` 0.03 and ``raw_scale`` 10 were chosen out of fold on the training split."""
    xa = np.asarray(x, dtype=np.float32)
    ya = np.asarray(y, dtype=np.int64)
    n, d = xa.shape
    c = len(classes)
    mean, scale = standardizer(xa, standardize, raw_scale)
    z = ((xa - mean) / scale).astype(np.float32)
    onehot = np.zeros((n, c), dtype=np.float32)
    onehot[np.arange(n), ya] = 1.0
    sample_w = class_weights(ya, c) if balanced else np.full(n, 1.0 / n, dtype=np.float32)
    w = np.zeros((d, c), dtype=np.float32)
    b = np.zeros(c, dtype=np.float32)
    m_w, v_w = np.zeros_like(w), np.zeros_like(w)
    m_b, v_b = np.zeros_like(b), np.zeros_like(b)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for t in range(1, iterations + 1):
        p = softmax(z @ w + b)
        g = (p - onehot) * sample_w[:, None]
        grad_w = z.T @ g + 2 * l2 * w
        grad_b = g.sum(axis=0)
        m_w = beta1 * m_w + (1 - beta1) * grad_w
        v_w = beta2 * v_w + (1 - beta2) * grad_w ** 2
        m_b = beta1 * m_b + (1 - beta1) * grad_b
        v_b = beta2 * v_b + (1 - beta2) * grad_b ** 2
        lr = learning_rate * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        w -= lr * m_w / (np.sqrt(v_w) + eps)
        b -= lr * m_b / (np.sqrt(v_b) + eps)
    return LinearModel(classes, w.astype(np.float32), b.astype(np.float32), mean.astype(np.float32),
                       scale.astype(np.float32), dict(meta or {}))


def out_of_fold(x: npt.ArrayLike, y: npt.ArrayLike, classes: tuple[str, ...], folds: int = 5, seed: int = 7,
                groups: npt.ArrayLike | None = None, fitter: Callable[..., Any] | None = None,
                **kwargs: Any) -> Array:
    """Probabilities for every training row from a model that did not see it (k-fold): what
    thresholds are chosen on, so they are not fitted to rows the model memorised. Rows of one
    ``group`` (an augmented copy and its source) share a fold. ``fitter`` (default :func:`fit`)
    lets another model (the hidden layer) be measured on the same folds."""
    fit_one = fitter or fit
    xa = np.asarray(x, dtype=np.float32)
    ya = np.asarray(y, dtype=np.int64)
    g = np.arange(len(ya)) if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1]
    fold_of = np.random.default_rng(seed).permutation(int(g.max()) + 1) % folds
    out = np.zeros((len(ya), len(classes)), dtype=np.float32)
    for k in range(folds):
        test = np.flatnonzero(fold_of[g] == k)
        train = np.flatnonzero(fold_of[g] != k)
        out[test] = fit_one(xa[train], ya[train], classes, **kwargs).proba(xa[test])
    return out
