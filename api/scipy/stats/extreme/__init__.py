"""The extreme value (Gumbel) distributions, one namespace module each."""
