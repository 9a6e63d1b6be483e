"""inert's benchmark: `python -m inert.benchmarks` (see run.py)."""
