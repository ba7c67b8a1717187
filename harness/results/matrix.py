"""Named matrices of rulesets: which cells ``python -m harness results`` runs.

A cell is one ruleset of the research movement (``continue-binempty-king-nozero-nojump``),
named by board, checkers and edge. ``issue`` is the table of the c8 frontier (c8 on 4x4, 5x5,
6x6 times the five edges) plus 3x3 c8; ``small`` is c3 to c6 on 4x4 and 5x5 on the five edges
where a strong solve fits (:func:`harness.solver.choice.class_bound`); ``default`` is both.

>>> [c.row + " " + c.edge for c in MATRICES["issue"]()][:2]
['4x4 c8 reincarnation', '4x4 c8 ringout']
>>> len(MATRICES["issue"]())
20
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.rules.ruleset import Ruleset

EDGES = ("reincarnation", "ringout", "blocked", "klein", "torus")
MOVEMENT = "continue-binempty-king-nozero-nojump"


def grid_place(ruleset: str) -> tuple[str, str] | None:
    """Where a ruleset id sits in a results grid: its row (``RxC cN``) and its edge's
    column; None for an id whose edge is not a column.

    >>> grid_place("pop1-5x5-c8-ringout-continue-binempty-king-nozero-nojump")
    ('5x5 c8', 'ringout')
    >>> grid_place("pop1-5x5") is None
    True
    """
    parts = str(ruleset).split("-")
    if len(parts) < 4 or parts[3] not in EDGES:
        return None
    return f"{parts[1]} {parts[2]}", parts[3]


@dataclass(frozen=True)
class Cell:
    board: str  # "4x4"
    checkers: int
    edge: str

    @property
    def ruleset(self) -> str:
        return f"pop1-{self.board}-c{self.checkers}-{self.edge}-{MOVEMENT}"

    @property
    def row(self) -> str:
        """The grid's row label: board and checkers."""
        return f"{self.board} c{self.checkers}"


def _fits(cell: Cell) -> bool:
    from harness.solver.choice import AUTO_CLASS_LIMIT, class_bound

    return class_bound(Ruleset.from_id(cell.ruleset)) <= AUTO_CLASS_LIMIT


def issue_matrix() -> list[Cell]:
    """The c8 frontier (c8 on 4x4, 5x5, 6x6 times five edges), then 3x3 c8."""
    cells = [Cell(b, 8, e) for b in ("4x4", "5x5", "6x6") for e in EDGES]
    return cells + [Cell("3x3", 8, e) for e in EDGES]


def small_matrix() -> list[Cell]:
    """c3 to c6 on 4x4 and 5x5, every edge, where a strong solve fits."""
    cells = [Cell(b, n, e) for b in ("4x4", "5x5") for n in (3, 4, 5, 6) for e in EDGES]
    return [c for c in cells if _fits(c)]


def default_matrix() -> list[Cell]:
    return issue_matrix() + small_matrix()


MATRICES: dict[str, Callable[[], list[Cell]]] = {
    "default": default_matrix,
    "issue": issue_matrix,
    "small": small_matrix,
}


def cells_of(name: str, only: list[str] | None = None) -> list[Cell]:
    """The cells of matrix ``name``, restricted to those whose ruleset id contains one of
    ``only`` (substrings such as ``4x4`` or ``c8-torus``) when given."""
    if name not in MATRICES:
        raise ValueError(f"matrix {name!r}: not one of {', '.join(MATRICES)}")
    cells = MATRICES[name]()
    if only:
        cells = [c for c in cells if any(o in c.ruleset for o in only)]
    return cells
