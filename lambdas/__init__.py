"""Thin AWS Lambda handlers: Powertools around the ``agent_memory`` core."""
