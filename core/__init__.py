"""The IR and the tracing machinery; imports nothing from interpreters or primitives."""
