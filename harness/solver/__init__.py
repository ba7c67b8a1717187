"""Solving Pop: the numpy batch engine, the retrograde solver and the proof search.

* :mod:`harness.solver.batch` — :func:`~harness.solver.batch.engine` (a cached
  :class:`~harness.solver.batch.BatchEngine` per ruleset): successors of whole batches of
  positions (:class:`~harness.solver.batch.States`), canonical keys.
* :mod:`harness.solver.retrograde` — :func:`~harness.solver.retrograde.solve`: the value and
  plies of every reachable position of a ruleset whose graph fits in memory.
* :mod:`harness.solver.proof` — proof search where it does not.

Submodules are imported on use, so ``import harness.solver`` stays cheap.
"""
