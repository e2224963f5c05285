"""The memory console's static files (``index.html``, ``app.js``, ``style.css``).

Served by the API function itself at ``/console/...`` — locally through the mirror's gateway,
on AWS through API Gateway — so there is no second deployment and no second data path: the
page calls the same authenticated API as the agents. Only these files can be served (a fixed
list, no paths), and they hold no data, so they need no key.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8"}
FILES = {p.name: TYPES[p.suffix] for p in HERE.iterdir() if p.suffix in TYPES}


def asset(name: str) -> tuple[str, str] | None:
    """(text, content type) of one console file, or None when there is no such file."""
    if name not in FILES:
        return None
    return (HERE / name).read_text(encoding="utf-8"), FILES[name]
