"""A small progress bar for ``knnweights reproduce`` (no dependency): done / total, elapsed, time left.

On a terminal it redraws one line (``\\r``) at most five times a second; on anything else
(a CI log, a file) it writes one plain line each time another tenth of the cells is done,
so logs stay readable.
"""

import sys
import time

__all__ = ["Progress", "format_seconds"]


def format_seconds(s):
    """``m:ss`` or ``h:mm:ss``; ``?`` when unknown."""
    if s is None or s != s or s in (float("inf"), float("-inf")):
        return "?"
    s = int(round(s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """Cells done out of ``total``, with the time left estimated from the cells computed so far.

    Parameters
    ----------
    total : int
        Cells to account for (those read from a store count as done at the start).
    label : str
        Printed before the bar.
    initial : int, default=0
        Cells already done (read from the store).
    stream : file, default=sys.stderr
    tty : bool, optional
        Redraw in place; default: ``stream.isatty()``.
    clock : callable, default=time.monotonic
    """

    width = 24

    def __init__(self, total, label="", initial=0, stream=None, tty=None, clock=time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else bool(tty)
        self.total, self.done, self.start = int(total), int(initial), int(initial)
        self.label = label
        self.clock = clock
        self.t0 = clock()
        self._last_draw = -1.0
        self._last_tenth = self._tenth()
        self._closed = False
        if self.total > 0 and self.tty:
            self._draw()

    def _tenth(self):
        return 10 * self.done // self.total if self.total else 10

    def line(self):
        """The text of the bar now."""
        el = self.clock() - self.t0
        ran = self.done - self.start
        frac = min(1.0, self.done / self.total) if self.total else 1.0
        fill = int(round(self.width * frac))
        bar = "#" * fill + "." * (self.width - fill)
        if self.done >= self.total:
            tail = f"{format_seconds(el)} elapsed"
        else:
            left = (self.total - self.done) * el / ran if ran > 0 else float("nan")
            tail = f"{format_seconds(el)} elapsed, ~{format_seconds(left)} left"
        head = f"{self.label}: " if self.label else ""
        return f"{head}[{bar}] {self.done}/{self.total} ({100 * frac:3.0f}%) {tail}"

    def _draw(self):
        self.stream.write("\r" + self.line() + "  ")
        self.stream.flush()

    def update(self, n=1):
        """``n`` more cells done."""
        if self.total <= 0 or self._closed:
            return
        self.done = min(self.total, self.done + int(n))
        if self.tty:
            now = self.clock()
            if now - self._last_draw >= 0.2 or self.done >= self.total:
                self._last_draw = now
                self._draw()
        else:
            tenth = self._tenth()
            if tenth > self._last_tenth:
                self._last_tenth = tenth
                self.stream.write(self.line() + "\n")
                self.stream.flush()

    def close(self):
        """Finish the line (a terminal) or write the last line if it was not written."""
        if self._closed or self.total <= 0:
            self._closed = True
            return
        self._closed = True
        if self.tty:
            self._draw()
            self.stream.write("\n")
        elif self._last_tenth < 10 and self.done > self.start:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
