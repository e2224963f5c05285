"""The CLI as a user runs it: a real process, the embedded defaults, a temporary folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(tmp: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent_memory.cli", *args, "--data-dir", str(tmp)],
                          capture_output=True, text=True, check=check, timeout=120)


def test_remember_recall_forget_inspect_reindex(tmp_path: Path) -> None:
    mid = run(tmp_path, "remember", "--user", "u1", "我对花生过敏", "--importance", "0.9").stdout.strip()
    out = run(tmp_path, "recall", "--user", "u1", "点餐时要注意什么").stdout
    assert "我对花生过敏" in out and "similarity" in out and mid in out

    shown = json.loads(run(tmp_path, "inspect", mid).stdout)
    assert shown["original"]["content"] == "我对花生过敏"
    assert shown["record"]["storage_key"] == f"memories/u1/{mid}.json"

    rebuilt = run(tmp_path, "reindex", "--collection", "rebuilt")
    assert "indexed 1" in rebuilt.stdout

    run(tmp_path, "forget", mid, "--user", "u1")
    assert "我对花生过敏" not in run(tmp_path, "recall", "--user", "u1", "点餐时要注意什么").stdout
    timeline = json.loads(run(tmp_path, "inspect", "--user", "u1", "--all").stdout)
    assert timeline[0]["deleted_at"] is not None

    erased = json.loads(run(tmp_path, "erase", "--user", "u1", "--yes").stdout)
    assert erased["index_entries"] == 1


def test_bad_input_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    bad = run(tmp_path, "remember", "--user", "../etc", "x", check=False)
    assert bad.returncode == 2
    assert "invalid user_id" in bad.stderr and "Traceback" not in bad.stderr
    missing = run(tmp_path, "inspect", "0" * 32, check=False)
    assert missing.returncode == 2 and "not found" in missing.stderr
    only = subprocess.run([sys.executable, "-m", "agent_memory.cli", "train", "judge", "--only", "types"],
                          capture_output=True, text=True, timeout=120)
    assert only.returncode == 2 and "--only takes 'pair', 'trigger' or 'gate'" in only.stderr
    assert "Traceback" not in only.stderr
    rounds = subprocess.run([sys.executable, "-m", "agent_memory.cli", "train", "judge", "--only", "gate",
                             "--gate-rounds", "1,x"], capture_output=True, text=True, timeout=120)
    assert rounds.returncode == 2 and "--gate-rounds takes round numbers" in rounds.stderr


def test_corrections_export_feeds_train_judge_extra_pairs(tmp_path: Path) -> None:
    """`correct`, then `corrections --out` writes the pair; `train judge --extra-pairs` reads such a
    file and refuses a bad one (or a model it does not train) before any training starts."""
    a = run(tmp_path, "remember", "--user", "u1", "I live in Lisbon", "--created-at", "2026-01-01T00:00:00Z")
    b = run(tmp_path, "remember", "--user", "u1", "I play the cello on weekends")
    run(tmp_path, "correct", b.stdout.strip(), "new_version", "--of", a.stdout.strip(), "--user", "u1")
    out = tmp_path / "corrections.jsonl"
    done = run(tmp_path, "corrections", "--user", "u1", "--out", str(out))
    assert "1 corrections" in done.stderr
    [row] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert (row["existing"], row["new"], row["label"]) == ("I live in Lisbon", "I play the cello on weekends",
                                                           "new_version")
    train = [sys.executable, "-m", "agent_memory.cli", "train", "judge"]
    wrong = subprocess.run([*train, "--only", "gate", "--extra-pairs", str(out)], capture_output=True, text=True,
                           timeout=120)
    assert wrong.returncode == 2 and "--extra-pairs trains the change model" in " ".join(wrong.stderr.split())
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"existing": "a", "new": "b", "label": "same"}\n', encoding="utf-8")
    refused = subprocess.run([*train, "--only", "pair", "--extra-pairs", str(bad)], capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode == 2 and "bad.jsonl:1: 'label' must be one of" in " ".join(refused.stderr.split())
    assert "Traceback" not in refused.stderr + wrong.stderr


def test_selfcheck_and_health(tmp_path: Path) -> None:
    assert json.loads(run(tmp_path, "selfcheck").stdout)["ok"] is True
    assert json.loads(run(tmp_path, "health").stdout)["status"] == "ok"


def test_tier_command_reports_what_it_did(tmp_path: Path) -> None:
    run(tmp_path, "remember", "--user", "u1", "a fresh memory stays hot")
    report = json.loads(run(tmp_path, "tier").stdout)
    assert report["users"] == 1 and report["moved_cold"] == 0 and report["index_rows_now"] == 1
    assert json.loads(run(tmp_path, "tier", "--user", "u1", "--dry-run").stdout)["dry_run"] is True


def test_scopes_metadata_and_filters(tmp_path: Path) -> None:
    apollo = run(tmp_path, "remember", "--user", "u1", "Apollo review on Friday", "--meta", "project=apollo",
                 "--meta", "priority=3", "--agent", "planner").stdout.strip()
    gemini = run(tmp_path, "remember", "--user", "u1", "Gemini budget is tight", "--meta", "project=gemini",
                 "--meta", "priority=1").stdout.strip()

    def recall(*args: str) -> str:
        return run(tmp_path, "recall", "--user", "u1", "what is going on", "--no-gate", "--min-score", "-1",
                   *args).stdout

    out = recall("--filter", "priority>=2")
    assert apollo in out and gemini not in out and "agent:planner" in out
    out = recall("--filters", '{"metadata": {"project": {"in": ["gemini"]}}}')
    assert gemini in out and apollo not in out
    assert apollo not in recall("--agent", "coder") and gemini in recall("--agent", "coder")
    listed = json.loads(run(tmp_path, "inspect", "--user", "u1", "--filter", "project=apollo|gemini",
                            "--agent", "planner").stdout)
    assert {r["id"] for r in listed} == {apollo, gemini}
    bad = run(tmp_path, "recall", "--user", "u1", "x", "--filter", 'pro"ject=1', check=False)
    assert bad.returncode == 2 and "key pattern" in " ".join(bad.stderr.split()) and "Traceback" not in bad.stderr
    erased = json.loads(run(tmp_path, "erase", "--user", "u1", "--agent", "planner", "--yes").stdout)
    assert erased["index_entries"] == 1


def test_correct_links_and_unlinks_two_memories(tmp_path: Path) -> None:
    old = run(tmp_path, "remember", "--user", "u1", "I live in Lisbon").stdout.strip()
    new = run(tmp_path, "remember", "--user", "u1", "My favourite tea is genmaicha").stdout.strip()
    linked = run(tmp_path, "correct", new, "new_version", "--of", old, "--user", "u1").stdout
    assert f"corrected {new}: new_version of {old}; active True, topic auto-" in linked
    assert json.loads(run(tmp_path, "inspect", old).stdout)["record"]["is_active"] is False
    assert "active True, topic None" in run(tmp_path, "correct", new, "unrelated", "--user", "u1").stdout
    assert json.loads(run(tmp_path, "inspect", old).stdout)["record"]["is_active"] is True
    again = run(tmp_path, "correct", new, "unrelated", "--user", "u1", check=False)
    assert again.returncode == 2 and "not linked" in again.stderr and "Traceback" not in again.stderr
    wrong = run(tmp_path, "correct", new, "merge", "--user", "u1", check=False)
    assert wrong.returncode == 2 and "decision" in wrong.stderr and "Traceback" not in wrong.stderr
