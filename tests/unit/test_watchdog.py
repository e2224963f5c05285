"""The mirror's watchdog restarts its server after consecutive unanswered checks, not after one."""

from __future__ import annotations

import time

from agent_memory.local.watchdog import Watchdog


class Server:
    def __init__(self, answers: list[bool], fail_restart: bool = False) -> None:
        self.answers, self.fail_restart = answers, fail_restart
        self.checks = 0
        self.restarts = 0

    def healthy(self, timeout_s: float = 1.0) -> bool:
        self.checks += 1
        return self.answers.pop(0) if self.answers else True

    def restart(self) -> object:
        self.restarts += 1
        if self.fail_restart:
            raise RuntimeError("port taken")
        return self


def _watch(server: Server, checks: int) -> Watchdog:
    dog = Watchdog(server, "test", every_s=0.005, misses=2).start()
    deadline = time.monotonic() + 5
    while server.checks < checks and time.monotonic() < deadline:
        time.sleep(0.005)
    dog.stop()
    return dog


def test_one_silent_check_is_not_an_outage_two_in_a_row_are() -> None:
    server = Server([True, False, True, False, False, True, True])
    dog = _watch(server, 7)
    assert server.restarts == dog.restarts == 1


def test_a_failed_restart_is_tried_again_on_the_next_two_misses() -> None:
    server = Server([False, False, False, False, True], fail_restart=True)
    dog = _watch(server, 5)
    assert server.restarts == 2 and dog.restarts == 0 and not dog.thread.is_alive()
