"""Running evaluation cells on an existing ``dask.distributed`` cluster.

:func:`use_scheduler` (the library's one dask module, :mod:`knnweights.engine._dask`, seen from the
evaluation layer) connects a :class:`dask.distributed.Client` to a running
scheduler (an address such as ``tcp://10.0.0.5:8786``, or the environment variable
``DASK_SCHEDULER_ADDRESS``) and, inside the block, runs joblib under the ``"dask"``
backend, so :func:`~knnweights.evaluation.run_grid` (and every other ``n_jobs`` loop of
the library) sends its cells to the cluster's workers.  Results do not depend on where
the cells run: every cell's seed comes from its names (see :mod:`~knnweights.evaluation.protocols`).

The workers need ``knnweights`` installed (the same version); the data of each cell
travels with it.  :func:`knnweights.cli.add_scheduler_argument` gives a command line the
``--scheduler ADDRESS`` option (``knnweights evaluate``, ``knnweights reproduce``).
"""

from ..engine._dask import CONNECT_TIMEOUT, ENV_VAR, local_cluster, scheduler_address, use_scheduler
from ..exceptions import SchedulerError

__all__ = ["CONNECT_TIMEOUT", "ENV_VAR", "SchedulerError", "local_cluster", "scheduler_address", "use_scheduler"]
