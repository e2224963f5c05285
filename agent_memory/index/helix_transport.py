"""The HelixDB SDK's request path, minus two Python loops; the same JSON reaches the engine.

An index write of 100 memories is about 1 MB of query JSON (512 floats per vector). Profiled
on helix-db 0.3.4 / helix-db-embedded 0.3.3 (2 shared cores), the SDK's Python layer cost
more than the engine's work on it:

- parameters: ``QueryRequest.with_untyped_parameter`` walks every value to validate it, and
  ``to_json`` walks it again to encode it (``_encode``): 70 ms per 100 rows.
  :class:`PreEncodedRequest` carries the parameters as JSON text from ``json.dumps`` (C code;
  ``allow_nan=False`` refuses NaN and infinity as the SDK does), spliced into the request;
- the native call: the generated uniffi binding copies a ``bytes`` argument into Rust's buffer
  one byte per Python loop iteration, 140 ms per MB. :func:`install_fast_bytes_lowering`
  replaces that loop with one ``memmove`` (same bytes, same buffer growth).

Values still travel as typed JSON parameters, never as query text.
"""

from __future__ import annotations

import ctypes
import json
from contextlib import suppress
from typing import Any

import helixdb as hx

FAST_MARK = "_agent_memory_memmove"


class PreEncodedRequest(hx.QueryRequest):
    """A query request whose untyped parameters are encoded once, by ``json.dumps``."""

    _parameters_json: str = ""

    @classmethod
    def read(cls, query: hx.ReadBatch, query_name: str | None = None) -> PreEncodedRequest:
        request = super().read(query, query_name)  # built as ``cls``
        assert isinstance(request, PreEncodedRequest)
        return request

    @classmethod
    def write(cls, query: hx.WriteBatch, query_name: str | None = None) -> PreEncodedRequest:
        request = super().write(query, query_name)
        assert isinstance(request, PreEncodedRequest)
        return request

    def with_json_parameters(self, params: dict[str, Any]) -> PreEncodedRequest:
        """Attach ``params`` (plain JSON values) as the request's untyped parameters."""
        if not params:
            return self
        if any(not isinstance(name, str) or not name for name in params):
            raise TypeError("parameter names must be non-empty strings")
        if self._parameters or self._parameters_json:
            raise TypeError("parameters were already attached")
        try:
            self._parameters_json = json.dumps(params, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
        except ValueError as exc:  # NaN / infinity, refused like the SDK's own check
            raise TypeError(f"query parameters must be finite JSON values: {exc}") from exc
        self._parameter_mode = "untyped"
        return self

    def to_json_string(self) -> str:
        base = super().to_json_string()
        if not self._parameters_json:
            return base
        return f'{base[:-1]},"parameters":{self._parameters_json}}}'


def install_fast_bytes_lowering() -> bool:
    """Copy ``bytes`` arguments into the native buffer with ``memmove``; True once installed.

    False when the embedded engine is not installed (the HTTP mode does not use it) or its
    binding no longer has the builder this replaces (then the SDK's own loop stays)."""
    try:
        from helixdb_uniffi import helixdb as native
    except ImportError:
        return False
    builder = getattr(native, "_UniffiRustBufferBuilder", None)
    if builder is None or not hasattr(builder, "_reserve") or not hasattr(builder, "write"):
        return False
    if getattr(builder.write, FAST_MARK, False):
        return True

    def write(self: Any, value: Any) -> None:
        data = bytes(value)
        with self._reserve(len(data)):
            if data:
                start = ctypes.cast(self.rbuf.data, ctypes.c_void_p).value
                ctypes.memmove(start + self.rbuf.len, data, len(data))

    with suppress(AttributeError, TypeError):
        setattr(write, FAST_MARK, True)
        builder.write = write
        return True
    return False
