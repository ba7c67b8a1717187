"""The ``Nat`` encoding shared by the Lean model (``lean/Pop``) and the renderer.

A ruleset of the research movement (``continue``, ``binempty``, ``king``, ``nozero``,
``nojump``; any edge, any board) becomes ``Cfg(rows, cols, checkers, edge)``. A position becomes one
natural number (``encode`` in ``Pop/Check.lean``)::

    key = x | o << n | xbin << 2n | obin << 2n+5 | turn << 2n+10        (n = rows * cols)

and an action one natural number (``Pop/Rules.lean``): a placement on ``dst`` is ``dst``, a
move ``src``→``dst`` is ``dst + n * (src + 1)``.

>>> from harness.rules import Ruleset
>>> cfg = Cfg.of(Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"))
>>> cfg.lean()
'⟨3, 3, 3, .torus⟩'

>>> key = position_key(cfg, "x../.../..o 2 2 o")
>>> key == 1 | (1 << 8) << 9 | 2 << 18 | 2 << 23 | 1 << 28
True
>>> position_text(cfg, key)
'x../.../..o 2 2 o'
>>> action_code(cfg, "b2-c3"), action_text(cfg, 8 + 9 * 5)
(53, 'b2-c3')
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.rules import Action, Position, Ruleset

BIN_BITS = 5  # bins hold at most 16 checkers (docs/rules.md: 3 <= N <= 16)


class EncodingError(ValueError):
    """A ruleset, position or action the Lean model cannot represent."""


# What the Lean model covers, field by field (Ruleset attribute -> the values it handles).
# This is the one place to widen when the model learns another edge or movement rule: the
# renderer (Cfg.of) and ``verify`` (before it runs anything) both ask lean_model_gap.
LEAN_MODEL_COVERS: dict[str, tuple[object, ...]] = {
    "edge": ("reincarnation", "ringout", "blocked", "torus", "klein"),
    "stuck": ("continue",),
    "movement": ("binempty",),
    "pattern": ("king",),
    "zero": (False,),
    "jump": (False,),
}
_FIELD_NAMES = {"zero": "zero move", "jump": "jumps"}
_FLAG_WORDS = {"zero": ("nozero", "zero"), "jump": ("nojump", "jump")}


def lean_model_gap(rs: Ruleset) -> str | None:
    """None when the Lean model covers ``rs``; else one line naming the first field outside it.

    >>> lean_model_gap(Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"))
    >>> lean_model_gap(Ruleset.from_id("pop1-4x4-c8-klein-draw-binempty-king-nozero-nojump"))
    "field 'stuck' is draw; the Lean model covers stuck continue"
    """

    def word(name: str, value: object) -> str:
        return _FLAG_WORDS[name][bool(value)] if name in _FLAG_WORDS else str(value)

    for name, allowed in LEAN_MODEL_COVERS.items():
        value = getattr(rs, name)
        if value not in allowed:
            label = _FIELD_NAMES.get(name, name)
            covers = ", ".join(word(name, v) for v in allowed)
            return f"field '{label}' is {word(name, value)}; the Lean model covers {label} {covers}"
    return None


@dataclass(frozen=True)
class Cfg:
    """``Pop.Cfg``: board size, checker count and edge of a ruleset of the research movement."""

    rows: int
    cols: int
    checkers: int
    edge: str = "torus"

    @classmethod
    def of(cls, rs: Ruleset) -> Cfg:
        """The Lean model's view of ``rs``; an :class:`EncodingError` naming the first field
        the model does not cover (it covers every edge and board, the research movement)."""
        gap = lean_model_gap(rs)
        if gap is not None:
            raise EncodingError(f"ruleset {rs.id}: {gap}")
        return cls(rs.rows, rs.cols, rs.checkers, rs.edge)

    @property
    def size(self) -> int:
        return self.rows * self.cols

    @property
    def full(self) -> int:
        return (1 << self.size) - 1

    def ruleset(self) -> Ruleset:
        return Ruleset.from_id(
            f"pop1-{self.rows}x{self.cols}-c{self.checkers}"
            f"-{self.edge}-continue-binempty-king-nozero-nojump"
        )

    def lean(self) -> str:
        """The Lean literal: ``⟨4, 4, 8, .torus⟩``."""
        return f"⟨{self.rows}, {self.cols}, {self.checkers}, .{self.edge}⟩"


def encode(cfg: Cfg, x: int, o: int, xbin: int, obin: int, turn: int) -> int:
    """``Pop.encode`` on the five fields of ``Pop.Pos`` (turn 0 = x, 1 = o)."""
    n = cfg.size
    return x | o << n | xbin << 2 * n | obin << (2 * n + BIN_BITS) | turn << (2 * n + 2 * BIN_BITS)


def decode(cfg: Cfg, key: int) -> tuple[int, int, int, int, int]:
    """``Pop.decode``: the five fields back; a turn field other than 0 reads as ``o``."""
    n = cfg.size
    mask = (1 << n) - 1
    turn = 0 if key >> (2 * n + 2 * BIN_BITS) == 0 else 1
    return (
        key & mask,
        (key >> n) & mask,
        (key >> 2 * n) & 31,
        (key >> (2 * n + BIN_BITS)) & 31,
        turn,
    )


def position_key(cfg: Cfg, text: str) -> int:
    """Parse a position in docs/rules.md notation (validated by the rules engine) and encode it."""
    pos = Position.from_text(cfg.ruleset(), text)
    return encode(cfg, pos.board[0], pos.board[1], pos.bins[0], pos.bins[1], pos.turn)


def position_of_key(cfg: Cfg, key: int) -> Position:
    x, o, xbin, obin, turn = decode(cfg, key)
    if encode(cfg, x, o, xbin, obin, turn) != key:
        raise EncodingError(f"key {key} is not the encoding of any position on {cfg.lean()}")
    return Position((x, o), (xbin, obin), turn)


def position_text(cfg: Cfg, key: int) -> str:
    return position_of_key(cfg, key).text(cfg.ruleset())


def action_code(cfg: Cfg, text: str) -> int:
    """Parse an action in notation and encode it as in ``Pop.legal``."""
    act = Action.from_text(cfg.ruleset(), text)
    return code_of_action(cfg, act)


def code_of_action(cfg: Cfg, act: Action) -> int:
    if act.src is None:
        return act.dst
    if act.src == act.dst:
        raise EncodingError(f"zero move {act.text(cfg.ruleset())!r}: not in the research movement")
    return act.dst + cfg.size * (act.src + 1)


def action_of_code(cfg: Cfg, code: int) -> Action:
    n = cfg.size
    src1, dst = divmod(code, n)
    if src1 > n:
        raise EncodingError(f"action code {code} names no square on {cfg.lean()}")
    return Action(None if src1 == 0 else src1 - 1, dst)


def action_text(cfg: Cfg, code: int) -> str:
    return action_of_code(cfg, code).text(cfg.ruleset())
