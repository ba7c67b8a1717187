"""A line-by-line Python mirror of ``lean/Pop/Rules.lean`` and ``lean/Pop/Check.lean``, with
the kernel cost model.

Same algorithm, same ``Nat`` encoding, same names (snake_case), so that what the Lean kernel
will compute can be tested here, where no Lean toolchain exists: the mirror's transitions are
compared with the reference engine, and its verdicts on (mutated) certificates with the Python
certificate checker. Keep the two files in step: a change to one is a change to the other.

The public game functions take a :class:`~harness.lean.codec.Cfg` (the Lean functions take the
ruleset's tables ``Geo.of c``; :func:`geo_of` builds the same tables here, cached).

>>> from harness.lean.codec import Cfg
>>> cfg = Cfg(3, 3, 3)
>>> s = initial(cfg)
>>> legal(cfg, s)
[0, 1, 2, 3, 4, 5, 6, 7, 8]
>>> out = step(cfg, s, 4)
>>> (out.next.x, out.next.xbin, out.next.turn, out.result)
(16, 2, 1, None)

**The kernel cost model.** Every function of the checker can count, in a :class:`Meter`, the
work the kernel does for it: squares scanned by ``legal``, rays of a pop, line-map groups,
replies expanded, tree levels searched, lower-shard groups scanned. :func:`estimate` turns the
counts into estimated kernel reduction steps with :data:`UNIT_COSTS`, for the Lean code before
this cost model (``"v1"``: overloaded operators, ``if`` on ``Bool``, torus arithmetic in every
step, own-shard search first) and now (``"v2"``). ``docs/lean.md`` says how the constants were
calibrated and how to recalibrate them from a measured run.

>>> m = Meter()
>>> _ = legal(cfg, s, m)
>>> m.work["legal_square"], estimate(m, "v2") < estimate(m, "v1")
(9, True)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import cache

from harness.lean.codec import Cfg, decode, encode

X, O = 0, 1

# (dr + 1, dc + 1) in row-major order, as ``Pop.dirs``; ``Pop.lineDirs``.
DIRS = ((0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2))
LINE_DIRS = ((1, 2), (2, 1), (2, 2), (2, 0))


# --- the kernel cost model ---------------------------------------------------------------------

# Kernel reduction steps per unit of counted work, for the Lean code before (v1) and after (v2)
# the kernel-cheap hot path. Built from per-construct costs (docs/lean.md, "Kernel cost model"):
# a direct GMP `Nat` call ≈ 2 steps, an overloaded `+ - * / %` ≈ 10 (instance projections),
# `if` on a `Bool` ≈ 12 (`Decidable` instance of `b = true`), `cond`/`match` ≈ 3, a structural
# recursion step ≈ 9 (`brecOn`), a call ≈ 3 (delta + beta), a projection ≈ 2, `has` ≈ 9.
UNIT_COSTS: dict[str, tuple[int, int]] = {
    # unit: (v1, v2)
    "entry": (35, 35),  # Tree.all node, entryOk's conjunction
    "decode": (95, 32),  # 5 fields; v1 through `bit c.size`, `2 * c.size + 5`, `if`
    "encode": (110, 25),
    "pos_beq": (40, 40),
    "mem": (16, 16),  # one element of memB
    "legal_call": (25, 13),
    "legal_square": (51, 24),  # placement scan: v1 `collect` + `if` + `++` + `i + 1`
    "king_source": (49, 23),  # a source square scanned for the mover's checker
    "king_source_own": (920, 0),  # v1 runs gridStep on 8 directions per own checker
    "king_target": (45, 35),  # a grid neighbour examined (v2: read from the table)
    "probe_square": (49, 24),  # settle's lazy `nonEmpty (legal …)` scans squares to the first
    "step": (200, 70),  # one turn's fixed work: action decode, land, hand over, results
    "pick_level": (0, 12),  # v2 reads the landing square's rays by index
    # One pop direction with an empty neighbour (v1: two torusStep computations; `&&` stops at
    # the empty neighbour, and the kernel evaluates `let`s lazily, so the target is not
    # computed); an occupied one adds the target, the shared-target bookkeeping and the push.
    "ray": (341, 55),
    "ray_hit": (350, 60),
    "line_call": (1100, 3),  # v1: four shift compositions with derived masks
    "line_dir": (0, 31),
    "line_group": (0, 24),
    "ringout": (0, 70),  # two popcounts
    "node": (25, 25),  # one nodeOk call
    "reply": (25, 25),  # one element of nonEmptyAll/allB and its outcomeOk
    "known": (30, 22),  # knownBelow/foundBelow glue
    "find_level": (63, 19),  # one level of Tree.find (v1: two `if Nat.blt`)
    "group": (31, 23),  # one group of lookupTable
    "find_in": (20, 20),  # one proved shard of a group (foundAt + `||`)
}
# One global factor on top of the unit costs, fitted to the review's estimate of the committed
# 6x6 certificate's shard 0 under v1 (≈ 4e7 steps, see docs/lean.md); 1.0 = unit costs as is.
SCALE = 1.0
VARIANTS = ("v1", "v2")


class Meter:
    """Counts of kernel work. ``work`` is shared by both variants; the lower-shard lookups,
    which the two variants order differently, are counted per variant in ``lookup``."""

    def __init__(self) -> None:
        self.work: Counter[str] = Counter()
        self.lookup: dict[str, Counter[str]] = {v: Counter() for v in VARIANTS}

    def add(self, unit: str, n: int = 1) -> None:
        self.work[unit] += n

    def add_lookup(self, variant: str, unit: str, n: int = 1) -> None:
        self.lookup[variant][unit] += n

    def merge(self, other: Meter) -> None:
        self.work.update(other.work)
        for v in VARIANTS:
            self.lookup[v].update(other.lookup[v])


def estimate(m: Meter, variant: str = "v2") -> int:
    """Estimated kernel reduction steps of the counted work.

    Monotone: more of any unit never lowers it.
    """
    i = VARIANTS.index(variant)
    total = sum(UNIT_COSTS[u][i] * n for u, n in m.work.items())
    total += sum(UNIT_COSTS[u][i] * n for u, n in m.lookup[variant].items())
    return round(total * SCALE)


# --- the tables: Geo.of ------------------------------------------------------------------------


@dataclass(frozen=True)
class Geo:
    """``Pop.Geo``: rays are ``("push", n, t)`` or ``("fall", n)``; king moves ``(dst, code)``;
    lines ``(first, second)`` lists of shifts ``(mask, right, amt)``."""

    cfg: Cfg
    size: int
    span: int
    rays: tuple[tuple[tuple, ...], ...]
    king: tuple[tuple[tuple[int, int], ...], ...]
    lines: tuple[tuple[tuple[tuple[int, bool, int], ...], tuple[tuple[int, bool, int], ...]], ...]


def grid_step(cfg: Cfg, sq: int, d: tuple[int, int]) -> int | None:
    r = sq // cfg.cols + d[0]
    k = sq % cfg.cols + d[1]
    if r == 0 or k == 0 or r >= cfg.rows + 1 or k >= cfg.cols + 1:
        return None
    return (r - 1) * cfg.cols + (k - 1)


def surf_step(cfg: Cfg, sq: int, d: tuple[int, int]) -> tuple[int, tuple[int, int]] | None:
    """``Pop.surfStep``: docs/rules.md's step on the edge surface, and the direction after it."""
    r = sq // cfg.cols + d[0]
    k = (sq % cfg.cols + cfg.cols + d[1] - 1) % cfg.cols
    if cfg.edge == "torus":
        return ((r + cfg.rows - 1) % cfg.rows) * cfg.cols + k, d
    if cfg.edge == "klein":
        if r == 0 or r >= cfg.rows + 1:
            return ((r + cfg.rows - 1) % cfg.rows) * cfg.cols + (cfg.cols - 1 - k), (d[0], 2 - d[1])
        return (r - 1) * cfg.cols + k, d
    t = grid_step(cfg, sq, d)
    return None if t is None else (t, d)


def ray_of(cfg: Cfg, land: int, d: tuple[int, int]) -> list[tuple]:
    first = surf_step(cfg, land, d)
    if first is None:
        return []
    n, d2 = first
    second = surf_step(cfg, n, d2)
    if second is not None:
        return [("push", n, second[0])]
    return [] if cfg.edge == "blocked" else [("fall", n)]


def move_code(cfg: Cfg, src: int, dst: int) -> int:
    return dst + cfg.size * (src + 1)


def king_from(cfg: Cfg, src: int) -> list[tuple[int, int]]:
    out = []
    for d in DIRS:
        t = grid_step(cfg, src, d)
        if t is not None:
            out.append((t, move_code(cfg, src, t)))
    return out


def shifts_of(f: Callable[[int], int | None], size: int) -> list[tuple[int, bool, int]]:
    """``Pop.shiftsOf f 0 size []``: groups in order of first appearance."""
    acc: list[tuple[int, bool, int]] = []
    for s in range(size):
        t = f(s)
        if t is None:
            continue
        right, amt = (True, t - s) if s <= t else (False, s - t)
        for i, (mask, r, a) in enumerate(acc):
            if r == right and a == amt:
                acc[i] = (mask | 1 << s, r, a)
                break
        else:
            acc.append((1 << s, right, amt))
    return acc


def line_first(cfg: Cfg, d: tuple[int, int], s: int) -> int | None:
    st = surf_step(cfg, s, d)
    return None if st is None else st[0]


def line_second(cfg: Cfg, d: tuple[int, int], s: int) -> int | None:
    st = surf_step(cfg, s, d)
    if st is None:
        return None
    st2 = surf_step(cfg, st[0], st[1])
    return None if st2 is None else st2[0]


@cache
def geo_of(cfg: Cfg) -> Geo:
    """``Pop.Geo.of``: the tables of a ruleset, from the definitions."""
    n = cfg.size
    return Geo(
        cfg=cfg,
        size=n,
        span=1 << n,
        rays=tuple(tuple(r for d in DIRS for r in ray_of(cfg, land, d)) for land in range(n)),
        king=tuple(tuple(king_from(cfg, src)) for src in range(n)),
        lines=tuple(
            (
                tuple(shifts_of(lambda s, d=d: line_first(cfg, d, s), n)),
                tuple(shifts_of(lambda s, d=d: line_second(cfg, d, s), n)),
            )
            for d in LINE_DIRS
        ),
    )


# --- positions and the game --------------------------------------------------------------------


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
    def their_bin(self) -> int:
        return self.obin if self.turn == X else self.xbin

    @property
    def occ(self) -> int:
        return self.x | self.o

    @property
    def placement(self) -> int:
        return self.xbin + self.obin

    def hand_over(self, mine: int, theirs: int, bin_: int, their_bin: int) -> Pos:
        if self.turn == X:
            return Pos(mine, theirs, bin_, their_bin, O)
        return Pos(theirs, mine, their_bin, bin_, X)


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


_NO_METER = Meter()  # counts nobody reads, so callers without a meter pay one branch less


def legal(cfg: Cfg, s: Pos, m: Meter | None = None) -> list[int]:
    """``Pop.legal (Geo.of cfg) s``."""
    g = geo_of(cfg)
    m = m or _NO_METER
    m.add("legal_call")
    occ = s.occ
    if s.bin == 0:
        out: list[int] = []
        mine = s.mine
        m.add("king_source", g.size)
        for src in range(g.size):
            if has(mine, src):
                moves = g.king[src]
                m.add("king_source_own")
                m.add("king_target", len(moves))
                out += [code for t, code in moves if not has(occ, t)]
        return out
    m.add("legal_square", g.size)
    return [sq for sq in range(g.size) if not has(occ, sq)]


def _probe(cfg: Cfg, s: Pos, m: Meter) -> bool:
    """``nonEmpty (legal g s)`` as the kernel evaluates it: lazily, up to the first action."""
    g = geo_of(cfg)
    m.add("legal_call")
    occ = s.occ
    if s.bin == 0:
        mine = s.mine
        for src in range(g.size):
            m.add("probe_square")
            if has(mine, src):
                moves = g.king[src]
                m.add("king_source_own")
                for t, _ in moves:
                    m.add("king_target")
                    if not has(occ, t):
                        return True
        return False
    for sq in range(g.size):
        m.add("probe_square")
        if not has(occ, sq):
            return True
    return False


def shared_targets(occ: int, rays: Iterable[tuple]) -> int:
    seen = twice = 0
    for r in rays:
        if r[0] == "push" and has(occ, r[1]):
            t = bit(r[2])
            seen, twice = seen | t, twice | (seen & t)
    return twice


def push_all(occ: int, twice: int, rays: Iterable[tuple], m1: int, t0: int):
    """``Pop.pushAll``: returns (mine, theirs, mine fell, theirs fell)."""
    mine, theirs, mf, tf = m1, t0, 0, 0
    for r in rays:
        if r[0] == "push":
            _, n, t = r
            if has(occ, n) and not has(occ, t) and not has(twice, t):
                if has(mine, n):
                    mine = (mine ^ bit(n)) | bit(t)
                else:
                    theirs = (theirs ^ bit(n)) | bit(t)
        else:
            n = r[1]
            if has(occ, n):
                if has(mine, n):
                    mine, mf = mine ^ bit(n), mf + 1
                else:
                    theirs, tf = theirs ^ bit(n), tf + 1
    return mine, theirs, mf, tf


def pull(b: int, shifts: Iterable[tuple[int, bool, int]]) -> int:
    out = 0
    for mask, right, amt in shifts:
        out |= mask & ((b >> amt) if right else (b << amt))
    return out


def has_line(cfg: Cfg, b: int, m: Meter | None = None) -> bool:
    """``Pop.hasLine (Geo.of cfg).lines b``."""
    m = m or _NO_METER
    m.add("line_call")
    for first, second in geo_of(cfg).lines:
        m.add("line_dir")
        m.add("line_group", len(first))
        b1 = b & pull(b, first)
        if b1 == 0:
            continue
        m.add("line_group", len(second))
        if b1 & pull(b, second):
            return True
    return False


def popcount(b: int) -> int:
    """``Pop.popcount`` (the SWAR count, exact below 2^64)."""
    b1 = b - ((b >> 1) & 0x5555555555555555)
    b2 = (b1 & 0x3333333333333333) + ((b1 >> 2) & 0x3333333333333333)
    b3 = (b2 + (b2 >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((b3 * 0x0101010101010101) >> 56) % 256


def settle(cfg: Cfg, h: Pos, mover: int, m: Meter | None = None) -> Outcome:
    m = m or _NO_METER
    if _probe(cfg, h, m):
        return Outcome(h, None)
    back = replace(h, turn=mover)
    if _probe(cfg, back, m):
        return Outcome(back, None)
    return Outcome(h, DRAW)


def ringout_result(cfg: Cfg, h: Pos, mover: int, m: Meter | None = None) -> int | str | None:
    """``Pop.ringoutResult``: fewer than 3 surviving checkers loses, both at once draws."""
    if cfg.edge != "ringout":
        return None
    (m or _NO_METER).add("ringout")
    back = replace(h, turn=mover)
    m_short = popcount(back.mine) + back.bin <= 2
    t_short = popcount(h.mine) + h.bin <= 2
    if m_short:
        return DRAW if t_short else 1 - mover
    return mover if t_short else None


def step(cfg: Cfg, s: Pos, a: int, m: Meter | None = None) -> Outcome:
    """``Pop.step (Geo.of cfg) s a``."""
    g = geo_of(cfg)
    m = m or _NO_METER
    m.add("step")
    dst = a % g.size
    src1 = a // g.size
    placing = src1 == 0
    m1 = (s.mine if placing else s.mine ^ bit(src1 - 1)) | bit(dst)
    bin_ = max(s.bin - 1, 0) if placing else s.bin  # Nat subtraction truncates
    occ = m1 | s.theirs
    m.add("pick_level", dst)
    rays = g.rays[dst]
    m.add("ray", len(rays))
    m.add("ray_hit", sum(1 for r in rays if has(occ, r[1])))
    mine, theirs, mf, tf = push_all(occ, shared_targets(occ, rays), rays, m1, s.theirs)
    back = cfg.edge == "reincarnation"
    h = s.hand_over(
        mine, theirs, bin_ + mf if back else bin_, s.their_bin + tf if back else s.their_bin
    )
    lm = has_line(cfg, mine, m)
    lt = has_line(cfg, theirs, m)
    if lm:
        return Outcome(h, DRAW if lt else s.turn)
    if lt:
        return Outcome(h, 1 - s.turn)
    r = ringout_result(cfg, h, s.turn, m)
    if r is not None:
        return Outcome(h, r)
    return settle(cfg, h, s.turn, m)


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


def tree_find(t: Node | None, k: int, m: Meter | None = None, variant: str = "") -> Node | None:
    levels = 0
    found = None
    while t is not None:
        levels += 1
        if t.key <= k:
            if k == t.key:
                found = t
                break
            t = t.right
        else:
            t = t.left
    if m is not None and variant:
        m.add_lookup(variant, "find_level", levels)
    return found


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
    """A balanced search tree of ``entries`` (sorted by key), middle element at each root."""

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


def node_ok(
    cfg: Cfg, p: int, proved: Callable[[Pos], bool], fuel: int, s: Pos, m: Meter | None = None
) -> bool:
    m = m or _NO_METER
    m.add("node")
    if fuel == 0:
        return False
    if s.turn == p:
        return proved(s)
    acts = legal(cfg, s, m)
    if not acts:
        return False
    for b in acts:
        m.add("reply")
        if not outcome_ok(
            p, step(cfg, s, b, m), lambda s2: node_ok(cfg, p, proved, fuel - 1, s2, m)
        ):
            return False
    return True


def fuel_of(cfg: Cfg) -> int:
    return cfg.size + 2


def entry_ok(
    cfg: Cfg, p: int, proved: Callable[[Pos], bool], k: int, a: int, m: Meter | None = None
) -> bool:
    m = m or _NO_METER
    m.add("entry")
    m.add("decode")
    s = pos_decode(cfg, k)
    if s.turn != p:
        return False
    acts = legal(cfg, s, m)
    m.add("mem", acts.index(a) + 1 if a in acts else len(acts))
    return a in acts and outcome_ok(
        p, step(cfg, s, a, m), lambda s2: node_ok(cfg, p, proved, fuel_of(cfg), s2, m)
    )


def found_below(cfg: Cfg, n: int, s: Pos, f: Node | None, m: Meter | None = None) -> bool:
    if f is not None and m is not None:
        m.add("decode")
        m.add("pos_beq")
    return f is not None and f.rank + 1 <= n and pos_decode(cfg, f.key) == s


def lookup_cost(
    cfg: Cfg, groups: list[tuple[int, list[Node | None]]], s: Pos, m: Meter, variant: str
) -> bool:
    """``Pop.lookupTable`` with its work counted for one variant."""
    key = None
    for pr, trees in groups:
        m.add_lookup(variant, "group")
        if pr != s.placement:
            continue
        if key is None:
            key = pos_encode(cfg, s)
            m.add_lookup(variant, "encode")
        for t in trees:
            m.add_lookup(variant, "find_in")
            f = tree_find(t, key, m, variant)
            if f is not None:
                m.add_lookup(variant, "pos_beq")
                m.add_lookup(variant, "decode")
                if pos_decode(cfg, f.key) == s:
                    return True
    return False


def known_below(
    cfg: Cfg,
    t: Node | None,
    lower: Callable[[Pos], bool],
    pr: int,
    n: int,
    s: Pos,
    m: Meter | None = None,
    groups: list[tuple[int, list[Node | None]]] | None = None,
) -> bool:
    """``Pop.knownBelow``: the lower shards first, then (own placement rank only) this shard.

    With a meter and the lower ``groups``, counts the lookup work of both variants: v1 searched
    this shard first for every position, then the lower shards."""
    if m is not None and groups is not None:
        m.add("known")
        # v2 (this code): lower first; own shard only for the own placement rank.
        lower_hit = lookup_cost(cfg, groups, s, m, "v2")
        if not lower_hit and s.placement == pr:
            m.add_lookup("v2", "encode")
            tree_find(t, pos_encode(cfg, s), m, "v2")
        # v1: own shard first (always), then the lower shards.
        m.add_lookup("v1", "encode")
        f = tree_find(t, pos_encode(cfg, s), m, "v1")
        own = f is not None and f.rank + 1 <= n and pos_decode(cfg, f.key) == s
        if not own:
            lookup_cost(cfg, groups, s, m, "v1")
    if lower(s):
        return True
    return s.placement == pr and found_below(cfg, n, s, tree_find(t, pos_encode(cfg, s)))


def shard_entry_ok(
    cfg: Cfg,
    p: int,
    lower: Callable[[Pos], bool],
    pr: int,
    t: Node | None,
    e: Node,
    m: Meter | None = None,
    groups: list[tuple[int, list[Node | None]]] | None = None,
) -> bool:
    """``Pop.shardEntryOk``: the check of one entry of shard ``t``."""
    return entry_ok(
        cfg,
        p,
        lambda s, n=e.rank: known_below(cfg, t, lower, pr, n, s, m, groups),
        e.key,
        e.act,
        m,
    )


def check_shard(cfg: Cfg, p: int, lower: Callable[[Pos], bool], pr: int, t: Node | None) -> bool:
    """``Pop.checkShard``: every entry's winning action, replies, passes and ranks check."""
    return all(shard_entry_ok(cfg, p, lower, pr, t, e) for e in tree_entries(t))


def failing_entries(
    cfg: Cfg, p: int, lower: Callable[[Pos], bool], pr: int, t: Node | None
) -> list[Node]:
    """The entries on which ``check_shard`` fails (empty when it accepts)."""
    return [e for e in tree_entries(t) if not shard_entry_ok(cfg, p, lower, pr, t, e)]


def found_at(cfg: Cfg, s: Pos, f: Node | None) -> bool:
    return f is not None and pos_decode(cfg, f.key) == s


def lookup_table(cfg: Cfg, groups: list[tuple[int, list[Node | None]]], s: Pos) -> bool:
    """``Pop.lookupTable``: groups of proved shard trees by placement rank."""
    key = pos_encode(cfg, s)
    return any(
        pr == s.placement and any(found_at(cfg, s, tree_find(t, key)) for t in trees)
        for pr, trees in groups
    )
