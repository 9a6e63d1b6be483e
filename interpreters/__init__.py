"""One module per transformation, and the user-facing transforms (api)."""
