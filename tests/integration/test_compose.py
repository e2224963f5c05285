"""The docker-compose file for users with Docker: checked without an engine."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

COMPOSE = Path(__file__).resolve().parents[2] / "localstack" / "docker-compose.yml"


def compose_cli() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_services_ports_and_health() -> None:
    doc = yaml.safe_load(COMPOSE.read_text())
    services = doc["services"]
    assert {"localstack", "minio", "minio-init", "etcd", "milvus-minio", "milvus", "helixdb"} <= services.keys()
    published = [p for svc in services.values() for p in svc.get("ports", [])]
    assert published and all(p.startswith("127.0.0.1:") for p in published)
    assert {p.split(":")[1] for p in published} >= {"4566", "9000", "19530", "6969"}
    for name in ("localstack", "minio", "etcd", "milvus-minio", "milvus", "helixdb"):
        assert "healthcheck" in services[name], name
    assert services["milvus"]["depends_on"]["etcd"]["condition"] == "service_healthy"
    assert services["minio-init"]["depends_on"]["minio"]["condition"] == "service_healthy"
    init = " ".join(services["minio-init"]["command"])
    assert "version enable" in init and "anonymous set none" in init


def test_compose_config_validates() -> None:
    cli = compose_cli()
    if cli is None:
        pytest.skip("no docker compose CLI on this machine (.ci/run installs one)")
    out = subprocess.run([*cli, "-f", str(COMPOSE), "config"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "milvusdb/milvus" in out.stdout
