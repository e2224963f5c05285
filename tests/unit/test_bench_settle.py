"""The bench waits for the servers it started to go quiet before timing recalls: a child that
burns a core holds it back until it stops, an idle one does not."""

from __future__ import annotations

import subprocess
import sys

from agent_memory.evaluation.bench import _settle

BUSY_THEN_IDLE = "import time\nt = time.time()\nwhile time.time() - t < 1.5: pass\ntime.sleep(60)"


def test_settle_waits_for_a_busy_server_and_not_for_an_idle_one() -> None:
    busy = subprocess.Popen([sys.executable, "-c", BUSY_THEN_IDLE])
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        got = _settle({busy.pid: "busy"}, window_s=0.3, windows=2, timeout_s=20)
        assert got["quiet"] and got["servers_cpu_share_at_start"] > 0.3
        assert got["waited_s"] >= 1.0, got
        calm = _settle({idle.pid: "idle"}, window_s=0.3, windows=2, timeout_s=20)
        assert calm["quiet"] and calm["servers_cpu_share_at_start"] < 0.1 and calm["waited_s"] < 1.0, calm
        never = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            stuck = _settle({never.pid: "spin"}, window_s=0.3, windows=2, timeout_s=1.0)
            assert not stuck["quiet"] and stuck["servers_cpu_share_at_end"] > 0.3, stuck
        finally:
            never.kill()
    finally:
        busy.kill()
        idle.kill()
