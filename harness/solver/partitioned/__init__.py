"""The partitioned strong solver: every class owned by one of P partitions, each step of the
solve one task per partition (``solve --method partitioned``; docs/cluster.md).

- :mod:`~harness.solver.partitioned.files`: who owns a class, and the work folder's files,
  each checked against its run's token and content hash;
- :mod:`~harness.solver.partitioned.steps`: one partition's share of an enumeration step, a
  retrograde ply and the final count (what a task runs);
- :mod:`~harness.solver.partitioned.driver`: :func:`solve`, which runs the steps in order
  and saves after each, and :func:`assemble`, which puts a finished solve together.
"""

from harness.solver.partitioned.driver import PartitionedSolve, assemble, solve
from harness.solver.partitioned.files import PartitionError

__all__ = ["PartitionError", "PartitionedSolve", "assemble", "solve"]
