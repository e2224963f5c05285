"""Which users an API key may act for.

API Gateway (or the mirror's gateway) proves the caller holds a valid key; this decides what
that key may touch. A key bound to users (``api_key_users``) must name one of them in every
request that reaches memories — in the path (``/v1/users/{user_id}/...``), the query
(``?user_id=``) or the JSON body (``"user_id"``) — and every user named must be allowed. Routes
that span users (the users list, the canary) are for unbound keys only. Unbound keys act for
anyone, as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from agent_memory.errors import ForbiddenError

_USER_IN_PATH = re.compile(r"^/v1/users/([^/]+)")
_NO_USER_NEEDED = ("/health", "/openapi.json", "/swagger", "/console")
_ALL_USERS_ROUTES = ("/v1/users", "/v1/selfcheck")


def users_named(path: str, query: Mapping[str, Sequence[str] | str | None], body: str | None) -> set[str]:
    named: set[str] = set()
    if m := _USER_IN_PATH.match(path):
        named.add(m.group(1))
    q = query.get("user_id")
    named.update([q] if isinstance(q, str) else list(q or []))
    if body:
        try:
            doc: Any = json.loads(body)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("user_id"), str):
            named.add(doc["user_id"])
    return named


def check_access(allowed: Sequence[str] | None, path: str, query: Mapping[str, Sequence[str] | str | None],
                 body: str | None) -> None:
    """Raise :class:`ForbiddenError` when a key bound to ``allowed`` users may not make this request."""
    if allowed is None or "*" in allowed or path.startswith(_NO_USER_NEEDED):
        return
    if path.rstrip("/") in _ALL_USERS_ROUTES:
        raise ForbiddenError("this API key acts for specific users; this route spans all users")
    named = users_named(path, query, body)
    if not named:
        raise ForbiddenError("this API key acts for specific users: name the user (user_id) in the request")
    denied = sorted(u for u in named if u not in allowed)
    if denied:
        raise ForbiddenError(f"this API key may not act for user {denied[0][:128]!r}")
