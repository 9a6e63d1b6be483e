"""Shape primitives: moving data without computing on it (`structural`: reshape,
transpose, broadcast, convert_element_type, reduce_sum ...) and taking or joining
rectangular parts (`slicing`: slice, pad, concatenate)."""
