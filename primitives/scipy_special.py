"""`inert.scipy.special`: scipy.special functions on inert's primitives (being written)."""
