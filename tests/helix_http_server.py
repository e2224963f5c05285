"""A test-only stand-in for a HelixDB server: ``POST /v2/query`` and ``GET /healthz`` on
127.0.0.1, each query handed to the embedded engine (PyPI ``helix-db-embedded``).

No HelixDB server binary installs on our machines (it ships as a container image or a
Rust build), so the ``helix+http://`` backend is tested against this: the same SDK, the
same HTTP requests and bearer-key check, the same engine behind them. It is not part of
the package and not meant for anything but tests.

    python -m tests.helix_http_server --root DIR --port N [--api-key KEY]
"""

from __future__ import annotations

import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import helixdb as hx
from helixdb.client import _run_native


def make_handler(client: hx.Client, api_key: str | None) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/healthz":
                self._send(200, b'{"status":"ok"}')
            else:
                self._send(404, b'{"error":"not found"}')

        def do_POST(self) -> None:
            if self.path != "/v2/query":
                self._send(404, b'{"error":"not found"}')
                return
            if api_key is not None and self.headers.get("Authorization") != f"Bearer {api_key}":
                self._send(401, b'{"error":"missing or wrong API key"}')
                return
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                result = _run_native(client._native.query_json(body))
            except Exception as exc:  # the engine's message, as the server would return it
                self._send(400, json.dumps({"error": str(exc)}).encode())
                return
            self._send(200, bytes(result))

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--api-key")
    args = parser.parse_args()
    client = hx.Client.embedded(hx.Disk(args.root, "server"))
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(client, args.api_key))
    try:
        server.serve_forever()
    finally:
        client.close()


if __name__ == "__main__":
    main()
