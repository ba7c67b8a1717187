"""A line-by-line Python mirror of ``lean/Pop/Rules.lean`` and ``lean/Pop/Check.lean``.

Same algorithm, same ``Nat`` encoding, same names (snake_case), so that what the Lean kernel
will compute can be tested here, where no Lean toolchain exists: the mirror's transitions are
compared with the reference engine, and its verdicts on (mutated) certificates with the Python
certificate checker. Keep the two files in step: a change to one is a change to the other.

>>> from harness.lean.codec import Cfg
>>> cfg = Cfg(3, 3, 3)
>>> s = initial(cfg)
>>> legal(cfg, s)
[0, 1, 2, 3, 4, 5, 6, 7, 8]
>>> out = step(cfg, s, 4)
>>> (out.next.x, out.next.xbin, out.next.turn, out.result)
(16, 2, 1, None)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from harness.lean.codec import Cfg, decode, encode

X, O = 0, 1

# (dr + 1, dc + 1) in row-major order, as ``Pop.dirs``.
DIRS = ((0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2))


@dataclass(frozen=True)
class Pos:
    """``Pop.Pos``."""

    x: int
    o: int
    xbin: int
    obin: int
    turn: int

    @property
    def mine(self) -> int:
        return self.x if self.turn == X else self.o

    @property
    def theirs(self) -> int:
        return self.o if self.turn == X else self.x

    @property
    def bin(self) -> int:
        return self.xbin if self.turn == X else self.obin

    @property
    def occ(self) -> int:
        return self.x | self.o

    def hand_over(self, mine: int, theirs: int, bin_: int) -> Pos:
        if self.turn == X:
            return Pos(mine, theirs, bin_, self.obin, O)
        return Pos(theirs, mine, self.xbin, bin_, X)


DRAW = "draw"  # results: ("win", side) or DRAW, mirrored as 0/1 for a win and "draw"


@dataclass(frozen=True)
class Outcome:
    """``Pop.Outcome``: ``result`` is None, ``X``/``O`` for a win of that side, or ``DRAW``."""

    next: Pos
    result: int | str | None


def initial(cfg: Cfg) -> Pos:
    return Pos(0, 0, cfg.checkers, cfg.checkers, X)


def bit(sq: int) -> int:
    return 1 << sq


def has(b: int, sq: int) -> bool:
    return (b >> sq) & 1 == 1


def grid_step(cfg: Cfg, sq: int, d: tuple[int, int]) -> int | None:
    r = sq // cfg.cols + d[0]
    k = sq % cfg.cols + d[1]
    if r == 0 or k == 0 or r >= cfg.rows + 1 or k >= cfg.cols + 1:
        return None
    return (r - 1) * cfg.cols + (k - 1)


def torus_step(cfg: Cfg, sq: int, d: tuple[int, int]) -> int:
    return ((sq // cfg.cols + cfg.rows + d[0] - 1) % cfg.rows) * cfg.cols + (
        sq % cfg.cols + cfg.cols + d[1] - 1
    ) % cfg.cols


def move_code(cfg: Cfg, src: int, dst: int) -> int:
    return dst + cfg.size * (src + 1)


def king_moves(cfg: Cfg, occ: int, src: int) -> list[int]:
    out = []
    for d in DIRS:
        t = grid_step(cfg, src, d)
        if t is not None and not has(occ, t):
            out.append(move_code(cfg, src, t))
    return out


def legal(cfg: Cfg, s: Pos) -> list[int]:
    if s.bin == 0:
        out: list[int] = []
        for src in range(cfg.size):
            if has(s.mine, src):
                out += king_moves(cfg, s.occ, src)
        return out
    return [sq for sq in range(cfg.size) if not has(s.occ, sq)]


def shared_targets(cfg: Cfg, occ: int, land: int) -> int:
    seen = twice = 0
    for d in DIRS:
        n = torus_step(cfg, land, d)
        if has(occ, n):
            t = bit(torus_step(cfg, n, d))
            seen, twice = seen | t, twice | (seen & t)
    return twice


def push_all(cfg: Cfg, occ: int, land: int, twice: int, m: int, t: int) -> tuple[int, int]:
    for d in DIRS:
        n = torus_step(cfg, land, d)
        g = torus_step(cfg, n, d)
        if has(occ, n) and not has(occ, g) and not has(twice, g):
            if has(m, n):
                m = (m ^ bit(n)) | bit(g)
            else:
                t = (t ^ bit(n)) | bit(g)
    return m, t


def first_col(cfg: Cfg) -> int:
    return cfg.full // (bit(cfg.cols) - 1)


def last_col(cfg: Cfg) -> int:
    return first_col(cfg) << (cfg.cols - 1)


def shift_e(cfg: Cfg, b: int) -> int:
    return ((b >> 1) & (cfg.full - last_col(cfg))) | ((b << (cfg.cols - 1)) & last_col(cfg))


def shift_w(cfg: Cfg, b: int) -> int:
    return ((b << 1) & (cfg.full - first_col(cfg))) | ((b >> (cfg.cols - 1)) & first_col(cfg))


def shift_s(cfg: Cfg, b: int) -> int:
    return (b >> cfg.cols) | ((b << (cfg.size - cfg.cols)) & cfg.full)


def line_along(sh: Callable[[int], int], b: int) -> bool:
    b1 = sh(b)
    return (b & b1 & sh(b1)) != 0


def has_line(cfg: Cfg, b0: int) -> bool:
    b = b0 & cfg.full
    return (
        line_along(lambda v: shift_e(cfg, v), b)
        or line_along(lambda v: shift_s(cfg, v), b)
        or line_along(lambda v: shift_s(cfg, shift_e(cfg, v)), b)
        or line_along(lambda v: shift_s(cfg, shift_w(cfg, v)), b)
    )


def settle(cfg: Cfg, h: Pos, mover: int) -> Outcome:
    if legal(cfg, h):
        return Outcome(h, None)
    back = replace(h, turn=mover)
    if legal(cfg, back):
        return Outcome(back, None)
    return Outcome(h, DRAW)


def step(cfg: Cfg, s: Pos, a: int) -> Outcome:
    dst = a % cfg.size
    src1 = a // cfg.size
    placing = src1 == 0
    m0 = s.mine if placing else s.mine ^ bit(src1 - 1)
    m1 = m0 | bit(dst)
    bin_ = s.bin - 1 if placing else s.bin
    bin_ = max(bin_, 0)  # Nat subtraction truncates
    occ = m1 | s.theirs
    twice = shared_targets(cfg, occ, dst)
    mine, theirs = push_all(cfg, occ, dst, twice, m1, s.theirs)
    lm, lt = has_line(cfg, mine), has_line(cfg, theirs)
    h = s.hand_over(mine, theirs, bin_)
    if lm and lt:
        return Outcome(h, DRAW)
    if lm:
        return Outcome(h, s.turn)
    if lt:
        return Outcome(h, 1 - s.turn)
    return settle(cfg, h, s.turn)


# --- Check.lean ------------------------------------------------------------------------------


def pos_encode(cfg: Cfg, s: Pos) -> int:
    return encode(cfg, s.x, s.o, s.xbin, s.obin, s.turn)


def pos_decode(cfg: Cfg, key: int) -> Pos:
    return Pos(*decode(cfg, key))


@dataclass(frozen=True)
class Node:
    """``Pop.Tree.node``; a leaf is None."""

    left: Node | None
    key: int
    act: int
    rank: int
    right: Node | None


def tree_find(t: Node | None, k: int) -> Node | None:
    while t is not None:
        if k < t.key:
            t = t.left
        elif t.key < k:
            t = t.right
        else:
            return t
    return None


def tree_entries(t: Node | None) -> Iterable[Node]:
    """In-order (sorted by key for a search tree)."""
    stack: list[Node] = []
    while stack or t is not None:
        while t is not None:
            stack.append(t)
            t = t.left
        t = stack.pop()
        yield t
        t = t.right


def balanced(entries: list[tuple[int, int, int]]) -> Node | None:
    """The renderer's tree: ``entries`` sorted by key, middle element at each root."""

    def build(lo: int, hi: int) -> Node | None:
        if lo >= hi:
            return None
        mid = (lo + hi) // 2
        k, a, n = entries[mid]
        return Node(build(lo, mid), k, a, n, build(mid + 1, hi))

    return build(0, len(entries))


def result_wins(result: int | str | None, p: int) -> bool:
    return result == p


def outcome_ok(p: int, o: Outcome, k: Callable[[Pos], bool]) -> bool:
    if o.result is not None:
        return result_wins(o.result, p)
    return k(o.next)


def node_ok(cfg: Cfg, p: int, proved: Callable[[Pos], bool], fuel: int, s: Pos) -> bool:
    if fuel == 0:
        return False
    if s.turn == p:
        return proved(s)
    acts = legal(cfg, s)
    return bool(acts) and all(
        outcome_ok(p, step(cfg, s, b), lambda s2: node_ok(cfg, p, proved, fuel - 1, s2))
        for b in acts
    )


def fuel_of(cfg: Cfg) -> int:
    return cfg.size + 2


def entry_ok(cfg: Cfg, p: int, proved: Callable[[Pos], bool], k: int, a: int) -> bool:
    s = pos_decode(cfg, k)
    return (
        s.turn == p
        and a in legal(cfg, s)
        and outcome_ok(p, step(cfg, s, a), lambda s2: node_ok(cfg, p, proved, fuel_of(cfg), s2))
    )


def found_below(cfg: Cfg, n: int, s: Pos, f: Node | None) -> bool:
    return f is not None and f.rank + 1 <= n and pos_decode(cfg, f.key) == s


def known_below(cfg: Cfg, t: Node | None, lower: Callable[[Pos], bool], n: int, s: Pos) -> bool:
    return found_below(cfg, n, s, tree_find(t, pos_encode(cfg, s))) or lower(s)


def check_shard(cfg: Cfg, p: int, lower: Callable[[Pos], bool], t: Node | None) -> bool:
    """``Pop.checkShard``: every entry's winning action, replies, passes and ranks check."""
    return all(
        entry_ok(cfg, p, lambda s, n=e.rank: known_below(cfg, t, lower, n, s), e.key, e.act)
        for e in tree_entries(t)
    )


def failing_entries(cfg: Cfg, p: int, lower: Callable[[Pos], bool], t: Node | None) -> list[Node]:
    """The entries on which ``check_shard`` fails (empty when it accepts)."""
    return [
        e
        for e in tree_entries(t)
        if not entry_ok(cfg, p, lambda s, n=e.rank: known_below(cfg, t, lower, n, s), e.key, e.act)
    ]


def found_at(cfg: Cfg, s: Pos, f: Node | None) -> bool:
    return f is not None and pos_decode(cfg, f.key) == s


def lookup_table(cfg: Cfg, groups: list[tuple[int, list[Node | None]]], s: Pos) -> bool:
    """``Pop.lookupTable``: groups of proved shard trees by placement rank."""
    key = pos_encode(cfg, s)
    return any(
        pr == s.xbin + s.obin and any(found_at(cfg, s, tree_find(t, key)) for t in trees)
        for pr, trees in groups
    )
