"""The pytree namespaces: `inert.tree_util` (JAX's functions), `inert.tree` (jax.tree's
short names) and `inert.flatten_util` (`ravel_pytree`), on `core.pytree`."""
