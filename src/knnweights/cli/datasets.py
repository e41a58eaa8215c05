"""``knnweights datasets``: the bundled datasets with their sizes, sources and papers."""

from ..datasets import dataset_info, list_datasets
from ._options import Command


def _run(args):
    """List the bundled datasets; the exit status."""
    rows = [dataset_info(n) for n in list_datasets()]
    print(f"{'name':34s} {'n':>6s} {'d':>6s} {'classes':>7s}  source / papers")
    for r in rows:
        print(f"{r['name']:34s} {r['n']:6d} {r['d']:6d} {r['classes']:7d}  {r['source']}")
        print(f"{'':58s}{r['papers']}")
    print(f"{len(rows)} datasets bundled (no network needed).")
    return 0


COMMAND = Command("datasets", help="list the bundled datasets with sizes and sources", run=_run)
