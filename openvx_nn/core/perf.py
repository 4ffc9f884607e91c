"""Performance counters in the layout of ``vx_perf_t`` (nanoseconds)."""
from __future__ import annotations

import struct
import time

_FIELDS = ("tmp", "beg", "end", "sum", "avg", "min", "num", "max")
_LAYOUT = struct.Struct("8Q")


class Perf:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        for name in _FIELDS:
            setattr(self, name, 0)

    def start(self) -> None:
        self.beg = time.perf_counter_ns()

    def stop(self) -> None:
        self.end = time.perf_counter_ns()
        self.tmp = self.end - self.beg
        self.num += 1
        self.sum += self.tmp
        self.avg = self.sum // self.num
        self.min = self.tmp if self.num == 1 else min(self.min, self.tmp)
        self.max = max(self.max, self.tmp)

    def pack(self) -> bytes:
        return _LAYOUT.pack(*(getattr(self, name) for name in _FIELDS))
