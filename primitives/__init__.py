"""The closed operation set, one subpackage or module per family; each primitive's
impl, abstract eval and every rule together."""
