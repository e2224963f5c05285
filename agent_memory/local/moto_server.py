"""A moto server whose S3 state survives restarts.

moto keeps everything in memory. For ``make up`` ("stop, start again, the data is
still there") we turn on moto's request recorder, restricted to *mutating S3*
requests (the SigV4 scope names the service), and replay the log on start. SQS is
not recorded: queues are re-created by the bootstrap, and anything stored but not
yet indexed when the mirror stopped is picked up by the start-up reconciler.

Run: ``python -m agent_memory.local.moto_server --port P --record FILE``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any


def _install_s3_only_recording() -> None:
    from moto.moto_api._internal.recorder.models import Recorder

    original = Recorder._record_request

    def record_s3_writes(self: Recorder, request: Any, body: bytes | None = None) -> None:
        auth = request.headers.get("Authorization", "")
        if request.method in ("PUT", "POST", "DELETE") and "/s3/aws4_request" in auth:
            original(self, request, body)

    Recorder._record_request = record_s3_writes  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--record", type=Path, help="persist S3 writes in this file and replay them on start")
    args = parser.parse_args()
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.touch()
        os.environ["MOTO_RECORDER_FILEPATH"] = str(args.record)
        os.environ["MOTO_ENABLE_RECORDING"] = ""  # start disabled; enabled after the replay
    _install_s3_only_recording()
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=args.port, verbose=False)
    server.start()
    if args.record:
        from moto.moto_api import recorder

        recorder.replay_recording(target_host=f"http://127.0.0.1:{args.port}")
        recorder.start_recording()
    print(f"moto ready on 127.0.0.1:{args.port}", flush=True)
    import signal

    signals = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    signal.sigwait(signals)
    server.stop()


if __name__ == "__main__":
    main()
