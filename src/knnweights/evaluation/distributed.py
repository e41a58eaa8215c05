"""Running evaluation cells on an existing ``dask.distributed`` cluster.

:func:`use_scheduler` connects a :class:`dask.distributed.Client` to a running
scheduler (an address such as ``tcp://10.0.0.5:8786``, or the environment variable
``DASK_SCHEDULER_ADDRESS``) and, inside the block, runs joblib under the ``"dask"``
backend, so :func:`~knnweights.evaluation.run_grid` (and every other ``n_jobs`` loop of
the library) sends its cells to the cluster's workers.  Results do not depend on where
the cells run: every cell's seed comes from its names (see :mod:`~knnweights.evaluation.protocols`).

The workers need ``knnweights`` installed (the same version); the data of each cell
travels with it.  :func:`knnweights.cli.add_scheduler_argument` gives a command line the
``--scheduler ADDRESS`` option (``knnweights evaluate``, ``knnweights reproduce``).
"""

import contextlib
import os

import joblib

from ..exceptions import SchedulerError

__all__ = ["ENV_VAR", "SchedulerError", "scheduler_address", "use_scheduler"]

#: the environment variable read when no address is given
ENV_VAR = "DASK_SCHEDULER_ADDRESS"

#: seconds to wait for a scheduler to answer (``use_scheduler(timeout=None)``)
CONNECT_TIMEOUT = 10.0


def scheduler_address(address=None):
    """The address to use: ``address``, else ``$DASK_SCHEDULER_ADDRESS``, else ``None``.

    Parameters
    ----------
    address : str, optional
        A scheduler's address given by the caller (``tcp://host:8786``).

    Returns
    -------
    address : str or None
        The address, or ``None`` when none is given or set.
    """
    if address:
        return str(address)
    env = os.environ.get(ENV_VAR, "").strip()
    return env or None


@contextlib.contextmanager
def use_scheduler(address=None, timeout=None):
    """Run joblib work inside the block on a running ``dask.distributed`` scheduler.

    Parameters
    ----------
    address : str, optional
        The scheduler's address (``tcp://host:8786``; also a ``dask.distributed``
        ``LocalCluster``'s ``scheduler_address``).  ``None``: the environment
        variable ``DASK_SCHEDULER_ADDRESS``; when that is unset too, the block runs
        with the current joblib backend and yields ``None``.
    timeout : float, optional
        Seconds to wait for the connection (default: ``CONNECT_TIMEOUT``, 10).

    Yields
    ------
    dask.distributed.Client or None
        The connected client (closed when the block ends; the cluster keeps running).

    Raises
    ------
    SchedulerError
        dask.distributed is missing, or no scheduler answers at the address.

    Examples
    --------
    >>> from knnweights.evaluation.distributed import use_scheduler
    >>> with use_scheduler(None) as client:  # no address and no DASK_SCHEDULER_ADDRESS: runs locally
    ...     print(client)
    None
    """
    address = scheduler_address(address)
    if address is None:
        yield None
        return
    try:
        from dask.distributed import Client  # optional: dask[distributed]
    except ImportError:
        raise SchedulerError("--scheduler needs dask.distributed: pip install 'dask[distributed]'") from None

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT if timeout is None else timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        raise SchedulerError(f"cannot reach the dask scheduler at {address!r} ({msg}).") from None
    try:
        with client.as_current(), joblib.parallel_backend("dask", client=client):
            yield client
    finally:
        client.close()
