"""Run a server in a private network namespace and expose one of its ports on 127.0.0.1.

Some servers we use as real components (the PyPI ``milvus`` server, SeaweedFS) listen on every
interface and need several fixed ports. Inside ``unshare --net`` only loopback exists, so nothing
off this machine can reach them and their fixed ports collide with nothing. One port is relayed
out through a unix socket (unix sockets live in the file system and cross namespaces) to a free
port on 127.0.0.1. Needs root or unprivileged user namespaces (``unshare``, util-linux).

Inside the namespace this module runs as ``python -m agent_memory.local.netns --port P --dir D -- CMD...``.
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
from typing import Self

from agent_memory.local.processes import die_with_parent
from agent_memory.local.relay import Relay, tcp_to_unix, unix_to_tcp

SOCKET_NAME = "relay.sock"
READY_NAME = "ready"


def loopback_up() -> None:
    """Bring ``lo`` up (a new namespace starts with it down); ioctl, so no ``ip`` tool is needed."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifr = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(s.fileno(), siocgifflags, ifr))[1]
        fcntl.ioctl(s.fileno(), siocsifflags, struct.pack("16sh", b"lo", flags | iff_up))


def _port_open(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


def _inside(port: int, workdir: Path, argv: list[str], log_path: Path) -> int:
    loopback_up()
    sock = workdir / SOCKET_NAME
    with contextlib.suppress(FileNotFoundError):
        sock.unlink()
    signals = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    with log_path.open("ab") as log:
        child = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=workdir,
                                 preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_UNBLOCK, signals))
    relay: Relay | None = None
    try:
        while not _port_open(port):
            if child.poll() is not None:
                return child.returncode or 1
            time.sleep(0.1)
        relay = unix_to_tcp(str(sock), port)
        (workdir / READY_NAME).write_text(str(os.getpid()))
        while child.poll() is None:
            if signal.sigtimedwait(signals, 0.2) is not None:
                break
        return 0
    finally:
        if relay:
            relay.close()
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()


@dataclass
class NamespacedServer:
    """``argv`` listening on ``inner_port`` inside its namespace, reachable at ``127.0.0.1:port``."""

    argv: list[str]
    inner_port: int
    workdir: Path
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    relay: Relay | None = None
    log_path: Path = field(default_factory=Path)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def start(self, timeout_s: float = 180.0) -> Self:
        if shutil.which("unshare") is None:
            raise RuntimeError("`unshare` (util-linux) is needed to confine the server to loopback")
        self.workdir.mkdir(parents=True, exist_ok=True)
        ready = self.workdir / READY_NAME
        with contextlib.suppress(FileNotFoundError):
            ready.unlink()
        self.log_path = self.workdir / "server.log"
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                ["unshare", "--net", "--", sys.executable, "-m", "agent_memory.local.netns",
                 "--port", str(self.inner_port), "--dir", str(self.workdir), "--", *self.argv],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent)
        deadline = time.monotonic() + timeout_s
        while not ready.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.argv[0]} exited early; see {self.log_path}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"{self.argv[0]} not ready after {timeout_s}s; see {self.log_path}")
            time.sleep(0.1)
        self.relay = tcp_to_unix(self.port, str(self.workdir / SOCKET_NAME))
        self.port = self.relay.port
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.relay:
            self.relay.close()
            self.relay = None
        if self.proc and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = args.argv[1:] if args.argv and args.argv[0] == "--" else args.argv
    sys.exit(_inside(args.port, args.dir, argv, args.dir / "child.log"))


if __name__ == "__main__":
    main()
