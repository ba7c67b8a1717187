"""Size weighted work into kernel-sized declarations.

The Lean kernel keeps every intermediate ``whnf`` of one declaration in memory, so a
``decide +kernel`` declaration must stay under a budget of estimated reduction steps
(:mod:`harness.lean.model`'s cost model). :func:`pack` cuts a sequence of weighted items into
contiguous runs, each under the budget, packed by weight (not by count); a run may also be
capped in length (long literals are slow to elaborate). Contiguity keeps the runs in the
items' order, which the shard renderer needs (each run is a key range of a search tree).

>>> pack([3, 3, 3, 8, 1, 1], budget=7)
[range(0, 2), range(2, 3), range(3, 4), range(4, 6)]
>>> pack([3, 3, 3], budget=100, max_items=2)
[range(0, 2), range(2, 3)]
"""

from __future__ import annotations

from collections.abc import Sequence

BUDGET = 10**7  # estimated kernel steps per declaration (≈ 1-2 GB at 100-200 bytes a step)


def pack(
    weights: Sequence[int], budget: int = BUDGET, max_items: int | None = None, overhead: int = 0
) -> list[range]:
    """Greedy contiguous packing: each run's ``overhead + sum(weights)`` stays ``<= budget``
    unless a single item alone exceeds it (then it is a run of its own, and over budget).

    Greedy is optimal here: for contiguous runs under a cap, closing a run as late as possible
    never increases the number of runs.
    """
    runs: list[range] = []
    start, total = 0, overhead
    for i, w in enumerate(weights):
        full = max_items is not None and i - start >= max_items
        if i > start and (total + w > budget or full):
            runs.append(range(start, i))
            start, total = i, overhead
        total += w
    if start < len(weights):
        runs.append(range(start, len(weights)))
    return runs


def run_weights(weights: Sequence[int], runs: Sequence[range], overhead: int = 0) -> list[int]:
    """The weight of every run (with the per-run overhead)."""
    return [overhead + sum(weights[i] for i in r) for r in runs]
