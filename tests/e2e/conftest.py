"""Run ``agent-memory up`` as a user does: a subprocess on free ports with its own data folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_memory.local.processes import free_port


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


@dataclass
class RunningMirror:
    proc: subprocess.Popen[str]
    info: dict[str, Any]
    data_dir: Path
    api_port: int
    emulator_port: int

    @property
    def url(self) -> str:
        return str(self.info["api"])

    def client(self) -> httpx.Client:
        key = (self.data_dir / "api_key").read_text().strip()
        return httpx.Client(base_url=self.url, headers={"x-api-key": key}, timeout=30)

    def child_pids(self) -> list[int]:
        return [p for name, p in self.info["pids"].items() if name != "runtime" and p]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


def _drain(stream: Any, path: Path) -> None:
    """Keep reading the mirror's stdout (its JSON logs) into a file, or it blocks on a full pipe."""

    def pump() -> None:
        with path.open("a") as out:
            for line in stream:
                out.write(line)
                out.flush()

    threading.Thread(target=pump, daemon=True).start()


def start_mirror(data_dir: Path, api_port: int = 0, emulator_port: int = 0, *extra: str,
                 timeout_s: float = 120) -> RunningMirror:
    api_port = api_port or free_port()
    emulator_port = emulator_port or free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_memory.cli", "up", "--port", str(api_port), "--emulator-port",
         str(emulator_port), "--data-dir", str(data_dir), *extra],
        stdout=subprocess.PIPE, stderr=(data_dir.parent / f"{data_dir.name}-up.log").open("a"), text=True)
    deadline = time.monotonic() + timeout_s
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                raise RuntimeError(f"mirror exited with {proc.returncode}")
            continue
        if line.startswith("{"):
            info = json.loads(line)
            if info.get("ready"):
                _drain(proc.stdout, data_dir.parent / f"{data_dir.name}-stdout.log")
                mirror = RunningMirror(proc, info, data_dir, api_port, emulator_port)
                httpx.get(f"{mirror.url}/health", timeout=10).raise_for_status()
                return mirror
    proc.kill()
    raise TimeoutError("mirror not ready")


@pytest.fixture
def mirror_factory(tmp_path: Path) -> Iterator[Any]:
    started: list[RunningMirror] = []

    def factory(*extra: str, data_dir: Path | None = None, api_port: int = 0,
                emulator_port: int = 0) -> RunningMirror:
        d = data_dir or tmp_path / "mirror"
        d.mkdir(parents=True, exist_ok=True)
        m = start_mirror(d, api_port, emulator_port, *extra)
        started.append(m)
        return m

    yield factory
    for m in started:
        if m.proc.poll() is None:
            m.kill()
        for pid in m.child_pids():
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningMirror]:
    """One `agent-memory up` for a whole test module (tests isolate themselves by user id)."""
    m = start_mirror(tmp_path_factory.mktemp("mirror") / "mirror")
    yield m
    m.stop()
