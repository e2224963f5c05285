"""The framework adapters' examples run as written, offline, each in a fresh folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {
    "langgraph_store.py": ["recalled: ['Remember that I am allergic to peanuts']"],
    "langchain_tools.py": ["(preference) The user prefers trains to planes", "retrieved:\n- The user prefers trains"],
    "openai_agents.py": ["agent: Your flight to Lisbon leaves on Friday at 9:40.",
                         "instructions the model got:\nYou are a concise travel assistant.",
                         "(plan) The user's flight to Lisbon leaves Friday at 9:40"],
    "mem0_migration.py": ["I'm vegetarian and allergic to nuts", "\nI'm vegan and allergic to nuts\n",
                          "[('ADD', \"I'm vegetarian and allergic to nuts\"), ('UPDATE', \"I'm vegan and allergic",
                          "[\"I'm planning a trip to Japan in April\"]"],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_adapter_example_runs_offline(name: str, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / name)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    for text in EXPECTED[name]:
        assert text in out.stdout, (text, out.stdout)
