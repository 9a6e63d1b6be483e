"""The special family of primitives (being written)."""
