"""Run a stage's many independent pieces of work on Dask: one machine or a cluster.

Every command that runs many independent pieces (``lean``, ``certify``, ``results``,
``solve --method compact``) takes the same options (:func:`add_cluster_arguments`):
``--workers N`` (a :class:`distributed.LocalCluster` of N processes on 127.0.0.1),
``--scheduler ADDRESS`` (an existing ``dask scheduler``), ``--cluster-config FILE``
(Slurm, PBS, SGE or LSF through ``dask-jobqueue``) and ``--shared DIR`` (a folder every
worker sees, for data moved as files by content hash). Without any of them a command runs
as it always has, in this process and its own children.

The layer is Dask's own user API, not a scheduler of ours: a :class:`Session` holds the
``Client``; stages submit module-level functions and collect them as they finish through
one loop over ``as_completed``, :class:`TaskQueue` (``lean``, ``certify``, ``results``, the
split proof search). The compact solver instead merges its ranges in order, a window of
them in flight at a time. Faults are split in two:

* a **lost worker** (killed, crashed, its machine gone): the scheduler runs the task again
  on another worker, up to ``distributed.scheduler.allowed-failures`` times (3), and then
  reports :class:`distributed.KilledWorker` once. Tasks are pure functions of their inputs,
  so the rerun gives the identical result.
* a **real failure** (a Lean error, a memory cap, a module that does not build): the task
  *returns* a result that says so, it does not raise, so nothing retries it; it is reported
  once, with its module or subtree. Tasks are submitted with ``retries=0``.

>>> spec = ClusterSpec(workers=2)
>>> spec.requested, spec.describe()
(True, 'a LocalCluster of 2 worker processes on 127.0.0.1')
>>> ClusterSpec().requested
False
"""

from harness.cluster.options import ClusterSpec, add_cluster_arguments, cluster_spec
from harness.cluster.session import Session, TaskBar, Traced
from harness.cluster.store import Blob, SharedStore, StoreError, fetch
from harness.cluster.tasks import Finished, TaskQueue

__all__ = [
    "Blob",
    "ClusterSpec",
    "Finished",
    "Session",
    "SharedStore",
    "StoreError",
    "TaskBar",
    "TaskQueue",
    "Traced",
    "add_cluster_arguments",
    "cluster_spec",
    "fetch",
]
