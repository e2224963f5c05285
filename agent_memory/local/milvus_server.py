"""Start a real Milvus server (PyPI ``milvus``) that nothing off this machine can reach.

The packaged server binds all interfaces. We start it with ``unshare --net``
in a fresh network namespace (only loopback, brought up here), relay its gRPC
port through a unix socket in its data folder, and expose it on
127.0.0.1:<port> in the caller's namespace. Needs root (or unprivileged user
namespaces); tests and ``make up INDEX=milvus`` run as root on our machines.

Run as a module inside the namespace: ``python -m agent_memory.local.milvus_server
--inside DATA_DIR``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from agent_memory.local.processes import die_with_parent
from agent_memory.local.relay import Relay, tcp_to_unix, unix_to_tcp

MILVUS_PORT_INSIDE = 19530
SOCKET_NAME = "milvus-grpc.sock"


def _loopback_up() -> None:
    """Bring ``lo`` up in a new network namespace (ioctl SIOCSIFFLAGS, no ``ip`` tool needed)."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifr = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(s.fileno(), siocgifflags, ifr))[1]
        fcntl.ioctl(s.fileno(), siocsifflags, struct.pack("16sh", b"lo", flags | iff_up))


def _run_inside(data_dir: Path) -> None:
    """Entry point inside the namespace: loopback up, relay, Milvus, wait for SIGTERM."""
    from milvus import MilvusServer

    _loopback_up()
    sock_path = data_dir / SOCKET_NAME
    with contextlib.suppress(FileNotFoundError):
        sock_path.unlink()
    server = MilvusServer()
    server.set_base_dir(str(data_dir / "milvus"))
    server.listen_port = MILVUS_PORT_INSIDE
    stop = {"now": False}

    def _term(*_: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    server.start()
    relay = unix_to_tcp(str(sock_path), MILVUS_PORT_INSIDE)
    (data_dir / "ready").write_text(str(os.getpid()))
    try:
        while not stop["now"] and server.server_proc and server.server_proc.poll() is None:
            time.sleep(0.2)
    finally:
        relay.close()
        server.stop()


@dataclass
class LoopbackMilvus:
    """A running Milvus server reachable only at ``uri`` (127.0.0.1)."""

    data_dir: Path
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    relay: Relay | None = None
    log_path: Path = field(default_factory=Path)

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 180.0) -> LoopbackMilvus:
        if shutil.which("unshare") is None:
            raise RuntimeError("`unshare` (util-linux) is needed to confine Milvus to loopback")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        ready = self.data_dir / "ready"
        with contextlib.suppress(FileNotFoundError):
            ready.unlink()
        self.log_path = self.data_dir / "launcher.log"
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            ["unshare", "--net", "--", sys.executable, "-m", "agent_memory.local.milvus_server",
             "--inside", str(self.data_dir)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent,
        )
        deadline = time.monotonic() + timeout_s
        while not ready.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"Milvus exited early; see {self.log_path}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"Milvus not ready after {timeout_s}s; see {self.log_path}")
            time.sleep(0.2)
        self.relay = tcp_to_unix(self.port, str(self.data_dir / SOCKET_NAME))
        self.port = self.relay._listener.getsockname()[1]
        return self

    def stop(self) -> None:
        if self.relay:
            self.relay.close()
            self.relay = None
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self.proc = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--inside", type=Path, help="run the server in this namespace (internal)")
    parser.add_argument("--data-dir", type=Path, default=Path(".local/milvus-server"))
    parser.add_argument("--port", type=int, default=19530)
    args = parser.parse_args()
    if args.inside:
        _run_inside(args.inside)
        return
    server = LoopbackMilvus(args.data_dir, port=args.port).start()
    print(f"Milvus ready at {server.uri} (pid {server.proc.pid if server.proc else '?'})", flush=True)
    signals = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        signal.sigwait(signals)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
