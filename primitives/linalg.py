"""The linalg family of primitives (being written)."""
