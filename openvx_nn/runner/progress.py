"""A text progress bar for long runs: items done, items per second, time left."""
from __future__ import annotations

import time
from typing import TextIO


def clock(seconds: float) -> str:
    """``seconds`` as m:ss or h:mm:ss."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Redraws one line on a terminal (at most every ``interval`` s); a log file or pipe gets a
    line every ``log_interval`` s and the final one, so long runs stay readable there too."""

    def __init__(self, total: int, stream: TextIO | None, unit: str = "images", width: int = 30,
                 interval: float = 0.2, log_interval: float = 10.0):
        self.total, self.stream, self.unit, self.width = total, stream, unit, width
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self.interval = interval if self.tty else log_interval
        self.done = 0
        self.start = time.perf_counter()
        self._shown = self.start

    def line(self) -> str:
        elapsed = time.perf_counter() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        filled = self.width * self.done // self.total if self.total else self.width
        left = clock((self.total - self.done) / rate) if rate > 0 else "?"
        return (f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done:,}/{self.total:,} {self.unit}  "
                f"{rate:,.0f} {self.unit}/s  ETA {left}")

    def update(self, count: int) -> None:
        self.done += count
        now = time.perf_counter()
        if self.stream is not None and (now - self._shown >= self.interval or self.done >= self.total):
            self._shown = now
            self._show(final=False)

    def close(self) -> None:
        """The final line (with the elapsed time instead of an ETA)."""
        if self.stream is not None:
            self._show(final=True)

    def _show(self, final: bool) -> None:
        text = self.line()
        if final:
            text = text.rsplit("  ETA", 1)[0] + f"  in {clock(time.perf_counter() - self.start)}"
        if self.tty:
            self.stream.write("\r" + text + ("\n" if final else ""))
        elif final or self.done < self.total:
            self.stream.write(text + "\n")
        self.stream.flush()
