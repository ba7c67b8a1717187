"""A plain, deliberately slow second implementation of docs/rules.md (pop1).

Written line by line from the rule text and the lead's decisions on its gaps, without looking at
``harness.rules``: its only job is to disagree with the reference engine when either is wrong.
Boards are dicts ``{(row, col): "x" | "o"}`` holding occupied squares only; rows count from the
top (row 0 is docs/rules.md's row ``1``), columns from the left (column 0 is ``a``).

Decisions taken from the lead where docs/rules.md leaves a gap:

* a push *targets* T only when N is occupied, N is reached from a single direction and T is on
  the board; T is shared when two or more such pushes target it, and then all of them fail;
* repetition is checked on the position as handed over (after a pass under ``continue`` the
  mover is to move again);
* the opponent stuck under ``draw``, or both players stuck under ``continue``, is a draw;
* a position after a game-ending action is written with the mover's opponent to move.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache

# --------------------------------------------------------------------------------------------
# Ruleset identifiers

VERSIONS = ("pop1",)
EDGES = ("reincarnation", "ringout", "blocked", "torus", "klein")
STUCKS = ("continue", "draw")
MOVEMENTS = ("nomove", "binempty", "always")
PATTERNS = ("king", "rook", "bishop", "queen", "anywhere")
ZEROS = ("zero", "nozero")
JUMPS = ("jump", "nojump")
FIELD_NAMES = (
    "version",
    "board",
    "checkers",
    "edge",
    "stuck",
    "movement",
    "pattern",
    "zero",
    "jumps",
)
MIN_SIDE, MAX_SIDE = 3, 8
MIN_CHECKERS, MAX_CHECKERS = 3, 16
WRAPPING_EDGES = ("torus", "klein")


class OracleError(ValueError):
    """Unusable input: a bad ruleset id, position, square or action."""


@dataclass(frozen=True)
class Ruleset:
    version: str
    rows: int
    cols: int
    checkers: int
    edge: str
    stuck: str
    movement: str
    pattern: str
    zero: bool
    jump: bool

    @property
    def ident(self) -> str:
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

    @property
    def squares(self) -> list[tuple[int, int]]:
        return [(r, c) for r in range(self.rows) for c in range(self.cols)]


def _choice(field_name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise OracleError(f"ruleset field {field_name}: {value!r} is not one of {allowed}")
    return value


def parse_ruleset(text: str) -> Ruleset:
    """Parse ``pop1-RxC-cN-edge-stuck-movement-pattern-zero-jumps``; errors name the field."""
    parts = text.split("-")
    if len(parts) != len(FIELD_NAMES):
        raise OracleError(
            f"ruleset: expected {len(FIELD_NAMES)} fields joined by '-', got {text!r}"
        )
    version, board, checkers, edge, stuck, movement, pattern, zero, jumps = parts
    _choice("version", version, VERSIONS)
    m = re.fullmatch(r"([0-9]+)x([0-9]+)", board)
    if not m:
        raise OracleError(f"ruleset field board: {board!r} is not RxC")
    rows, cols = int(m.group(1)), int(m.group(2))
    if not (MIN_SIDE <= rows <= MAX_SIDE and MIN_SIDE <= cols <= MAX_SIDE):
        raise OracleError(f"ruleset field board: {board!r} needs {MIN_SIDE} <= R, C <= {MAX_SIDE}")
    m = re.fullmatch(r"c([0-9]+)", checkers)
    if not m:
        raise OracleError(f"ruleset field checkers: {checkers!r} is not cN")
    count = int(m.group(1))
    if not MIN_CHECKERS <= count <= MAX_CHECKERS:
        raise OracleError(
            f"ruleset field checkers: {checkers!r} needs {MIN_CHECKERS} <= N <= {MAX_CHECKERS}"
        )
    return Ruleset(
        version=version,
        rows=rows,
        cols=cols,
        checkers=count,
        edge=_choice("edge", edge, EDGES),
        stuck=_choice("stuck", stuck, STUCKS),
        movement=_choice("movement", movement, MOVEMENTS),
        pattern=_choice("pattern", pattern, PATTERNS),
        zero=_choice("zero", zero, ZEROS) == "zero",
        jump=_choice("jumps", jumps, JUMPS) == "jump",
    )


# --------------------------------------------------------------------------------------------
# Positions and actions in docs/rules.md notation


def other(player: str) -> str:
    return "o" if player == "x" else "x"


@dataclass(frozen=True)
class Position:
    board: dict = field(hash=False, compare=True)  # {(row, col): "x" | "o"}, occupied only
    bins: tuple[int, int]  # (x's bin, o's bin)
    turn: str  # "x" or "o"

    def bin(self, player: str) -> int:
        return self.bins[0] if player == "x" else self.bins[1]

    def on_board(self, player: str) -> int:
        return sum(1 for owner in self.board.values() if owner == player)


def format_square(sq: tuple[int, int]) -> str:
    r, c = sq
    return f"{chr(ord('a') + c)}{r + 1}"


def parse_square(rs: Ruleset, text: str) -> tuple[int, int]:
    m = re.fullmatch(r"([a-z])([0-9]+)", text)
    if not m:
        raise OracleError(f"square: expected a column letter and a row number, got {text!r}")
    sq = (int(m.group(2)) - 1, ord(m.group(1)) - ord("a"))
    if not (0 <= sq[0] < rs.rows and 0 <= sq[1] < rs.cols):
        raise OracleError(f"square {text!r} is off the {rs.rows}x{rs.cols} board")
    return sq


def format_position(rs: Ruleset, pos: Position) -> str:
    rows = ["".join(pos.board.get((r, c), ".") for c in range(rs.cols)) for r in range(rs.rows)]
    return f"{'/'.join(rows)} {pos.bins[0]} {pos.bins[1]} {pos.turn}"


def parse_position(rs: Ruleset, text: str) -> Position:
    """Parse and validate a position: shape, characters, bins, and checker counts."""
    parts = text.split(" ")
    if len(parts) != 4:
        raise OracleError(f"position: expected 'ROWS XBIN OBIN PLAYER', got {text!r}")
    rows_text, xbin, obin, turn = parts
    rows = rows_text.split("/")
    if len(rows) != rs.rows:
        raise OracleError(f"position: expected {rs.rows} rows, got {len(rows)}")
    board = {}
    for r, row in enumerate(rows):
        if len(row) != rs.cols:
            raise OracleError(f"position: row {r + 1} has {len(row)} squares, not {rs.cols}")
        for c, ch in enumerate(row):
            if ch not in ".xo":
                raise OracleError(f"position: unknown character {ch!r} in row {r + 1}")
            if ch != ".":
                board[(r, c)] = ch
    bins = []
    for name, value in (("x", xbin), ("o", obin)):
        if not re.fullmatch(r"[0-9]+", value):
            raise OracleError(f"position: {name}'s bin {value!r} is not a count")
        bins.append(int(value))
    if turn not in ("x", "o"):
        raise OracleError(f"position: player to move must be x or o, got {turn!r}")
    pos = Position(board, (bins[0], bins[1]), turn)
    for player in ("x", "o"):
        total = pos.on_board(player) + pos.bin(player)
        if total > rs.checkers:
            raise OracleError(f"position: {player} has {total} checkers, more than {rs.checkers}")
        if rs.edge != "ringout" and total != rs.checkers:
            raise OracleError(
                f"position: {player} has {total} checkers, but {rs.edge} removes none"
            )
    return pos


def initial_position(rs: Ruleset) -> Position:
    return Position({}, (rs.checkers, rs.checkers), "x")


# An action is ("place", square) or ("move", source, destination).


def format_action(action: tuple) -> str:
    if action[0] == "place":
        return format_square(action[1])
    return f"{format_square(action[1])}-{format_square(action[2])}"


def parse_action(rs: Ruleset, text: str) -> tuple:
    if "-" in text:
        src, _, dst = text.partition("-")
        return ("move", parse_square(rs, src), parse_square(rs, dst))
    return ("place", parse_square(rs, text))


# --------------------------------------------------------------------------------------------
# Edge surfaces

# Every direction a checker can be popped in, and every king step.
DIRECTIONS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]
ORTHOGONAL = [(-1, 0), (1, 0), (0, -1), (0, 1)]
DIAGONAL = [(-1, -1), (-1, 1), (1, -1), (1, 1)]
# Lines: horizontal, vertical and the two diagonals (the opposite directions give the same
# triples read backwards).
LINE_DIRECTIONS = [(0, 1), (1, 0), (1, 1), (1, -1)]


def step(rs: Ruleset, sq: tuple[int, int], d: tuple[int, int]):
    """step(sq, d) on the edge surface: ``((row, col), direction after the step)`` or None."""
    (r, c), (dr, dc) = sq, d
    if rs.edge == "torus":
        return ((r + dr) % rs.rows, (c + dc) % rs.cols), d
    if rs.edge == "klein":
        c2 = (c + dc) % rs.cols
        if 0 <= r + dr < rs.rows:
            return (r + dr, c2), d
        # Crossing the top or bottom mirrors the column and the direction's column part.
        return ((r + dr) % rs.rows, rs.cols - 1 - c2), (dr, -dc)
    r2, c2 = r + dr, c + dc
    if 0 <= r2 < rs.rows and 0 <= c2 < rs.cols:
        return (r2, c2), d
    return None


@cache
def line_triples(rs: Ruleset) -> tuple[tuple, ...]:
    """Every triple S, step(S, d), step(step(S, d), d') for the four line directions."""
    triples = []
    for s in rs.squares:
        for d in LINE_DIRECTIONS:
            first = step(rs, s, d)
            if first is None:
                continue
            second = step(rs, first[0], first[1])
            if second is None:
                continue
            triples.append((s, first[0], second[0]))
    return tuple(triples)


def has_line(rs: Ruleset, board: dict, player: str) -> bool:
    # Three checkers need three distinct squares; with R, C >= 3 a triple never repeats a
    # square (the oracle's tests check that), so no distinctness test is needed here.
    get = board.get
    for a, b, c in line_triples(rs):
        if get(a) == player and get(b) == player and get(c) == player:
            return True
    return False


def line_owners(rs: Ruleset, board: dict) -> set[str]:
    """The players with a line (the same as :func:`has_line` for both, in one pass)."""
    get = board.get
    owners = set()
    for a, b, c in line_triples(rs):
        owner = get(a)
        if owner is not None and get(b) == owner and get(c) == owner:
            owners.add(owner)
    return owners


# --------------------------------------------------------------------------------------------
# Legal actions


def can_move(rs: Ruleset, pos: Position) -> bool:
    if rs.movement == "always":
        return True
    if rs.movement == "binempty":
        return pos.bin(pos.turn) == 0
    return False


def destinations(rs: Ruleset, board: dict, src: tuple[int, int]) -> list[tuple[int, int]]:
    """Destinations of a move from src on the plain grid (movement never wraps)."""

    def on_grid(sq):
        return 0 <= sq[0] < rs.rows and 0 <= sq[1] < rs.cols

    result = []
    if rs.pattern == "anywhere":
        result = [sq for sq in rs.squares if sq not in board]
    elif rs.pattern == "king":
        for dr, dc in DIRECTIONS:
            sq = (src[0] + dr, src[1] + dc)
            if on_grid(sq) and sq not in board:
                result.append(sq)
    else:
        rays = {"rook": ORTHOGONAL, "bishop": DIAGONAL, "queen": ORTHOGONAL + DIAGONAL}
        for dr, dc in rays[rs.pattern]:
            k = 1
            while True:
                sq = (src[0] + k * dr, src[1] + k * dc)
                if not on_grid(sq):
                    break
                if sq in board:
                    if not rs.jump:
                        break  # a sliding move stops at the first occupied square
                else:
                    result.append(sq)
                k += 1
    if rs.zero:
        result.append(src)  # the checker stays and pops again
    return result


def has_action(rs: Ruleset, pos: Position) -> bool:
    """Whether the player to move has a legal action (what *Stuck* asks), without listing
    them all."""
    if pos.bin(pos.turn) > 0 and len(pos.board) < rs.rows * rs.cols:
        return True
    if can_move(rs, pos):
        return any(
            destinations(rs, pos.board, src)
            for src, owner in pos.board.items()
            if owner == pos.turn
        )
    return False


def legal_actions(rs: Ruleset, pos: Position) -> list[tuple]:
    actions = []
    if pos.bin(pos.turn) > 0:
        actions += [("place", sq) for sq in rs.squares if sq not in pos.board]
    if can_move(rs, pos):
        for src in rs.squares:
            if pos.board.get(src) == pos.turn:
                actions += [("move", src, dst) for dst in destinations(rs, pos.board, src)]
    return actions


# --------------------------------------------------------------------------------------------
# One turn


@dataclass
class Outcome:
    """What one action did: the position written after it, the result, and the branches."""

    next: Position
    result: str | None  # "x", "o", "draw" or None
    branches: list[str]


def pop(rs: Ruleset, snapshot: dict, bins: dict, landing: tuple[int, int], branches: list):
    """Apply the pop from ``landing`` to a copy of ``snapshot``; ``bins`` is updated in place."""
    # Which directions reach each neighbour N (and the direction after that first step).
    arrivals: dict[tuple, list] = {}
    for d in DIRECTIONS:
        s = step(rs, landing, d)
        if s is None or s[0] not in snapshot:
            continue  # off a non-wrapping edge, or an empty square: nothing happens
        arrivals.setdefault(s[0], []).append(s[1])
    pushes = []  # (N, T or None when T is off the board)
    for n, dirs in arrivals.items():
        if len(dirs) > 1:
            branches.append("pop-double-neighbour")
            continue  # N arises from two directions: it is not pushed
        t = step(rs, n, dirs[0])
        pushes.append((n, None if t is None else t[0]))
    targeted = Counter(t for _, t in pushes if t is not None)
    board = dict(snapshot)
    arriving = []
    for n, t in pushes:
        if t is None:
            if rs.edge == "blocked":
                branches.append("pop-blocked")
            elif rs.edge == "reincarnation":
                branches.append("pop-reincarnation")
                bins[board.pop(n)] += 1
            else:
                branches.append("pop-ringout")
                del board[n]
        elif t in snapshot:
            branches.append("pop-fail-occupied")
        elif targeted[t] > 1:
            branches.append("pop-fail-shared")
        else:
            branches.append("pop-push")
            arriving.append((t, board.pop(n)))
    # All pushes were decided on the snapshot; now they land together.
    for t, owner in arriving:
        assert t not in board
        board[t] = owner
    return board


def play(
    rs: Ruleset, pos: Position, action: tuple, history: list | None = None, check: bool = True
) -> Outcome:
    """One turn of docs/rules.md. ``history``: positions of the game so far (for repetition);
    ``check=False`` skips re-checking legality when the caller took the action from
    :func:`legal_actions`."""
    if check and action not in legal_actions(rs, pos):
        raise OracleError(f"illegal action {format_action(action)}")
    me, opp = pos.turn, other(pos.turn)
    bins = {"x": pos.bins[0], "o": pos.bins[1]}
    board = dict(pos.board)
    branches: list[str] = []
    # Land.
    if action[0] == "place":
        branches.append("place")
        bins[me] -= 1
        landing = action[1]
    else:
        src, landing = action[1], action[2]
        branches.append("zero-move" if src == landing else "move")
        del board[src]
    board[landing] = me
    # Pop, decided on the snapshot.
    board = pop(rs, board, bins, landing, branches)

    def at(turn: str) -> Position:
        return Position(board, (bins["x"], bins["o"]), turn)

    # Result 1: lines.
    owners = line_owners(rs, board)
    mine, theirs = me in owners, opp in owners
    if mine and theirs:
        return Outcome(at(opp), "draw", branches + ["line-both"])
    if mine:
        return Outcome(at(opp), me, branches + ["line-mover"])
    if theirs:
        return Outcome(at(opp), opp, branches + ["line-opponent"])
    # Result 2: ringout losses.
    if rs.edge == "ringout":
        low_me = sum(1 for v in board.values() if v == me) + bins[me] < 3
        low_opp = sum(1 for v in board.values() if v == opp) + bins[opp] < 3
        if low_me and low_opp:
            return Outcome(at(opp), "draw", branches + ["ringout-draw"])
        if low_me:
            return Outcome(at(opp), opp, branches + ["ringout-loss"])
        if low_opp:
            return Outcome(at(opp), me, branches + ["ringout-loss"])
    # Stuck: decide the position as handed over.
    handed = at(opp)
    if not has_action(rs, handed):
        if rs.stuck == "draw":
            return Outcome(at(opp), "draw", branches + ["stuck-draw"])
        handed = at(me)
        if not has_action(rs, handed):
            return Outcome(at(opp), "draw", branches + ["stuck-both"])
        branches.append("stuck-pass")
    # Result 3: repetition, on the position as handed over.
    if history is not None and any(handed == earlier for earlier in history):
        return Outcome(at(opp), "draw", branches + ["repetition"])
    return Outcome(handed, None, branches)


def play_text(ruleset: str, position: str, action: str) -> tuple[str, str | None]:
    """The ``rules step`` contract in notation: (next position text, result)."""
    rs = parse_ruleset(ruleset)
    out = play(rs, parse_position(rs, position), parse_action(rs, action))
    return format_position(rs, out.next), out.result


def actions_text(ruleset: str, position: str) -> list[str]:
    """The ``rules actions`` contract in notation."""
    rs = parse_ruleset(ruleset)
    return [format_action(a) for a in legal_actions(rs, parse_position(rs, position))]


# --------------------------------------------------------------------------------------------
# Brute-force solver for tiny rulesets


@dataclass
class Graph:
    """The reachable game graph, positions keyed by their notation text."""

    rs: Ruleset
    keys: list[str]  # index -> position text; index 0 is the initial position
    # per position: list of edges, each ("end", result) or ("pos", index)
    edges: list[list[tuple]]


def reachable(rs: Ruleset, limit: int = 2_000_000) -> Graph:
    """Breadth-first search of positions reachable by legal play (no history, so no
    repetition), counting the initial one but not positions after a game-ending action."""
    start = initial_position(rs)
    index = {format_position(rs, start): 0}
    keys = [format_position(rs, start)]
    positions = [start]
    edges: list[list[tuple]] = []
    i = 0
    while i < len(positions):
        pos = positions[i]
        out_edges = []
        for action in legal_actions(rs, pos):
            out = play(rs, pos, action, check=False)
            if out.result is not None:
                out_edges.append(("end", out.result))
                continue
            key = format_position(rs, out.next)
            if key not in index:
                if len(keys) >= limit:
                    raise OracleError(f"{rs.ident}: more than {limit} reachable positions")
                index[key] = len(keys)
                keys.append(key)
                positions.append(out.next)
            out_edges.append(("pos", index[key]))
        edges.append(out_edges)
        i += 1
    return Graph(rs, keys, edges)


@dataclass
class Solution:
    graph: Graph
    value: list[str]  # per position: "x", "o" or "draw"
    plies: list[int | None]  # actions to the end with best play; None for draws


def solve(rs: Ruleset, limit: int = 2_000_000) -> Solution:
    """Retrograde values: the winner takes the fastest win, the loser the slowest loss, and
    whatever neither side can force (including every cycle) is a draw.

    Positions are settled in increasing order of plies, so the first winning child found gives
    the fastest win and the last losing child the slowest loss.
    """
    g = reachable(rs, limit)
    n = len(g.keys)
    mover = [key[-1] for key in g.keys]
    value: list[str | None] = [None] * n
    plies: list[int | None] = [None] * n
    parents: list[list[int]] = [[] for _ in range(n)]
    open_children = [0] * n  # children not yet known to win for the opponent
    slowest = [0] * n  # plies of the slowest loss seen so far
    can_draw = [False] * n  # an action ends the game in a draw at once
    levels: dict[int, list[int]] = {}

    def settle(i: int, v: str, p: int) -> None:
        value[i], plies[i] = v, p
        levels.setdefault(p, []).append(i)

    for i, out_edges in enumerate(g.edges):
        assert out_edges, f"reachable position without an action: {g.keys[i]}"
        for kind, what in out_edges:
            if kind == "pos":
                parents[what].append(i)
                open_children[i] += 1
            elif what == "draw":
                can_draw[i] = True
            elif what != mover[i]:
                slowest[i] = 1
        if any(kind == "end" and what == mover[i] for kind, what in out_edges):
            settle(i, mover[i], 1)
        elif open_children[i] == 0 and not can_draw[i]:
            settle(i, other(mover[i]), 1)  # every action loses at once
    level = 1
    while level in levels or any(k > level for k in levels):
        for child in levels.get(level, []):
            for parent in parents[child]:
                if value[parent] is not None:
                    continue
                if value[child] == mover[parent]:
                    settle(parent, mover[parent], level + 1)
                else:
                    open_children[parent] -= 1
                    slowest[parent] = max(slowest[parent], level + 1)
                    if open_children[parent] == 0 and not can_draw[parent]:
                        settle(parent, other(mover[parent]), slowest[parent])
        level += 1
    final = [v if v is not None else "draw" for v in value]
    final_plies = [p if v != "draw" else None for v, p in zip(final, plies, strict=True)]
    return Solution(g, final, final_plies)
