"""Mutable references: `new_ref`, reads and writes with a state effect, and the
discharge of a program that uses refs into a functional one."""
