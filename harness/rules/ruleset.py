"""Ruleset identifiers: the nine fields of docs/rules.md, parsed, validated and formatted.

>>> rs = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
>>> rs.rows, rs.cols, rs.checkers, rs.edge
(4, 4, 8, 'torus')
>>> rs.id
'pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump'
>>> Ruleset.from_id("pop1-9x4-c8-torus-continue-binempty-king-nozero-nojump")
Traceback (most recent call last):
...
harness.rules.errors.RulesetError: ruleset field 'board': '9x4' has 9 rows; allowed 3 to 8
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from harness.bounded import clip
from harness.rules.errors import RulesetError

VERSIONS = ("pop1",)
EDGES = ("reincarnation", "ringout", "blocked", "torus", "klein")
WRAPPING_EDGES = ("torus", "klein")
STUCK_RULES = ("continue", "draw")
MOVEMENTS = ("nomove", "binempty", "always")
PATTERNS = ("king", "rook", "bishop", "queen", "anywhere")
MIN_SIDE, MAX_SIDE = 3, 8
MIN_CHECKERS, MAX_CHECKERS = 3, 16

FIELDS = ("version", "board", "checkers", "edge", "stuck", "movement", "pattern", "zero", "jumps")

# ASCII digits without leading zeros, so every ruleset has exactly one spelling.
_NUMBER = r"([1-9][0-9]*)"
_DIGITS = 2  # more is out of range whatever the digits (and never reaches int())
_BOARD = re.compile(_NUMBER + "x" + _NUMBER)
_CHECKERS = re.compile("c" + _NUMBER)


@dataclass(frozen=True, order=True)
class Ruleset:
    """One ruleset of Pop; immutable and hashable, so it can key caches."""

    rows: int = 6
    cols: int = 6
    checkers: int = 8
    edge: str = "torus"
    stuck: str = "continue"
    movement: str = "binempty"
    pattern: str = "king"
    zero: bool = False
    jump: bool = False
    version: str = "pop1"

    def __post_init__(self) -> None:
        def check(field: str, value: object, allowed: tuple[str, ...]) -> None:
            if value not in allowed:
                raise RulesetError(
                    f"ruleset field {field!r}: {clip(value)} is not one of {', '.join(allowed)}"
                )

        check("version", self.version, VERSIONS)
        for name, side in (("rows", self.rows), ("cols", self.cols)):
            if not (isinstance(side, int) and MIN_SIDE <= side <= MAX_SIDE):
                raise RulesetError(
                    f"ruleset field 'board': '{self.rows}x{self.cols}' has {side} {name}; "
                    f"allowed {MIN_SIDE} to {MAX_SIDE}"
                )
        if not (isinstance(self.checkers, int) and MIN_CHECKERS <= self.checkers <= MAX_CHECKERS):
            raise RulesetError(
                f"ruleset field 'checkers': 'c{self.checkers}' is out of range; "
                f"allowed c{MIN_CHECKERS} to c{MAX_CHECKERS}"
            )
        check("edge", self.edge, EDGES)
        check("stuck", self.stuck, STUCK_RULES)
        check("movement", self.movement, MOVEMENTS)
        check("pattern", self.pattern, PATTERNS)

    @classmethod
    def from_id(cls, text: str) -> Ruleset:
        """Parse an identifier, e.g. ``pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump``.

        The error names the field, the value (at most 80 characters of it) and what is
        allowed. An id has one spelling: ASCII digits without leading zeros, no spaces.

        >>> Ruleset.from_id("pop1-06x6-c8-torus-continue-binempty-king-nozero-nojump")
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        harness.rules.errors.RulesetError: ruleset field 'board': '06x6' is not RxC, ...
        """
        if not isinstance(text, str):
            raise RulesetError(f"ruleset id must be text, not {type(text).__name__}")
        parts = text.split("-")
        if len(parts) != len(FIELDS):
            raise RulesetError(
                f"ruleset id {clip(text)} has {len(parts):,} fields; expected {len(FIELDS)}: "
                + "-".join(FIELDS)
            )
        version, board, checkers, edge, stuck, movement, pattern, zero, jumps = parts
        m = _BOARD.fullmatch(board)
        if not m:
            raise RulesetError(
                f"ruleset field 'board': {clip(board)} is not RxC, e.g. '6x6' "
                "(ASCII digits, no leading zeros)"
            )
        if max(len(m.group(1)), len(m.group(2))) > _DIGITS:
            raise RulesetError(
                f"ruleset field 'board': {clip(board)} is out of range; "
                f"allowed {MIN_SIDE} to {MAX_SIDE} rows and columns"
            )
        c = _CHECKERS.fullmatch(checkers)
        if not c:
            raise RulesetError(
                f"ruleset field 'checkers': {clip(checkers)} is not cN, e.g. 'c8' "
                "(ASCII digits, no leading zeros)"
            )
        if len(c.group(1)) > _DIGITS:
            raise RulesetError(
                f"ruleset field 'checkers': {clip(checkers)} is out of range; "
                f"allowed c{MIN_CHECKERS} to c{MAX_CHECKERS}"
            )
        if zero not in ("zero", "nozero"):
            raise RulesetError(f"ruleset field 'zero': {clip(zero)} is not one of zero, nozero")
        if jumps not in ("jump", "nojump"):
            raise RulesetError(f"ruleset field 'jumps': {clip(jumps)} is not one of jump, nojump")
        return cls(
            rows=int(m.group(1)),
            cols=int(m.group(2)),
            checkers=int(c.group(1)),
            edge=edge,
            stuck=stuck,
            movement=movement,
            pattern=pattern,
            zero=zero == "zero",
            jump=jumps == "jump",
            version=version,
        )

    @property
    def id(self) -> str:
        """The identifier: the nine fields in docs/rules.md's order joined by ``-``."""
        return "-".join(
            (
                self.version,
                f"{self.rows}x{self.cols}",
                f"c{self.checkers}",
                self.edge,
                self.stuck,
                self.movement,
                self.pattern,
                "zero" if self.zero else "nozero",
                "jump" if self.jump else "nojump",
            )
        )

    def __str__(self) -> str:
        return self.id

    def __repr__(self) -> str:
        return f"Ruleset.from_id({self.id!r})"

    @property
    def squares(self) -> int:
        return self.rows * self.cols

    @property
    def wraps(self) -> bool:
        """Whether pops and lines wrap around the edges (movement never does)."""
        return self.edge in WRAPPING_EDGES

    @property
    def removes(self) -> bool:
        """Whether checkers can leave the game (only ``ringout``)."""
        return self.edge == "ringout"

    def with_(self, **changes: object) -> Ruleset:
        """A copy with some fields changed: ``rs.with_(rows=5, cols=5)``."""
        return replace(self, **changes)

    @property
    def is_research_family(self) -> bool:
        """The fields the Lean model covers: torus, continue, binempty, king, nozero, nojump."""
        return (
            self.edge == "torus"
            and self.stuck == "continue"
            and self.movement == "binempty"
            and self.pattern == "king"
            and not self.zero
            and not self.jump
        )


RESEARCH_RULESET = Ruleset.from_id("pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump")
DEFAULT_RULESET = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
