"""A text progress bar for long runs (items done, items per second, time left) and a notice for slow loads."""
from __future__ import annotations

import threading
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


NOTICE_AFTER = 1.0
"""Seconds a load may take before :class:`Pending` says it is still going."""


class Pending:
    """Says on ``stream`` that ``what`` is still going once it has taken :data:`NOTICE_AFTER` seconds,
    and how long it took when it ends; silent when it ends sooner.

    A model's first result can take long for reasons the user cannot see (parsing a large file,
    compiling kernels on a cold cache); without this a command looks hung.  A terminal gets one
    line redrawn every second, a pipe or log file one line when the notice starts and one at the
    end.  Used as a context manager, or with :meth:`start` and :meth:`stop` (idempotent).
    """

    def __init__(self, what: str, stream: TextIO | None):
        self.what, self.stream = what, stream
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False
        self._start = 0.0

    def start(self) -> Pending:
        self._start = time.perf_counter()
        if self.stream is not None:
            self._thread = threading.Thread(target=self._watch, daemon=True, name="openvx-nn load notice")
            self._thread.start()
        return self

    def stop(self, finished: bool = True) -> None:
        """End the notice; a shown one ends with the time taken (``finished``) or, if the load
        failed or was interrupted, just ends its line."""
        if self._done.is_set():
            return
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown and finished:
            self._write(f"{self.what}: done in {time.perf_counter() - self._start:.1f} s", final=True)
        elif self._shown and self.tty:
            self.stream.write("\n")

    def __enter__(self):
        return self.start()

    def __exit__(self, kind: object, *exc: object) -> None:
        self.stop(finished=kind is None)

    def _watch(self) -> None:
        if self._done.wait(NOTICE_AFTER):
            return
        self._shown = True
        while True:
            self._write(f"{self.what}... {clock(time.perf_counter() - self._start)}", final=False)
            if not self.tty or self._done.wait(1.0):
                return

    def _write(self, text: str, final: bool) -> None:
        assert self.stream is not None
        if self.tty:
            self.stream.write("\r" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
