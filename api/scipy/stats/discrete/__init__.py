"""The discrete distributions, one namespace module each: `logpmf` and `pmf` of a
count k (a float or an integer, shifted by scipy's `loc`), -inf and 0 off the
lattice. An integer parameter (binom's n) is inactive by type; float ones are
differentiable."""
