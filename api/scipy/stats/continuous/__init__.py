"""The continuous univariate distributions, one namespace module each."""
