"""The multivariate distributions, one namespace module each."""
