"""The reference engine: legal actions and one turn, exactly as docs/rules.md says.

Every other engine (numpy, browser, Lean) is tested against this one, so it favours being
obviously right over being clever; it is still written on bitboards with precomputed tables
because the certificate checker runs it on every reply of every entry.

>>> from harness.rules.ruleset import DEFAULT_RULESET as rs
>>> pos = Position.from_text(rs, "..../.x../..../.... 7 8 o")
>>> out = apply_action(rs, pos, Action.from_text(rs, "c2"))
>>> out.next.text(rs), out.result, sorted(out.branches)
('..../x.o./..../.... 7 7 x', None, ['place', 'push'])

Decisions where docs/rules.md leaves a gap (the browser and Lean engines make the same ones):

* A push *targets* T only when its neighbour N is occupied, N is reached from one direction
  only, and T is on the board. T is *shared* when two or more such pushes target it; all of
  them fail. (Pushes whose target is occupied still count towards sharing; it changes
  nothing, since they fail anyway.)
* The position recorded for repetition is the one handed over: after a pass under
  ``continue`` the mover is to move again. Repetition is checked after the stuck rule, so
  a stuck draw is reported as such rather than as a repetition.
* A position after a game-ending action is written with the mover's opponent to move, even
  when a pass would otherwise have followed.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from harness.rules.errors import IllegalActionError
from harness.rules.geometry import PATTERN_DIRECTIONS, Geometry, geometry, iter_bits
from harness.rules.position import PLAYERS, Action, Position
from harness.rules.ruleset import Ruleset


@dataclass(frozen=True)
class Pop:
    """What happened to one pushed neighbour: ``kind`` is ``push``, ``fall``,
    ``blocked_occupied`` or ``blocked_shared``; ``dst`` is None for a fall."""

    kind: str
    src: int
    dst: int | None
    owner: int


@dataclass(frozen=True)
class Outcome:
    """The result of one action.

    ``next`` is the position as handed over (the mover again after a pass; the mover's
    opponent after a game-ending action); ``result`` is ``"x"``, ``"o"``, ``"draw"`` or None;
    ``branches`` names the rule branches the turn exercised (the corpus' vocabulary).
    """

    next: Position
    result: str | None
    branches: frozenset[str]
    pops: tuple[Pop, ...] = ()
    lines: tuple[tuple[int, tuple[int, int, int]], ...] = ()  # (owner, squares)
    passed: bool = False
    reason: str | None = None  # how the game ended: line, lines, ringout, stuck, repetition

    @property
    def is_terminal(self) -> bool:
        return self.result is not None


def movement_allowed(rs: Ruleset, pos: Position) -> bool:
    """Whether the player to move may move a checker on the board (docs/rules.md, *Move*)."""
    if rs.movement == "always":
        return True
    return rs.movement == "binempty" and pos.bins[pos.turn] == 0


def _destinations(rs: Ruleset, geo: Geometry, occupied: int, src: int) -> list[int]:
    """Where a checker on ``src`` may move (empty squares on the plain grid)."""
    if rs.pattern == "king":
        dests = [t for t in geo.king_targets[src] if not occupied >> t & 1]
    elif rs.pattern == "anywhere":
        dests = [t for t in range(geo.squares) if not occupied >> t & 1]
    else:
        dests = []
        for d in PATTERN_DIRECTIONS[rs.pattern]:
            for t in geo.slide_rays[src][d]:
                if occupied >> t & 1:
                    if not rs.jump:
                        break
                else:
                    dests.append(t)
        dests.sort()
    if rs.zero:
        dests.append(src)
        dests.sort()
    return dests


def legal_actions(rs: Ruleset, pos: Position) -> list[Action]:
    """Every legal action: placements by square, then moves by (source, destination)."""
    geo = geometry(rs)
    occupied = pos.occupied
    actions: list[Action] = []
    if pos.bins[pos.turn] > 0:
        actions.extend(Action(None, sq) for sq in range(geo.squares) if not occupied >> sq & 1)
    if movement_allowed(rs, pos):
        for src in iter_bits(pos.board[pos.turn]):
            actions.extend(Action(src, dst) for dst in _destinations(rs, geo, occupied, src))
    return actions


def has_legal_action(rs: Ruleset, pos: Position) -> bool:
    """Like ``bool(legal_actions(rs, pos))``, without listing them."""
    geo = geometry(rs)
    occupied = pos.occupied
    if occupied == geo.full:
        return rs.zero and movement_allowed(rs, pos) and pos.board[pos.turn] != 0
    if pos.bins[pos.turn] > 0:
        return True
    if not movement_allowed(rs, pos):
        return False
    return any(_destinations(rs, geo, occupied, src) for src in iter_bits(pos.board[pos.turn]))


def _is_legal(rs: Ruleset, pos: Position, action: Action) -> bool:
    geo = geometry(rs)
    occupied = pos.occupied
    if not 0 <= action.dst < geo.squares:
        return False
    if action.src is None:
        return pos.bins[pos.turn] > 0 and not occupied >> action.dst & 1
    if not (0 <= action.src < geo.squares and movement_allowed(rs, pos)):
        return False
    if not pos.board[pos.turn] >> action.src & 1:
        return False
    return action.dst in _destinations(rs, geo, occupied, action.src)


def apply_action(
    rs: Ruleset, pos: Position, action: Action, history: Collection[Position] = ()
) -> Outcome:
    """Play ``action`` in ``pos``; ``history`` holds the game's earlier positions (for
    repetition; ``pos`` itself always counts as having occurred).

    Raises :class:`IllegalActionError` for an action the rules do not allow.
    """
    if not _is_legal(rs, pos, action):
        raise IllegalActionError(
            f"action {action.text(rs)!r} is not legal for {PLAYERS[pos.turn]} in {pos.text(rs)!r}"
        )
    return play_unchecked(rs, pos, action, history)


def play_unchecked(
    rs: Ruleset, pos: Position, action: Action, history: Collection[Position] = ()
) -> Outcome:
    """:func:`apply_action` without the legality check, for callers that generated the action."""
    geo = geometry(rs)
    me = pos.turn
    them = 1 - me
    board = [pos.board[0], pos.board[1]]
    bins = [pos.bins[0], pos.bins[1]]
    branches: set[str] = set()
    src, dst = action

    # 1-3. Place or move, then land.
    if src is None:
        bins[me] -= 1
        branches.add("place")
    else:
        branches.add(f"move_{rs.pattern}")
        if src == dst:
            branches.add("move_zero")
        elif rs.jump and rs.pattern in ("rook", "bishop", "queen"):
            if _passes_over(geo, pos.occupied, src, dst):
                branches.add("move_jump")
        if rs.wraps and geo.border >> src & 1:
            branches.add("move_from_edge")
        board[me] &= ~(1 << src)
    board[me] |= 1 << dst

    # 4. Pop: decide every push on the snapshot, then apply them together.
    snapshot = board[0] | board[1]
    candidates = []
    targeted: dict[int, int] = {}
    for ray in geo.pop_rays[dst]:
        if not snapshot >> ray.neighbour & 1:
            continue
        candidates.append(ray)
        if ray.target is not None:
            targeted[ray.target] = targeted.get(ray.target, 0) + 1
    pops = []
    for ray in candidates:
        n = ray.neighbour
        owner = 0 if board[0] >> n & 1 else 1
        if ray.target is None:
            branches.add(f"fall_{rs.edge}")
            pops.append(Pop("fall" if rs.edge != "blocked" else "blocked_edge", n, None, owner))
        elif snapshot >> ray.target & 1:
            branches.add("push_blocked_occupied")
            pops.append(Pop("blocked_occupied", n, ray.target, owner))
        elif targeted[ray.target] > 1:
            branches.add("push_blocked_shared")
            pops.append(Pop("blocked_shared", n, ray.target, owner))
        else:
            branches.add("push")
            if ray.wrapped:
                branches.add("push_wrap")
            if ray.twisted:
                branches.add("push_twist")
            pops.append(Pop("push", n, ray.target, owner))
    for p in pops:
        if p.kind == "push":
            board[p.owner] = board[p.owner] & ~(1 << p.src) | (1 << p.dst)
        elif p.kind == "fall":
            board[p.owner] &= ~(1 << p.src)
            if rs.edge == "reincarnation":
                bins[p.owner] += 1

    # 5.1 Lines.
    lines = []
    for line in geo.lines:
        for owner in (0, 1):
            if board[owner] & line.mask == line.mask:
                lines.append((owner, line.squares))
                branches.add(f"line_{line.direction}")
                if line.wrapped:
                    branches.add("line_wrapped")
    mover_line = any(owner == me for owner, _ in lines)
    opponent_line = any(owner == them for owner, _ in lines)
    ended = Position((board[0], board[1]), (bins[0], bins[1]), them)
    result = None
    reason = None
    if mover_line and opponent_line:
        result, reason = "draw", "lines"
        branches.add("draw_lines")
    elif mover_line:
        result, reason = PLAYERS[me], "line"
        branches.add("win_mover")
    elif opponent_line:
        result, reason = PLAYERS[them], "line"
        branches.add("win_opponent")
    # 5.2 Ringout: fewer than three surviving checkers can never make a line.
    elif rs.edge == "ringout":
        short = [p for p in (0, 1) if board[p].bit_count() + bins[p] < 3]
        if len(short) == 2:
            result, reason = "draw", "ringout"
            branches.add("ringout_draw")
        elif short:
            result, reason = PLAYERS[1 - short[0]], "ringout"
            branches.add("ringout_loss")
    if result is not None:
        return Outcome(ended, result, frozenset(branches), tuple(pops), tuple(lines), reason=reason)

    # Stuck: the opponent has no legal action.
    passed = False
    handed = ended
    if not has_legal_action(rs, ended):
        if rs.stuck == "draw":
            branches.add("stuck_draw")
            return Outcome(ended, "draw", frozenset(branches), tuple(pops), reason="stuck")
        again = ended.with_turn(me)
        if not has_legal_action(rs, again):
            branches.add("stuck_both_draw")
            return Outcome(ended, "draw", frozenset(branches), tuple(pops), reason="stuck")
        branches.add("stuck_pass")
        passed = True
        handed = again

    # 5.3 Repetition, on the position as handed over. The position the turn started from
    # has occurred in the game too, whether or not the caller's history lists it.
    if handed == pos or handed in history:
        branches.add("repetition_draw")
        # Game over: written with the opponent to move, like every game-ending action.
        return Outcome(
            ended, "draw", frozenset(branches), tuple(pops), passed=passed, reason="repetition"
        )
    return Outcome(handed, None, frozenset(branches), tuple(pops), passed=passed)


def _passes_over(geo: Geometry, occupied: int, src: int, dst: int) -> bool:
    """Whether the straight slide from src to dst crosses an occupied square."""
    for ray in geo.slide_rays[src]:
        if dst in ray:
            return any(occupied >> t & 1 for t in ray[: ray.index(dst)])
    return False


@dataclass
class Game:
    """A game with its history, in OpenSpiel's vocabulary.

    >>> from harness.rules.ruleset import DEFAULT_RULESET as rs
    >>> g = Game(rs)
    >>> len(g.legal_actions()), g.current_player()
    (16, 0)
    >>> _ = g.apply_action(Action.from_text(rs, "b2"))
    >>> g.position.text(rs)
    '..../.x../..../.... 7 8 o'
    >>> g.undo(); g.position.text(rs)
    '..../..../..../.... 8 8 x'
    """

    ruleset: Ruleset
    start: Position | None = None
    positions: list[Position] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.start is None:
            self.start = Position.initial(self.ruleset)
        if not self.positions:
            self.positions = [self.start]

    @property
    def position(self) -> Position:
        return self.positions[-1]

    @property
    def history(self) -> list[Position]:
        """Every position of the game so far, the current one last."""
        return list(self.positions)

    @property
    def result(self) -> str | None:
        return self.outcomes[-1].result if self.outcomes else None

    def is_terminal(self) -> bool:
        if self.result is not None:
            return True
        # Only a start position can leave the player to move stuck; a turn never does.
        return not self.outcomes and not has_legal_action(self.ruleset, self.position)

    def current_player(self) -> int:
        """0 for x, 1 for o; -4 (OpenSpiel's terminal marker) once the game is over."""
        return -4 if self.is_terminal() else self.position.turn

    def legal_actions(self) -> list[Action]:
        return [] if self.is_terminal() else legal_actions(self.ruleset, self.position)

    def apply_action(self, action: Action | str) -> Outcome:
        if isinstance(action, str):
            action = Action.from_text(self.ruleset, action)
        if self.is_terminal():
            raise IllegalActionError(
                f"action {action.text(self.ruleset)!r}: the game is over ({self.result})"
            )
        outcome = apply_action(self.ruleset, self.position, action, self._seen())
        self.positions.append(outcome.next)
        self.actions.append(action)
        self.outcomes.append(outcome)
        return outcome

    def _seen(self) -> set[Position]:
        return set(self.positions)

    def undo(self) -> None:
        if not self.actions:
            raise IllegalActionError("undo: no action to take back")
        self.positions.pop()
        self.actions.pop()
        self.outcomes.pop()

    def returns(self) -> list[float]:
        """[x's, o's] payoff: +1 win, -1 loss, 0 draw or game not over."""
        if self.result == "x":
            return [1.0, -1.0]
        if self.result == "o":
            return [-1.0, 1.0]
        return [0.0, 0.0]
