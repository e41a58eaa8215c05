"""``knnweights datasets``: the bundled datasets with their sizes, sources and papers."""

from ..datasets import dataset_info, list_datasets


def add_parser(subparsers):
    """Register ``datasets`` on the ``knnweights`` command line.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The command line's subcommands.

    Returns
    -------
    argparse.ArgumentParser
    """
    d = subparsers.add_parser("datasets", help="list the bundled datasets with sizes and sources")
    d.set_defaults(func=run)
    return d


def run(args):
    """List the bundled datasets.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments (none are used).

    Returns
    -------
    int
        The exit status.
    """
    rows = [dataset_info(n) for n in list_datasets()]
    print(f"{'name':34s} {'n':>6s} {'d':>6s} {'classes':>7s}  source / papers")
    for r in rows:
        print(f"{r['name']:34s} {r['n']:6d} {r['d']:6d} {r['classes']:7d}  {r['source']}")
        print(f"{'':58s}{r['papers']}")
    print(f"{len(rows)} datasets bundled (no network needed).")
    return 0
