"""The compact strong solver: sorted class keys, 2-bit values, no stored edges, out of core.

It gives the same :class:`~harness.solver.solution.Solution` as
:func:`harness.solver.retrograde.solve`, class by class, in a fraction of the memory
(``solve --method compact``; docs/solver.md). One module per stage of a solve:

- :mod:`~harness.solver.compact.constants`: value codes, meta bits, batch sizes;
- :mod:`~harness.solver.compact.columns`: per-class columns, in memory or memory-mapped;
- :mod:`~harness.solver.compact.store`: the sorted key store and its key filter;
- :mod:`~harness.solver.compact.unplay`: predecessors by un-playing an action;
- :mod:`~harness.solver.compact.runner`: the batches (a pure function each) and who runs them;
- :mod:`~harness.solver.compact.dask_runner`: the same batches as Dask tasks;
- :mod:`~harness.solver.compact.enumeration`: the breadth-first enumeration of classes;
- :mod:`~harness.solver.compact.backward`: the retrograde pass, ply by ply;
- :mod:`~harness.solver.compact.workdir`: the work folder and its checkpoints;
- :mod:`~harness.solver.compact.driver`: :func:`solve`, which strings them together.
"""

from harness.solver.compact.constants import CompactError
from harness.solver.compact.driver import discard, solve

__all__ = ["CompactError", "discard", "solve"]
