"""Errors the library raises on purpose. Every one maps to one HTTP status at the edge."""

from __future__ import annotations


class AgentMemoryError(Exception):
    """Base class: anything the service refuses or cannot do, with a message for a person."""

    status_code = 500


class InvalidInputError(AgentMemoryError, ValueError):
    """Input that fails validation (bad id, unknown type, oversize content...)."""

    status_code = 422


class ContentTooLargeError(InvalidInputError):
    status_code = 413


class NotFoundError(AgentMemoryError, KeyError):
    status_code = 404

    def __str__(self) -> str:  # KeyError would print the repr with quotes
        return str(self.args[0]) if self.args else "not found"


class ConflictError(AgentMemoryError):
    status_code = 409


class ModelMismatchError(AgentMemoryError):
    """The index was built with another embedding model than the one configured now."""

    status_code = 409


class IndexSchemaError(ModelMismatchError):
    """The index was built with an older field set (see ``INDEX_SCHEMA``): rebuild it from the
    originals with ``agent-memory reindex``."""


class BackendUnavailableError(AgentMemoryError):
    """S3 or the index cannot be reached; nothing was half-written."""

    status_code = 503


class AuthenticationError(AgentMemoryError):
    """The API refused the caller's key or credentials."""

    status_code = 401


class ArchivedError(AgentMemoryError):
    """The original is in an archive storage class (GLACIER, DEEP_ARCHIVE): unreadable until
    restored. A restore has been (or can be) requested; try again after it completes."""

    status_code = 409


class ForbiddenError(AgentMemoryError):
    """The caller is authenticated but may not act for this user (or use this route)."""

    status_code = 403
