"""Start and stop helper server processes on loopback, tracked by PID."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout_s: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process for {url} exited with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1.0).status_code < 500:
                return
        time.sleep(0.1)
    raise TimeoutError(f"{url} not ready after {timeout_s}s")


@dataclass
class ServerProcess:
    """A child process in its own process group, so stop() takes its children too."""

    proc: subprocess.Popen[bytes]
    url: str

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self, timeout_s: float = 10.0) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)


def start_moto(port: int = 0, log_path: Path | None = None, timeout_s: float = 30.0) -> ServerProcess:
    """A moto server (S3, SQS, ...) on 127.0.0.1 as a separate process, speaking real HTTP."""
    port = port or free_port()
    out = log_path.open("ab") if log_path else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
    )
    server = ServerProcess(proc, f"http://127.0.0.1:{port}")
    try:
        wait_http(f"{server.url}/moto-api/", timeout_s, proc)
    except Exception:
        server.stop()
        raise
    return server
