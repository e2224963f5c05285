"""Peers measured beside us in one run: ``agent-memory eval locomo --peer mem0``, ``bench --peer mem0``.

A figure of ours means little without a peer measured on the same machine, data and embedding
model in the same run, so each peer is a column of our own evaluation and benchmark. A peer is
opened with *our* embedder (the same model, wrapped the way the peer accepts a custom one) and a
folder of its own; it stores texts for a user and searches them, nothing more. Optional
dependencies: ``pip install 'agent-memory[peers]'``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from agent_memory.embed.base import Embedder


class Peer(Protocol):
    """One peer configuration: store a user's texts, search them, say how it is configured."""

    min_similarity: float
    """Candidates whose dense similarity is below this are dropped by the peer's search."""

    def add(self, user_id: str, texts: list[str]) -> list[str]:
        """Store each text as one memory of ``user_id`` (in order); return their ids in order."""
        ...

    def search(self, user_id: str, query: str, top_k: int) -> list[str]:
        """Ids of the user's memories for ``query``, best first, at most ``top_k``."""
        ...

    def describe(self) -> dict[str, Any]:
        """The exact configuration, for the results JSON and the README."""
        ...

    def close(self) -> None: ...


PEERS = ("mem0",)
_MEM0_CONFIGURATIONS: dict[str, dict[str, Any]] = {"mem0": {}, "mem0 (dense only)": {"dense_only": True}}
"""Method name -> ``Mem0Peer`` keyword arguments; the first is mem0's default."""
MUST_EQUAL = {"mem0 (dense only)": "dense"}
"""Peer configurations that must rank exactly as one of our baselines (the wrapping's check)."""


def configurations(name: str, variants: bool = True) -> list[str]:
    """The method names a peer adds: its default first, then (``variants``) the ones that check
    our wrapping of it (e.g. mem0 with dense search only, which must rank exactly as our plain
    dense baseline)."""
    if name not in PEERS:
        raise ValueError(f"unknown peer {name!r}; available: {', '.join(PEERS)}")
    return list(_MEM0_CONFIGURATIONS)[:None if variants else 1]


def require(name: str) -> None:
    """Fail early, before a long run, when the peer is unknown or its package is missing."""
    configurations(name)
    import importlib.util

    missing = [m for m in ("mem0", "fastembed", "langchain") if importlib.util.find_spec(m) is None]
    if missing:
        raise ModuleNotFoundError(f"peer {name!r} needs {', '.join(missing)}: pip install 'agent-memory[peers]'")


def open_peers(name: str, embedder: Embedder, root: Path, variants: bool = True) -> dict[str, Peer]:
    """Each configuration of :func:`configurations`, opened with ``embedder`` in a folder of its
    own under ``root``."""
    from agent_memory.evaluation.peers.mem0 import Mem0Peer

    require(name)
    return {method: Mem0Peer(embedder, root / f"configuration-{i}", **_MEM0_CONFIGURATIONS[method])
            for i, method in enumerate(configurations(name, variants))}


def ratio(peer: float | None, ours: float | None) -> float | None:
    """``peer / ours`` rounded, or None when either side is missing or ours is zero."""
    if peer is None or not ours:
        return None
    return round(peer / ours, 3)
