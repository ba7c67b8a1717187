"""The time and memory budget of a solve (``--time-limit``, ``--memory-limit``), checked
between batches; running out raises :class:`BudgetExceeded`.
"""

from __future__ import annotations

import time

from harness.solver.memory import resident_bytes


class BudgetExceeded(RuntimeError):
    """The solve ran out of its position, time or memory budget (partial counts attached)."""

    def __init__(self, message: str, classes: int, seconds: float):
        super().__init__(message)
        self.classes = classes
        self.seconds = seconds


class Budget:
    """Limits on classes, seconds and resident memory, and on what the solver's numbering
    holds (``index_limit``); :meth:`check` raises :class:`BudgetExceeded` past any."""

    def __init__(self, max_classes, max_seconds, max_memory, start, index_limit=None, index_why=""):
        self.max_classes = max_classes
        self.index_limit = index_limit  # the classes a solver's numbering can hold at most
        self.index_why = index_why  # why it can hold no more
        self.max_seconds = max_seconds
        self.max_memory = max_memory
        self.start = start

    def check(self, classes: int) -> None:
        elapsed = time.perf_counter() - self.start
        if self.index_limit is not None and classes >= self.index_limit:
            raise BudgetExceeded(
                f"more than {self.index_limit} classes: {self.index_why}",
                classes,
                elapsed,
            )
        if self.max_classes is not None and classes > self.max_classes:
            raise BudgetExceeded(
                f"more than {self.max_classes} classes (budget --max-positions)", classes, elapsed
            )
        if self.max_seconds is not None and elapsed > self.max_seconds:
            raise BudgetExceeded(
                f"more than {self.max_seconds:g} s (budget --time-limit)", classes, elapsed
            )
        if self.max_memory is not None and resident_bytes() > self.max_memory:
            raise BudgetExceeded(
                f"resident memory {resident_bytes() / 2**30:.1f} GiB above "
                f"{self.max_memory / 2**30:.1f} GiB (budget --memory-limit)",
                classes,
                elapsed,
            )

    def check_need(self, what: str, need: int, classes: int) -> None:
        """Refuse a pass that would take the resident memory past the budget."""
        if self.max_memory is None:
            return
        rss = resident_bytes()
        if rss + need > self.max_memory:
            raise BudgetExceeded(
                f"{what} would need about {need / 2**30:.1f} GiB more than the "
                f"{rss / 2**30:.1f} GiB in use, past {self.max_memory / 2**30:.1f} GiB "
                "(budget --memory-limit)",
                classes,
                time.perf_counter() - self.start,
            )
