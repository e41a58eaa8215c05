"""The ``knnweights`` command line: ``rank``, ``evaluate``, ``select``, ``predict`` (a user's file), ``datasets``,
``demo``, ``reproduce``.

Each command is a module here, its ``COMMAND`` (:class:`._options.Command`) what registers and runs it: it
parses its arguments, calls the library, prints and writes.  Bad input (a missing or unreadable file, a
missing column, a single class) ends with one line on stderr and exit status 2.  Warnings
raised while methods are fitted are gathered and printed once per method and dataset, not as
raw library warnings.
"""

import argparse
import sys

import numpy as np
import sklearn

from .._version import __version__
from ..exceptions import DataError, SchedulerError, UsageError
from . import datasets, demo, evaluate, predict, rank, reproduce, select
from ._console import warnings_once
from ._options import (
    DEFAULT_METHODS,
    DEFAULT_REGRESSION_METHODS,
    PlainFormatter,
    add_scheduler_argument,
    parse_cv,
    parse_methods,
    plain_text,
)

__all__ = ["main", "build_parser", "parse_methods", "parse_cv", "plain_text", "add_scheduler_argument",
           "DEFAULT_METHODS", "DEFAULT_REGRESSION_METHODS"]

#: the commands, in the order ``knnweights --help`` lists them
_COMMANDS = (rank.COMMAND, evaluate.COMMAND, select.COMMAND, predict.COMMAND, datasets.COMMAND, demo.COMMAND,
             reproduce.COMMAND)


def _version():
    return (f"knnweights {__version__} (Python {sys.version.split()[0]}, numpy {np.__version__}, "
            f"scikit-learn {sklearn.__version__})")


def build_parser():
    """The ``knnweights`` argument parser (every subcommand).

    Returns
    -------
    argparse.ArgumentParser
    """
    p = argparse.ArgumentParser(prog="knnweights", formatter_class=PlainFormatter,
                                description="Feature weighting for nearest-neighbour classification.")
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in _COMMANDS:
        command.register(sub)
    for sp in sub.choices.values():
        sp.formatter_class = PlainFormatter
    for action in sub._choices_actions:
        action.help = plain_text(action.help)
    return p


def main(argv=None):
    """Run the command line.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0, 2 for bad input, 130 when interrupted (``reproduce --check-report``: 1 for a
        report made by other algorithm versions).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    old = np.seterr(all="ignore")
    try:
        with warnings_once():
            return args.func(args)
    except (DataError, UsageError, SchedulerError) as exc:
        print(f"knnweights {args.command}: error: {' '.join(str(exc).split())}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        print("knnweights: interrupted", file=sys.stderr, flush=True)
        return 130
    finally:
        np.seterr(**old)
