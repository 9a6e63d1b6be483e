"""The reductions family of primitives (being written)."""
