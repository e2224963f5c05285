"""A byte relay between a loopback TCP port and a unix socket.

Why: the PyPI ``milvus`` server listens on every interface and offers no
setting to change that. We run it inside its own network namespace where only
loopback exists, and a unix socket (which lives in the file system, so it
crosses namespaces) carries the bytes in and out. gRPC does not care that its
stream passed through two relays.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while chunk := src.recv(65536):
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


class Relay:
    """Accept on ``listener`` and copy bytes both ways to what ``connect`` opens."""

    def __init__(self, listener: socket.socket, connect: Callable[[], socket.socket]) -> None:
        self._listener = listener
        self._connect = connect
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="relay")

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    def start(self) -> Relay:
        self._thread.start()
        return self

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = self._connect()
            except OSError:
                client.close()
                continue
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()

    def close(self) -> None:
        """Stop listening at once. Closing alone would not: the thread blocked in ``accept`` keeps
        the socket listening, and the port could not be bound again (a restarted server keeps its
        port)."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._listener.close()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)


def tcp_to_unix(port: int, path: str) -> Relay:
    """Serve 127.0.0.1:``port`` (0 = any free port) and forward to unix socket ``path``."""
    lst = socket.create_server(("127.0.0.1", port))

    def connect() -> socket.socket:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        return s

    return Relay(lst, connect).start()


def unix_to_tcp(path: str, port: int) -> Relay:
    """Serve unix socket ``path`` and forward to 127.0.0.1:``port``."""
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lst.bind(path)
    lst.listen(64)
    return Relay(lst, lambda: socket.create_connection(("127.0.0.1", port))).start()
