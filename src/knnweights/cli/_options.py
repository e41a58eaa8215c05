"""Options the commands share: a command's registration, argument groups, their values parsed, help text without
reStructuredText."""

import argparse
import re
import textwrap
from dataclasses import dataclass
from typing import Callable

from ..exceptions import UsageError
from ..weighters import REGRESSION_WEIGHTERS, SURVIVAL_METHODS, WEIGHTERS

#: a fast, varied default: Relief family (k neighbours, radius), iterative Relief, margins, NCA
DEFAULT_METHODS = ("ReliefF", "MultiSURF", "IRelief", "Simba", "NCADiagonal")
#: the default for a continuous target: RReliefF, MultiSURF's continuous rule, MLKR
DEFAULT_REGRESSION_METHODS = ("ReliefF", "MultiSURF", "MLKRDiagonal")
#: the default for a survival outcome: RReliefF and MultiSURF on the null Cox model's martingale residuals
DEFAULT_SURVIVAL_METHODS = ("ReliefF", "MultiSURF")

#: every weighter by name, for class labels or a continuous target
_ALL_WEIGHTERS = {**WEIGHTERS, **REGRESSION_WEIGHTERS}


@dataclass(frozen=True)
class Command:
    """One ``knnweights`` subcommand, as :func:`knnweights.cli.build_parser` registers it.

    Parameters
    ----------
    name : str
        The subcommand's name.
    help : str
        Its line in ``knnweights --help``.
    run : callable
        ``run(args)``: runs the command on the parsed arguments and returns the exit status.
    add_arguments : callable, optional
        ``add_arguments(parser)``: adds the command's arguments to its parser (default: none).
    description : str, optional
        The text of ``knnweights NAME --help`` above the arguments.
    """

    name: str
    help: str
    run: Callable
    add_arguments: Callable = None
    description: str = None

    def register(self, subparsers):
        """Add the command to the subcommands of a parser.

        Parameters
        ----------
        subparsers : argparse._SubParsersAction
            The command line's subcommands.

        Returns
        -------
        argparse.ArgumentParser
            The command's parser; the parsed arguments' ``func`` is :attr:`run`.
        """
        parser = subparsers.add_parser(self.name, help=self.help, description=self.description)
        if self.add_arguments is not None:
            self.add_arguments(parser)
        parser.set_defaults(func=self.run)
        return parser


_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`<]*?)(?:\s*<[^`>]*>)?`")


def plain_text(text):
    """``text`` without reStructuredText markup (roles, double backquotes, emphasis).

    Parameters
    ----------
    text : str or None
        Help or description text.

    Returns
    -------
    str or None
    """
    if not text:
        return text

    def role(m):
        name = m.group(1).strip()
        return name.rsplit(".", 1)[-1] if m.group(0).split("`", 1)[1].startswith("~") else name

    text = _ROLE.sub(role, text)
    text = re.sub(r"``([^`]+)``", r"\1", text)
    text = re.sub(r"(?<![\w`])`([^`]+)`(?![\w`])", r"\1", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\1", text)
    return text


class PlainFormatter(argparse.HelpFormatter):
    """Help with reStructuredText markup removed; descriptions wrapped paragraph by paragraph.

    A paragraph that starts with ``example:`` (a command to copy) stays on one line.
    """

    def _format_text(self, text):
        return super()._format_text(plain_text(text))

    def _fill_text(self, text, width, indent):
        paragraphs = re.split(r"\n\s*\n", text.strip("\n"))
        out = []
        for par in paragraphs:
            if par.startswith("example:"):
                out.append(indent + " ".join(par.split()))
            else:
                out.append(textwrap.fill(" ".join(par.split()), width, initial_indent=indent,
                                         subsequent_indent=indent))
        return "\n\n".join(out)

    def _expand_help(self, action):
        return plain_text(super()._expand_help(action))


def parse_methods(text, default=None, continuous=False, survival=False):
    """Weighter names from ``"ReliefF,MultiSURF"`` (case-insensitive; ``all``: every weighter for the target).

    With ``continuous`` only the weighters with a continuous-target definition are
    accepted (:data:`knnweights.REGRESSION_WEIGHTERS`), with ``survival`` those that score a
    survival outcome (:data:`knnweights.weighters.SURVIVAL_METHODS`); otherwise those for class
    labels.

    Parameters
    ----------
    text : str or None
        The ``--methods`` value; empty or ``None``: ``default``.
    default : sequence of str, optional
        The names when none are given (default: :data:`DEFAULT_METHODS`, or
        :data:`DEFAULT_REGRESSION_METHODS` for a continuous target).
    continuous : bool, default=False
        Whether the target is continuous.
    survival : bool, default=False
        Whether the outcome is a survival outcome (default :data:`DEFAULT_SURVIVAL_METHODS`).

    Returns
    -------
    list of str
        The weighters' names as the library spells them, each once, in the order given.

    Raises
    ------
    UsageError
        An unknown name, or one without a definition for the target.
    """
    usable = ({n: WEIGHTERS[n] for n in SURVIVAL_METHODS} if survival
              else REGRESSION_WEIGHTERS if continuous else WEIGHTERS)
    if default is None:
        default = (DEFAULT_SURVIVAL_METHODS if survival else DEFAULT_REGRESSION_METHODS if continuous
                   else DEFAULT_METHODS)
    if text is None or not str(text).strip():
        names = list(default)
    else:
        names = [t.strip() for t in re.split(r"[,\s]+", str(text)) if t.strip()]
    lookup = {n.lower(): n for n in _ALL_WEIGHTERS}
    out = []
    for n in names:
        if n.lower() == "all":
            out.extend(usable)
            continue
        if n.lower() not in lookup:
            raise UsageError(f"--methods: unknown method {n!r}; choose from {', '.join(sorted(usable))} or all.")
        name = lookup[n.lower()]
        if name not in usable:
            kind = "a survival outcome" if survival else "a continuous target" if continuous else "class labels"
            raise UsageError(f"--methods: {name} has no definition for {kind}; choose from "
                             f"{', '.join(sorted(usable))} or all.")
        out.append(name)
    return list(dict.fromkeys(out))


def build_weighter(name, random_state, continuous=False):
    """The weighter ``name`` with the command's seed and, for a continuous target, its target type.

    Parameters
    ----------
    name : str
        A name :func:`parse_methods` gives.
    random_state : int
        Seed of the weighters that have one.
    continuous : bool, default=False
        Set ``target_type="continuous"`` on the weighters that have it.

    Returns
    -------
    estimator
    """
    est = _ALL_WEIGHTERS[name]()
    params = est.get_params()
    if "random_state" in params:
        est.set_params(random_state=random_state)
    if continuous and "target_type" in params:
        est.set_params(target_type="continuous")
    return est


def parse_cv(text):
    """``"10x10"`` -> ``(10, 10)`` folds x repeats; ``"5"`` -> ``(5, 1)``.

    Parameters
    ----------
    text : str
        The ``--cv`` value.

    Returns
    -------
    (int, int)

    Raises
    ------
    UsageError
        Not ``FOLDSxREPEATS``, fewer than 2 folds or fewer than 1 repeat.
    """
    m = re.fullmatch(r"\s*(\d+)\s*(?:[xX*]\s*(\d+))?\s*", str(text))
    if not m:
        raise UsageError(f"--cv: expected FOLDSxREPEATS such as 10x10; got {text!r}.")
    k, r = int(m.group(1)), int(m.group(2) or 1)
    if k < 2 or r < 1:
        raise UsageError(f"--cv: needs at least 2 folds and 1 repeat; got {text!r}.")
    return k, r


def add_data_arguments(parser, survival=False):
    """Add the arguments that read a user's table and choose the weighters (``rank``, ``evaluate``).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser.
    survival : bool, default=False
        Offer ``--target-type survival`` with ``--time COL --event COL`` (``rank``).
    """
    p = parser
    p.add_argument("file", help="CSV, TSV, Parquet or Excel file, one row per sample")
    p.add_argument("--target", metavar="COL", default=None, help="the label column (required for a table)")
    p.add_argument("--id-col", metavar="COL", default=None, help="a sample-id column (not a feature)")
    p.add_argument("--drop", metavar="COL", nargs="+", action="extend", default=[],
                   help="columns to leave out (repeatable)")
    p.add_argument("--methods", metavar="A,B,...", default=None,
                   help=f"weighters, comma-separated, or 'all' (default: {','.join(DEFAULT_METHODS)}; for a "
                        f"continuous target {','.join(DEFAULT_REGRESSION_METHODS)})")
    p.add_argument("--impute", choices=["median", "drop-features", "none"], default="median",
                   help="missing feature values: column median (default), drop those features, or refuse")
    p.add_argument("--one-hot", action="store_true",
                   help="one-hot encode non-numeric columns (default: drop them, naming them)")
    p.add_argument("--scale", choices=["standard", "minmax", "none"], default="standard",
                   help="feature scaling before the weighters (default: standard, mean 0 and variance 1)")
    p.add_argument("--sep", default=None, help="delimiter of a text file (default: by extension, else guessed)")
    p.add_argument("--sheet", default=None, help="Excel sheet name (default: the first)")
    p.add_argument("--random-state", type=int, default=0, help="seed of every random choice (default: 0)")
    p.add_argument("--target-type", choices=["auto", "classes", "continuous"] + (["survival"] if survival else []),
                   default="auto",
                   help="auto (default): a target with non-integer numbers is continuous, else class labels"
                        + ("; survival: a censored outcome from --time and --event (no --target)" if survival else ""))
    if survival:
        p.add_argument("--time", metavar="COL", default=None,
                       help="with --target-type survival: the column of event or censoring times (>= 0)")
        p.add_argument("--event", metavar="COL", default=None,
                       help="with --target-type survival: the column saying whether the event was observed "
                            "(true/false, yes/no or 1/0)")
    p.add_argument("--log", action="store_true",
                   help="log2(x + 1) of every feature before scaling (expression counts; needs x >= 0)")


def add_scheduler_argument(parser):
    """Add ``--scheduler ADDRESS`` to an :mod:`argparse` parser (default: ``$DASK_SCHEDULER_ADDRESS``).

    Use the parsed value with ``with use_scheduler(args.scheduler): ...``
    (:func:`knnweights.evaluation.distributed.use_scheduler`).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser.

    Returns
    -------
    argparse.ArgumentParser
        ``parser``.
    """
    parser.add_argument(
        "--scheduler", metavar="ADDRESS", default=None,
        help="run the cells on a running dask.distributed scheduler (e.g. tcp://host:8786); "
             "default: $DASK_SCHEDULER_ADDRESS when set, else this machine")
    return parser


def add_run_arguments(parser, command, parallel):
    """Add ``--out DIR``, ``--n-jobs``, ``--scheduler`` and ``--no-progress`` of a command that runs a CV on a file.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser.
    command : str
        The command's name: the default folder is ``<file stem>-<command>``.
    parallel : str
        What ``--n-jobs`` runs in parallel (``"cells"``, ``"outer folds"``).

    Returns
    -------
    argparse.ArgumentParser
        ``parser``.
    """
    parser.add_argument("--out", metavar="DIR", default=None, help=f"output folder (default: <file stem>-{command})")
    parser.add_argument("--n-jobs", type=int, default=None, help=f"{parallel} in parallel on this machine (joblib)")
    add_scheduler_argument(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress line")
    return parser
