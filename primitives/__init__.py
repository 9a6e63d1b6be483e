"""The primitive set, grouped by family, and the user-facing namespaces built on it."""
