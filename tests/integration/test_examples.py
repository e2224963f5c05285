"""The README's examples run as written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quickstart_example(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart.py")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "我对花生过敏" in lines[0]
    assert "superseded 我在字节跳动工作" in out.stdout and "active 我换工作了，现在在阿里巴巴" in out.stdout
    context = out.stdout.split("Long-term memories about this user")[1]
    assert "阿里巴巴" in context and "字节跳动" not in context
    assert lines[-1] == "{'index_entries': 0, 'object_versions': 0, 'recall_logs': 0}"


def test_agent_example_runs_offline_with_three_layers(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "agent.py")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=180,
                         env={**os.environ, "AGENT_MEMORY_DATA_DIR": str(tmp_path / "data")})
    assert out.returncode == 0, out.stderr
    check_agent_output(out.stdout)


def check_agent_output(stdout: str) -> None:
    prompt = stdout.split("--- system prompt of the new session ---")[1].split("---")[0]
    assert "allergic to peanuts" in prompt and "Lisbon" in prompt  # long-term memory, across sessions
    assert "working memory of the first session: {'last_question'" in stdout and "'turns': 2" in stdout
    assert "working memory of the new session: {'last_question': 'Can you pack me a snack" in stdout
    assert "'turns': 1" in stdout.split("working memory of the new session")[1]
