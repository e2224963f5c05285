"""The README's examples run as written."""

from __future__ import annotations

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
