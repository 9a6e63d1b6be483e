"""The distributions on the circle, one namespace module each, JAX's signatures."""
