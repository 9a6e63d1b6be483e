"""What users import: the transforms (`transforms`, `vmap`, `jacobian`, `residuals`) and
the namespaces `numpy`, `lax`, `scipy`, `tree_util`, which the package `inert`
registers under `inert.numpy`, `inert.lax`, ... (see `inert/__init__.py`)."""
