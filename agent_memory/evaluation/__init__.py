"""Reproducible measurements: ``agent-memory eval`` (recall quality) and ``agent-memory bench`` (speed)."""
