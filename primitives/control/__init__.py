"""Higher-order primitives, whose parameters are jaxprs: `cond`/`switch`, `scan`,
`while_loop` (with `fori_loop`), `checkpoint`, and the user-rule primitives of
`custom_jvp`/`custom_vjp`. What they share (staging a body, batching it, checking that
branch and carry types agree) is in `common`; how a call of a custom function is traced
(its rule on the primal values, its body only where JAX runs it) in
`custom_derivatives`.

Each primitive's bind wrapper is the user-facing function (`cond`, `scan`,
`checkpoint`, `custom_jvp`), as for every primitive; `inert.lax` and `inert`
re-export them."""
