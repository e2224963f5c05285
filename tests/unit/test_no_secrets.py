"""A gitleaks-style scan of every tracked file: no cloud keys, private keys or tokens in the
repository. Test fixtures use obvious placeholders ("testing", "test-helix-key"), which the
patterns below cannot match."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = {
    "AWS access key id": re.compile(r"\b(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    "AWS secret access key": re.compile(
        r"(?i)aws.{0,20}(secret|private).{0,20}['\"=:\s]+[A-Za-z0-9/+]{40}\b"),
    "private key": re.compile(r"-----BEGIN (RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY( BLOCK)?-----"),
    "GitHub token": re.compile(r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{60,}"),
    "Slack token": re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}"),
    "OpenAI key": re.compile(r"\bsk-(proj-)?[A-Za-z0-9_-]{32,}"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "generic bearer/api key literal": re.compile(
        r"(?i)(api[_-]?key|secret|password|token)\s*[=:]\s*['\"][A-Za-z0-9/+_-]{32,}['\"]"),
}


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [ROOT / p for p in out.stdout.decode().split("\0") if p]


def test_patterns_catch_what_they_should() -> None:
    fake_key = "AKIA" + "ABCDEFGHIJKLMNOP"  # split so this file does not match itself
    assert PATTERNS["AWS access key id"].search(f"key = {fake_key}")
    assert PATTERNS["private key"].search("-----BEGIN " + "RSA PRIVATE KEY-----")
    assert PATTERNS["generic bearer/api key literal"].search('api_key = "' + "x" * 40 + '"')


def test_no_secrets_in_tracked_files() -> None:
    files = tracked_files()
    assert len(files) > 50
    found = []
    for path in files:
        if path.suffix in {".png", ".jpg", ".whl", ".gz", ".zip"} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="ignore")
        for name, pattern in PATTERNS.items():
            for m in pattern.finditer(text):
                found.append(f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {name}")
    assert not found, "possible secrets:\n" + "\n".join(found)
