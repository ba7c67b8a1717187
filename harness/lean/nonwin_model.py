"""A line-by-line Python mirror of ``lean/Pop/NonWin.lean``: the non-win checker as the kernel
will run it (same names in snake_case, on :mod:`harness.lean.model`'s transitions), so that its
verdicts on accepted and mutated certificates can be compared here with the Python checker
(:mod:`harness.cert.nonwin_checker`). Keep the two files in step.

>>> from harness.lean.codec import Cfg
>>> from harness.lean import model as M
>>> cfg = Cfg(3, 4, 3)
>>> s = M.initial(cfg)
>>> ok_out(M.X, lambda t: False, M.step(cfg, s, 0))   # the game goes on, outside the set
False
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.lean import model as M
from harness.lean.codec import Cfg


@dataclass(frozen=True)
class Split:
    """``Pop.PieceIndex.split``: keys below ``key`` go to ``lo``; a piece is a tree
    (``Node | None``)."""

    key: int
    lo: Index
    hi: Index


Index = Split | M.Node | None


def index_of(parts: list[list[tuple[int, int, int]]]) -> Index:
    """The balanced index of consecutive key ranges ``parts`` (each sorted, non-empty except a
    lone empty part): each split key is the first key of its upper half.

    >>> ix = index_of([[(1, 0, 0)], [(5, 0, 0)], [(9, 0, 0)]])
    >>> pick(ix, 4).key, pick(ix, 5).key, pick(ix, 100).key
    (1, 5, 9)
    """

    def build(lo: int, hi: int) -> Index:
        if hi - lo == 1:
            return M.balanced(parts[lo])
        mid = (lo + hi) // 2
        return Split(parts[mid][0][0], build(lo, mid), build(mid, hi))

    return build(0, len(parts))


def pick(ix: Index, key: int, m: M.Meter | None = None) -> M.Node | None:
    """``Pop.PieceIndex.pick``: the piece ``key`` is routed to (one ``Nat.blt`` a level)."""
    levels = 0
    while isinstance(ix, Split):
        levels += 1
        ix = ix.lo if key < ix.key else ix.hi
    if m is not None:
        m.add_lookup("v2", "find_level", levels)
    return ix


def in_index(cfg: Cfg, s: M.Pos, ix: Index, m: M.Meter | None = None) -> bool:
    """``Pop.inIndex``: a hit in the routed piece counts only when its key decodes to ``s``."""
    key = M.pos_encode(cfg, s)
    found = M.tree_find(pick(ix, key, m), key, m, "v2" if m is not None else "")
    if m is not None:
        m.add("encode", 2)
        m.add("known")
        if found is not None:
            m.add("decode")
            m.add("pos_beq")
    return M.found_at(cfg, s, found)


def ok_out(p: int, mem: Callable[[M.Pos], bool], o: M.Outcome, m: M.Meter | None = None) -> bool:
    """``Pop.okOut``: the game ended without ``p`` winning, or ``mem`` accepts what follows."""
    if m is not None:
        m.add("reply")
    if o.result is not None:
        return not M.result_wins(o.result, p)
    return mem(o.next)


def closed_at(
    cfg: Cfg, p: int, mem: Callable[[M.Pos], bool], s: M.Pos, a: int, m: M.Meter | None = None
) -> bool:
    """``Pop.closedAt``."""
    acts = M.legal(cfg, s, m)
    if s.turn == p:
        return bool(acts) and all(ok_out(p, mem, M.step(cfg, s, b, m), m) for b in acts)
    if m is not None:
        m.add("mem", len(acts))
    return a in acts and ok_out(p, mem, M.step(cfg, s, a, m), m)


def check_set(cfg: Cfg, p: int, mem: Callable[[M.Pos], bool], t: M.Node | None) -> bool:
    """``Pop.checkSet``: the closure condition at every entry of ``t``."""
    return all(closed_at(cfg, p, mem, M.pos_decode(cfg, e.key), e.act) for e in M.tree_entries(t))


def pieces_of(ix: Index) -> list[M.Node | None]:
    """The pieces of an index in key order."""
    if isinstance(ix, Split):
        return pieces_of(ix.lo) + pieces_of(ix.hi)
    return [ix]


def entry_cost(
    cfg: Cfg, p: int, mem: Callable[[M.Pos, M.Meter], bool], k: int, a: int
) -> tuple[bool, int]:
    """One entry of ``checkSet`` with the cost model: (closed, estimated kernel steps)."""
    m = M.Meter()
    m.add("entry")
    m.add("decode")
    ok = closed_at(cfg, p, lambda s: mem(s, m), M.pos_decode(cfg, k), a, m)
    return ok, M.estimate(m, "v2")


def failing(cfg: Cfg, p: int, ix: Index) -> list[M.Node]:
    """The entries of the index's pieces where ``check_set`` fails (empty when accepted)."""

    def mem(s: M.Pos) -> bool:
        return in_index(cfg, s, ix)

    return [
        e
        for t in pieces_of(ix)
        for e in M.tree_entries(t)
        if not closed_at(cfg, p, mem, M.pos_decode(cfg, e.key), e.act)
    ]
