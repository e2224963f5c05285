"""A real Milvus server (PyPI ``milvus``, 2.3.5) that nothing off this machine can reach.

The packaged server binds every interface and several fixed ports, so it runs in its own
network namespace (:mod:`agent_memory.local.netns`) with its gRPC port relayed to 127.0.0.1.

``python -m agent_memory.local.milvus_server [--data-dir D] [--port P]`` runs one in the foreground.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from agent_memory.local.netns import NamespacedServer

MILVUS_PORT = 19530


def _serve_in_namespace(data_dir: Path) -> None:
    """What runs inside the namespace: the packaged server, until SIGTERM."""
    from milvus import MilvusServer

    server = MilvusServer()
    server.set_base_dir(str(data_dir / "milvus"))
    server.listen_port = MILVUS_PORT
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    server.start()
    try:
        while not stop["now"] and server.server_proc and server.server_proc.poll() is None:
            time.sleep(0.2)
    finally:
        server.stop()


class LoopbackMilvus(NamespacedServer):
    def __init__(self, data_dir: Path, port: int = 0) -> None:
        super().__init__(argv=[sys.executable, "-m", "agent_memory.local.milvus_server", "--inside",
                               str(data_dir.resolve())], inner_port=MILVUS_PORT, workdir=data_dir.resolve(),
                         port=port)

    @property
    def uri(self) -> str:
        return self.url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--inside", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, default=Path(".local/milvus-server"))
    parser.add_argument("--port", type=int, default=19530)
    args = parser.parse_args()
    if args.inside:
        _serve_in_namespace(args.inside)
        return
    server = LoopbackMilvus(args.data_dir, port=args.port).start()
    print(f"Milvus ready at {server.uri} (pid {server.pid})", flush=True)
    signals = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        signal.sigwait(signals)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
