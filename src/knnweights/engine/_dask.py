"""The library's one way to reach ``dask.distributed``: a scheduler's address, a client, the
joblib backend on it, a local cluster, and feature ranges as tasks on the workers.

Results do not depend on where the work runs: evaluation cells carry their own seeds, and the
feature blocks of :mod:`knnweights.engine.genotypes` add exact integer distances.  dask is an
optional dependency (the ``distributed`` extra); every function imports it when called and turns
its absence, or a scheduler that does not answer, into a one-line
:class:`~knnweights.exceptions.SchedulerError`.
"""

import contextlib
import os

import joblib
import numpy as np

from ..exceptions import SchedulerError

__all__ = ["ENV_VAR", "CONNECT_TIMEOUT", "scheduler_address", "connect", "use_scheduler", "local_cluster",
           "FeatureRanges"]

#: the environment variable read when no address is given
ENV_VAR = "DASK_SCHEDULER_ADDRESS"

#: seconds to wait for a scheduler to answer
CONNECT_TIMEOUT = 10.0

_INSTALL = "dask.distributed is not installed: pip install 'knnweights[distributed]'"


def scheduler_address(address=None):
    """The address to use: ``address``, else ``$DASK_SCHEDULER_ADDRESS``, else ``None``.

    Parameters
    ----------
    address : str, optional
        A scheduler's address given by the caller (``tcp://host:8786``).

    Returns
    -------
    str or None
        The address, or ``None`` for none given.
    """
    if address:
        return str(address)
    env = os.environ.get(ENV_VAR, "").strip()
    return env or None


def connect(address, timeout=None, require_workers=False):
    """A :class:`dask.distributed.Client` of the running scheduler at ``address``.

    The client is not made the default one; close it when done.

    Parameters
    ----------
    address : str
        The scheduler's address (``tcp://host:8786``, or a ``LocalCluster``'s ``scheduler_address``).
    timeout : float, optional
        Seconds to wait for the connection (default :data:`CONNECT_TIMEOUT`).
    require_workers : bool, default=False
        Raise when the scheduler has no worker (work sent to it would wait forever).

    Returns
    -------
    dask.distributed.Client
        The connected client.

    Raises
    ------
    SchedulerError
        dask.distributed is missing, no scheduler answers at ``address``, or (``require_workers``)
        it has no worker.
    """
    try:
        from dask.distributed import Client  # optional: dask
    except ImportError:
        raise SchedulerError(_INSTALL) from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT if timeout is None else timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        raise SchedulerError(f"cannot reach the dask scheduler at {address!r} ({msg}).") from None
    if require_workers and not client.scheduler_info()["workers"]:
        client.close()
        raise SchedulerError(f"the dask scheduler at {address!r} has no workers.")
    return client


@contextlib.contextmanager
def use_scheduler(address=None, timeout=None):
    """Run joblib work inside the block on a running ``dask.distributed`` scheduler.

    Parameters
    ----------
    address : str, optional
        The scheduler's address; ``None``: ``$DASK_SCHEDULER_ADDRESS``, and when that is unset
        too the block runs with the current joblib backend and yields ``None``.
    timeout : float, optional
        Seconds to wait for the connection (default :data:`CONNECT_TIMEOUT`).

    Yields
    ------
    dask.distributed.Client or None
        The connected client (closed when the block ends; the cluster keeps running).

    Raises
    ------
    SchedulerError
        dask.distributed is missing, or no scheduler answers at the address.
    """
    address = scheduler_address(address)
    if address is None:
        yield None
        return
    client = connect(address, timeout)
    try:
        with client.as_current(), joblib.parallel_backend("dask", client=client):
            yield client
    finally:
        client.close()


@contextlib.contextmanager
def local_cluster(n_workers):
    """Run joblib work inside the block on a new local ``dask.distributed`` cluster of processes.

    Parameters
    ----------
    n_workers : int
        Worker processes (one thread each).

    Yields
    ------
    dask.distributed.Client
        The cluster's client; the cluster and client close when the block ends.

    Raises
    ------
    SchedulerError
        dask.distributed is missing.
    """
    try:
        from dask.distributed import Client, LocalCluster  # optional: dask
    except ImportError:
        raise SchedulerError(_INSTALL) from None
    with LocalCluster(n_workers=max(1, int(n_workers)), threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        with joblib.parallel_backend("dask", client=client):
            yield client


class FeatureRanges:
    """Contiguous column ranges of a matrix as tasks on a ``dask.distributed`` cluster, one or more
    per worker; each range's columns live on the worker that runs it.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The matrix; sliced as ``X[:, a:b]`` and scattered unless ``scatter`` is false.
    address : str
        The scheduler's address.
    scatter : bool, default=True
        Send each range's columns to its worker once; ``False``: the tasks get ``X`` itself (a
        picklable source that each worker reads its own columns from, such as a ``.bed`` file).

    Attributes
    ----------
    ranges : list of (int, int)
        The column ranges ``(f0, f1)``, in order.
    client : dask.distributed.Client
        The connection (closed by :meth:`close`).
    """

    def __init__(self, X, address, scatter=True):
        self.client = connect(address, require_workers=True)
        workers = list(self.client.scheduler_info()["workers"])
        d = X.shape[1]
        k = max(1, min(d, len(workers)))
        edges = np.linspace(0, d, k + 1).astype(int)
        self.ranges = [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]
        self.sources = []
        for t, (a, b) in enumerate(self.ranges):
            w = workers[t % len(workers)]
            if scatter:
                fut = self.client.scatter(X[:, a:b], workers=[w], direct=True)
                self.sources.append((fut, 0, b - a))
            else:
                self.sources.append((X, a, b))
        self.workers = [workers[t % len(workers)] for t in range(len(self.ranges))]

    def map(self, fn, args_for):
        """``[fn(source, a, b, *args_for(f0, f1)) for each range]``, run on the range's worker.

        Parameters
        ----------
        fn : callable
            A module-level function (pickled to the workers): ``fn(source, a, b, *args)`` works on
            columns ``a:b`` of ``source``.
        args_for : callable
            ``args_for(f0, f1)``: the further arguments for the range ``f0:f1`` of ``X``.

        Returns
        -------
        list
            The results, in the order of :attr:`ranges`.
        """
        futs = []
        for (src, a, b), (f0, f1), w in zip(self.sources, self.ranges, self.workers, strict=True):
            futs.append(self.client.submit(fn, src, a, b, *args_for(f0, f1), workers=[w], pure=False))
        return self.client.gather(futs)

    def close(self):
        """Close the client (the cluster keeps running)."""
        self.client.close()
