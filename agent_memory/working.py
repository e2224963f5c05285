"""Working memory: a small per-session key-value store with a time to live, for task state.

Seed 2's second layer. What an agent is doing right now ("step 3 of 5", "the draft so far",
"user picked the blue one") is not a long-term memory: it must not be embedded, indexed or
recalled next month, and it should disappear by itself. So it lives here, out of the index:

- ``memory`` (default): a dict in this process, for one-process agents and tests;
- ``redis``: any Redis (``working_redis_url``), one key per entry with Redis' own expiry;
- ``dynamodb``: a table (partition key ``ns``, sort key ``key``, TTL attribute ``expires_at``),
  what the deployed stack uses. DynamoDB deletes expired items lazily, so reads filter them.

Entries are namespaced by user and session; keys follow the id rules; values are JSON
(at most 64 KB each, to stay far inside DynamoDB's item limit).
"""

from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from agent_memory.config import Settings
from agent_memory.errors import BackendUnavailableError, ContentTooLargeError, InvalidInputError
from agent_memory.ids import validate_id

MAX_VALUE_BYTES = 64 * 1024


class WorkingStore(ABC):
    """Raw entries (JSON text) under a namespace, each with its own time to live."""

    @abstractmethod
    def put(self, ns: str, key: str, value: str, ttl_s: float) -> None: ...

    @abstractmethod
    def fetch(self, ns: str, key: str) -> str | None: ...

    @abstractmethod
    def remove(self, ns: str, key: str) -> bool: ...

    @abstractmethod
    def entries(self, ns: str) -> dict[str, str]: ...

    def clear(self, ns: str) -> int:
        keys = list(self.entries(ns))
        return sum(self.remove(ns, k) for k in keys)


class InProcessWorkingStore(WorkingStore):
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._data: dict[str, dict[str, tuple[str, float]]] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def put(self, ns: str, key: str, value: str, ttl_s: float) -> None:
        with self._lock:
            self._data.setdefault(ns, {})[key] = (value, self._clock() + ttl_s)

    def fetch(self, ns: str, key: str) -> str | None:
        return self.entries(ns).get(key)

    def remove(self, ns: str, key: str) -> bool:
        with self._lock:
            return self._data.get(ns, {}).pop(key, None) is not None

    def entries(self, ns: str) -> dict[str, str]:
        now = self._clock()
        with self._lock:
            live = {k: v for k, v in self._data.get(ns, {}).items() if v[1] > now}
            if live:
                self._data[ns] = live
            else:
                self._data.pop(ns, None)
            return {k: v for k, (v, _) in live.items()}


class RedisWorkingStore(WorkingStore):
    """One Redis key per entry (``prefix|ns|key``) so each has its own expiry. Ids cannot hold
    ``|`` or glob characters, so a namespace scan never matches another namespace."""

    def __init__(self, url: str, prefix: str = "agent-memory:working") -> None:
        import redis

        self._redis = redis.Redis.from_url(url, decode_responses=True)
        self._prefix = prefix
        self._errors: tuple[type[Exception], ...] = (redis.RedisError,)

    def _key(self, ns: str, key: str) -> str:
        return f"{self._prefix}|{ns}|{key}"

    def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except self._errors as exc:
            raise BackendUnavailableError(f"Redis working memory: {exc}") from exc

    def put(self, ns: str, key: str, value: str, ttl_s: float) -> None:
        self._call(self._redis.set, self._key(ns, key), value, px=max(1, int(ttl_s * 1000)))

    def fetch(self, ns: str, key: str) -> str | None:
        value = self._call(self._redis.get, self._key(ns, key))
        return None if value is None else str(value)

    def remove(self, ns: str, key: str) -> bool:
        return bool(self._call(self._redis.delete, self._key(ns, key)))

    def entries(self, ns: str) -> dict[str, str]:
        keys = list(self._call(self._redis.scan_iter, match=self._key(ns, "*"), count=500))
        if not keys:
            return {}
        values = self._call(self._redis.mget, keys)
        head = len(self._key(ns, ""))
        return {k[head:]: v for k, v in zip(keys, values, strict=True) if v is not None}


class DynamoWorkingStore(WorkingStore):
    """A DynamoDB table with TTL on ``expires_at`` (epoch seconds)."""

    def __init__(self, table: str, region: str, endpoint_url: str | None = None) -> None:
        import boto3
        from botocore.exceptions import BotoCoreError, ClientError

        self._table = boto3.resource("dynamodb", region_name=region, endpoint_url=endpoint_url).Table(table)
        self._errors: tuple[type[Exception], ...] = (BotoCoreError, ClientError)

    def _call(self, fn: Callable[..., Any], **kwargs: Any) -> Any:
        try:
            return fn(**kwargs)
        except self._errors as exc:
            raise BackendUnavailableError(f"DynamoDB working memory: {exc}") from exc

    def put(self, ns: str, key: str, value: str, ttl_s: float) -> None:
        self._call(self._table.put_item, Item={"ns": ns, "key": key, "value": value,
                                               "expires_at": int(time.time() + ttl_s) + 1})

    def fetch(self, ns: str, key: str) -> str | None:
        item = self._call(self._table.get_item, Key={"ns": ns, "key": key}, ConsistentRead=True).get("Item")
        return str(item["value"]) if item and int(item["expires_at"]) > time.time() else None

    def remove(self, ns: str, key: str) -> bool:
        old = self._call(self._table.delete_item, Key={"ns": ns, "key": key}, ReturnValues="ALL_OLD")
        return "Attributes" in old

    def entries(self, ns: str) -> dict[str, str]:
        from boto3.dynamodb.conditions import Key

        out: dict[str, str] = {}
        kwargs: dict[str, Any] = {"KeyConditionExpression": Key("ns").eq(ns), "ConsistentRead": True}
        now = time.time()
        while True:
            page = self._call(self._table.query, **kwargs)
            out |= {str(i["key"]): str(i["value"]) for i in page["Items"] if int(i["expires_at"]) > now}
            if "LastEvaluatedKey" not in page:
                return out
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def make_working_store(settings: Settings) -> WorkingStore:
    if settings.working_store == "redis":
        if not settings.working_redis_url:
            raise InvalidInputError("working_store=redis needs working_redis_url (e.g. redis://127.0.0.1:6379/0)")
        return RedisWorkingStore(settings.working_redis_url)
    if settings.working_store == "dynamodb":
        return DynamoWorkingStore(settings.working_table_name, settings.aws_region, settings.dynamodb_endpoint_url)
    return InProcessWorkingStore()


def namespace(user_id: str, session_id: str) -> str:
    return f"{validate_id(user_id, 'user_id')}/{validate_id(session_id, 'session_id')}"


def encode_value(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"working-memory values must be JSON: {exc}") from exc
    if len(text.encode()) > MAX_VALUE_BYTES:
        raise ContentTooLargeError(f"working-memory value is over {MAX_VALUE_BYTES // 1024} KB")
    return text


def check_ttl(ttl_s: float | None, default: float) -> float:
    ttl = default if ttl_s is None else float(ttl_s)
    if not 0 < ttl <= 30 * 86_400:
        raise InvalidInputError("ttl_s must be between 0 and 30 days (in seconds)")
    return ttl


class WorkingMemory:
    """``memory.working(session_id, user_id=...)``: set/get/delete/items/clear for one session."""

    def __init__(self, store: WorkingStore, user_id: str, session_id: str, default_ttl_s: float) -> None:
        self._store = store
        self.ns = namespace(user_id, session_id)
        self.default_ttl_s = default_ttl_s

    def set(self, key: str, value: Any, ttl_s: float | None = None) -> None:
        """Store ``value`` (anything JSON) under ``key`` for ``ttl_s`` seconds (default: the setting)."""
        self._store.put(self.ns, validate_id(key, "key"), encode_value(value), check_ttl(ttl_s, self.default_ttl_s))

    def get(self, key: str, default: Any = None) -> Any:
        raw = self._store.fetch(self.ns, validate_id(key, "key"))
        return default if raw is None else json.loads(raw)

    def delete(self, key: str) -> bool:
        return self._store.remove(self.ns, validate_id(key, "key"))

    def items(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in sorted(self._store.entries(self.ns).items())}

    def clear(self) -> int:
        return self._store.clear(self.ns)
