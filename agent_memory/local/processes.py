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
from typing import Any

import httpx


def die_with_parent() -> None:
    """In the child before exec: get SIGTERM when the parent dies, even by SIGKILL (Linux only),
    so a killed ``up`` or test session never leaves servers behind."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


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


def spawn_http_server(cmd: list[str], port: int, health_path: str, timeout_s: float, log: Any,
                      env: dict[str, str] | None = None) -> ServerProcess:
    """Start ``cmd`` in its own process group (dies with us), wait until ``health_path`` answers."""
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=die_with_parent, env=env)
    server = ServerProcess(proc, f"http://127.0.0.1:{port}")
    try:
        wait_http(f"{server.url}{health_path}", timeout_s, proc)
    except Exception:
        server.stop()
        raise
    return server


def start_moto(port: int = 0, log_path: Path | None = None, timeout_s: float = 60.0,
               record: Path | None = None) -> ServerProcess:
    """A moto server (S3, SQS, ...) on 127.0.0.1 as a separate process, speaking real HTTP.

    With ``record``, S3 writes persist in that file and are replayed on the next start."""
    port = port or free_port()
    out = log_path.open("ab") if log_path else subprocess.DEVNULL
    cmd = [sys.executable, "-m", "agent_memory.local.moto_server", "--port", str(port)]
    if record:
        cmd += ["--record", str(record)]
    return spawn_http_server(cmd, port, "/moto-api/", timeout_s, out)
