"""A finished partitioned solve read where it lies (:class:`PartitionedSolution`).

Every partition's sorted keys (its last enumeration step) and its results and plies (the
final step) are memory-mapped read-only, each file's size and blake3 hash checked once against
its step's record when the solution is opened. A position is looked up in the partition that
owns its class (:func:`~harness.solver.partitioned.files.owner_of`) by binary search, so a
solution of billions of classes answers the certificate builder's questions without being
read into memory: the pages a look-up touches are the operating system's to keep or drop.

It answers what :class:`~harness.solver.solution.Solution` answers for building non-win sets
(``lookup``, ``rate_successors``, ``value``, ``classes``), and nothing it would have to hold
every class for.
"""

from __future__ import annotations

import os
import time

import numpy as np

from harness.rules.ruleset import Ruleset
from harness.solver.batch import engine
from harness.solver.checksum import class_checksum
from harness.solver.partitioned.driver import finished_parts, open_finished
from harness.solver.partitioned.files import ENUM, owner_of
from harness.solver.partitioned.keys import find
from harness.solver.solution import LOSS, UNKNOWN, WIN, absolute, rate_successors
from harness.solver.states import States, Successors


class PartitionedSolution:
    """The solution in a partitioned solve's work folder (see the module docstring).

    ``seconds`` is the time it took to open (checking every file's hash).
    """

    def __init__(self, rs: Ruleset, workdir: str | os.PathLike):
        t0 = time.monotonic()
        self.ruleset = rs
        run, state = open_finished(rs, workdir)
        self.partitions = run.partitions
        self.token = run.token  # the run's, from its run.json
        self.part_keys, self.part_result, self.part_plies = [], [], []
        self.file_hashes: list[dict[str, str]] = []  # a partition's blake3 hash of each column
        # What the final step counted, summed: classes, positions, canonical, wins, losses.
        self.totals = dict.fromkeys(("classes", "positions", "canonical", "wins", "losses"), 0)
        self.deepest = 0
        root = None
        for keys, columns, final in finished_parts(run, state, ("result", "plies"), run.map):
            self.part_keys.append(keys)
            self.part_result.append(columns["result"])
            self.part_plies.append(columns["plies"])
            classes = run.record(ENUM, int(state["classes_at"]), final["part"])
            self.file_hashes.append(
                {
                    "keys": classes["files"]["keys"][1],
                    "result": final["files"]["result"][1],
                    "plies": final["files"]["plies"][1],
                }
            )
            for name in self.totals:
                self.totals[name] += int(final["summary"].get(name, 0))
            self.deepest = max(self.deepest, int(final["summary"].get("deepest", 0)))
            root = final["summary"].get("root") or root
        if root is None:
            raise run.error("final-0000", "no partition holds the initial position")
        self.root_result, self.root_plies = int(root["result"]), int(root["plies"])
        self.seconds = time.monotonic() - t0

    @property
    def classes(self) -> int:
        return sum(len(k) for k in self.part_keys)

    @property
    def value(self) -> str:
        """``x``, ``o`` or ``draw`` from the initial position (x is to move there)."""
        return {WIN: "x", LOSS: "o", UNKNOWN: "draw"}[self.root_result]

    @property
    def plies(self) -> int | None:
        """Plies to the end with best play from the initial position (None for a draw)."""
        return None if self.root_result == UNKNOWN else self.root_plies

    def checksum(self) -> int:
        """The solution's :func:`~harness.solver.checksum.class_checksum`: the same as any
        other solve's of the ruleset, whatever its partitions (reads every column once)."""
        total = 0
        columns = zip(self.part_keys, self.part_result, self.part_plies, strict=True)
        for keys, result, plies in columns:
            total = (total + class_checksum(keys, result, plies)) % 2**64
        return total

    def lookup(self, states: States) -> tuple[np.ndarray, np.ndarray]:
        """(value, plies) of a batch of positions, as :meth:`Solution.lookup`."""
        eng = engine(self.ruleset)
        me, them, mb, tb = states.mover_view()
        keys = eng.class_keys(me, them, mb, tb)
        rel = np.full(len(keys), -1, dtype=np.int8)
        plies = np.zeros(len(keys), dtype=np.int64)
        owner = owner_of(keys, self.partitions)
        for part in np.unique(owner).tolist():
            rows = np.flatnonzero(owner == part)
            at = find(self.part_keys[part], keys[rows])
            hit = at >= 0
            rel[rows[hit]] = self.part_result[part][at[hit]]
            plies[rows[hit]] = self.part_plies[part][at[hit]]
        return absolute(states.turn, rel, plies)

    def rate_successors(self, states: States) -> tuple[Successors, np.ndarray, np.ndarray]:
        """Every legal action of a batch of positions, rated, as
        :meth:`Solution.rate_successors`."""
        return rate_successors(self.ruleset, self.lookup, states)
