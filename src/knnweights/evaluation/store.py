"""The store of finished cells: one JSON line per cell, appended crash-safe, read back to resume."""

import json
import os
import warnings

import numpy as np

__all__ = ["ResultStore", "jsonable"]


class ResultStore:
    """One JSON line per finished cell; crash-safe appends; resume by key.

    Each line is written whole, flushed and fsynced before the next cell is stored, so
    a crash leaves at most one torn last line; reading ignores it and the next append
    cuts it off first.  Only the parent process writes (workers return their rows);
    run one grid per store file at a time (two runs appending to the same file could
    both compute a cell, although each would still write whole lines).

    Parameters
    ----------
    path : str or path-like
        A ``.jsonl`` file; created with its folder when missing.
    """

    def __init__(self, path):
        self.path = os.fspath(path)

    def read(self):
        """All complete rows (a torn last line, from a crash, is skipped).

        Returns
        -------
        rows : list of dict
            The stored rows in file order; empty when the file does not exist.
        """
        if not os.path.exists(self.path):
            return []
        rows = []
        with open(self.path, "rb") as fh:
            data = fh.read()
        lines = data.split(b"\n")
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            if i == len(lines) - 1:
                # no newline after it: torn by a crash, even when what was written parses ("...}" before
                # the "\n"); _repair() cuts it before the next append, so it must not count as done
                continue
            try:
                rows.append(json.loads(line.decode("utf-8")))
            except (ValueError, UnicodeDecodeError):
                warnings.warn(f"{self.path}: skipping unreadable line {i + 1}.", RuntimeWarning, stacklevel=2)
        return rows

    def _repair(self):
        """Cut a torn last line so that the next append starts on a fresh line (creates the folder)."""
        if not os.path.exists(self.path):
            d = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(d, exist_ok=True)
            return
        with open(self.path, "rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                fh.truncate(data.rfind(b"\n") + 1)
                fh.flush()
                os.fsync(fh.fileno())

    def append(self, row):
        """Append one row as a complete, fsynced line.

        Parameters
        ----------
        row : dict
            One finished cell; NumPy scalars and arrays are stored as JSON numbers and
            lists, anything else not JSON-serialisable as its ``repr``.
        """
        line = (json.dumps(row, sort_keys=True, default=_json_default) + "\n").encode("utf-8")
        with open(self.path, "ab") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.bool_):
        return bool(o)
    return repr(o)


def jsonable(obj):
    """``obj`` as a stored result row holds it, so that two values compare as stored.

    Parameters
    ----------
    obj : object
        Any value; it goes through JSON, NumPy scalars and arrays as plain numbers and
        lists, other objects not JSON-serialisable as their ``repr``.

    Returns
    -------
    value : object
        The value read back from its JSON text.
    """
    return json.loads(json.dumps(obj, sort_keys=True, default=_json_default))
