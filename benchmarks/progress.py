"""Progress of a long benchmark run on stderr (stdout keeps only the tables): which
step is running, how far the run is, and the time left, estimated from the steps done
so far (their mean duration times the steps left: rough, since steps differ)."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import TextIO


def duration(seconds: float) -> str:
    """`seconds` as a person reads a wait: 45 s, 2 min 05 s."""
    seconds = round(seconds)
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


class Progress:
    """`with progress.step(name):` around each of `total` steps writes a line to `stream`
    when the step starts (its number, name, time so far and the estimate of what is
    left) and one at the end of the run (`done`)."""

    def __init__(self, total: int, stream: TextIO | None = None):
        self.total, self.done_steps = total, 0
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()

    def estimate(self) -> str:
        if not self.done_steps:
            return "time left unknown yet"
        per_step = (time.perf_counter() - self.start) / self.done_steps
        return f"about {duration(per_step * (self.total - self.done_steps))} left"

    @contextmanager
    def step(self, name: str):
        width = len(str(self.total))
        self._write(f"[{self.done_steps + 1:>{width}}/{self.total}] {name}: "
                    f"{duration(time.perf_counter() - self.start)} so far, {self.estimate()}")
        yield
        self.done_steps += 1

    def done(self) -> None:
        self._write(f"done: {self.done_steps} steps in "
                    f"{duration(time.perf_counter() - self.start)}")

    def _write(self, line: str) -> None:
        print(line, file=self.stream, flush=True)
