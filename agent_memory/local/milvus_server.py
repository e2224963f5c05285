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

    def healthy(self, timeout_s: float = 30.0) -> bool:
        """Whether the server answers a call. A machine that stops for longer than the server's
        etcd leases (CI once stalled 47 s: Milvus logged "clock offset is huge ... jet-lag=47s")
        leaves it running but answering "service not ready ... Abnormal" from then on."""
        if self.proc is None or self.proc.poll() is not None or self.relay is None:
            return False
        from pymilvus import MilvusClient

        try:
            client = MilvusClient(uri=self.uri, timeout=timeout_s)
            try:
                client.list_collections(timeout=timeout_s)
            finally:
                client.close()
        except Exception:  # any failure to answer is "not healthy"; the caller restarts
            return False
        return True

    def start(self, timeout_s: float = 180.0) -> LoopbackMilvus:
        """Ready means answering calls: a restarted server takes a few seconds more (8 s here)
        to recover its collections after its port opens."""
        deadline = time.monotonic() + timeout_s
        super().start(timeout_s)
        while not self.healthy(timeout_s=max(1.0, min(30.0, deadline - time.monotonic()))):
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"Milvus opened its port but did not answer within {timeout_s}s; "
                                   f"see {self.log_path}")
            time.sleep(0.5)
        return self

    def restart(self) -> LoopbackMilvus:
        """Stop and start again on the same port and data folder: clients keep their URI and the
        server recovers its collections from the folder."""
        self.stop()
        return self.start()


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
