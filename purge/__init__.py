"""Purge: retires deleted entities and old executions by Navigator's rules."""
