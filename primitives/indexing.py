"""The indexing family of primitives (being written)."""
