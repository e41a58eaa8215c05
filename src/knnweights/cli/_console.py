"""What the commands say on stderr: status lines, warnings once each, a seconds ticker on a terminal,
and the optional packages a command lacks."""

import contextlib
import importlib.util
import sys
import threading
import time
import warnings

from ..exceptions import UsageError

#: the extra that installs an optional package a command needs
_EXTRAS = {"matplotlib": "plot"}


def print_status(msg):
    """Print a status line on stderr (stdout holds the results).

    Parameters
    ----------
    msg : str
        The line.
    """
    print(msg, file=sys.stderr, flush=True)


def print_warnings(lines):
    """Print the gathered warnings on stderr, one ``warning:`` line each.

    Parameters
    ----------
    lines : iterable of str
        The warnings, already summarised per method.
    """
    for line in lines:
        print(f"warning: {line}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def warnings_once(stream=None):
    """Warnings that escape the per-method summaries: one line each, once, no source line.

    Parameters
    ----------
    stream : file-like, optional
        Where they go (default: stderr).

    Yields
    ------
    None
    """
    stream = stream or sys.stderr
    seen = set()
    old = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        text = f"{category.__name__}: {' '.join(str(message).split())}"
        if text not in seen:
            seen.add(text)
            print(f"knnweights: warning: {text}", file=stream, flush=True)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = old


@contextlib.contextmanager
def elapsed_ticker(label, stream=None, every=1.0):
    """On a terminal, a line showing the seconds spent in a long step, redrawn every second.

    Parameters
    ----------
    label : str
        What the step is.
    stream : file-like, optional
        Where the line goes (default: stderr); nothing is drawn unless it is a terminal.
    every : float, default=1.0
        Seconds between redraws.

    Yields
    ------
    None
    """
    stream = stream or sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        yield
        return
    stop = threading.Event()
    t0 = time.monotonic()

    def run():
        while not stop.wait(every):
            stream.write(f"\r{label} {time.monotonic() - t0:.0f} s ")
            stream.flush()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    try:
        yield
    finally:
        stop.set()
        th.join()
        if time.monotonic() - t0 >= every:
            stream.write("\r" + " " * (len(label) + 12) + "\r")
            stream.flush()


def one_line(exc, limit=160):
    """An exception's message on one line, cut to ``limit`` characters.

    Parameters
    ----------
    exc : BaseException
        The exception.
    limit : int, default=160
        The most characters kept.

    Returns
    -------
    str
    """
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def require_packages(*modules):
    """A one-line error naming the optional packages a command needs and lacks.

    Parameters
    ----------
    *modules : str
        The packages' import names.

    Raises
    ------
    UsageError
        When one of them is not installed.
    """
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        extras = ",".join(dict.fromkeys(_EXTRAS.get(m, "files") for m in missing))
        raise UsageError(f"this command needs {' and '.join(missing)}: pip install 'knnweights[{extras}]' "
                         f"(or pip install {' '.join(missing)}).")
