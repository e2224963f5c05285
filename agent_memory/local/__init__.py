"""Helpers that start real servers as plain processes on this machine (no Docker)."""
