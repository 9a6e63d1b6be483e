"""Linear algebra primitives: `dot_general` (contractions), and the decompositions
built on LAPACK."""
