"""Program -> program: one module per transformation (eval, ad, partial_eval, transpose,
batching, dce) and `linearize`, which composes them into reverse mode."""
