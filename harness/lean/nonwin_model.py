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

from harness.lean import model as M
from harness.lean.codec import Cfg


def ok_out(p: int, mem: Callable[[M.Pos], bool], o: M.Outcome) -> bool:
    """``Pop.okOut``: the game ended without ``p`` winning, or ``mem`` accepts what follows."""
    if o.result is not None:
        return not M.result_wins(o.result, p)
    return mem(o.next)


def closed_at(cfg: Cfg, p: int, mem: Callable[[M.Pos], bool], s: M.Pos, a: int) -> bool:
    """``Pop.closedAt``."""
    if s.turn == p:
        acts = M.legal(cfg, s)
        return bool(acts) and all(ok_out(p, mem, M.step(cfg, s, b)) for b in acts)
    return a in M.legal(cfg, s) and ok_out(p, mem, M.step(cfg, s, a))


def in_trees(cfg: Cfg, s: M.Pos, trees: list[M.Node | None]) -> bool:
    """``Pop.inTrees``: a lookup hit counts only when the stored key decodes to ``s``."""
    key = M.pos_encode(cfg, s)
    return any(M.found_at(cfg, s, M.tree_find(t, key)) for t in trees)


def check_set(cfg: Cfg, p: int, mem: Callable[[M.Pos], bool], t: M.Node | None) -> bool:
    """``Pop.checkSet``: the closure condition at every entry of ``t``."""
    return all(closed_at(cfg, p, mem, M.pos_decode(cfg, e.key), e.act) for e in M.tree_entries(t))


def failing(cfg: Cfg, p: int, trees: list[M.Node | None]) -> list[M.Node]:
    """The entries of ``trees`` where ``check_set`` fails (empty when the set is accepted)."""

    def mem(s: M.Pos) -> bool:
        return in_trees(cfg, s, trees)

    return [
        e
        for t in trees
        for e in M.tree_entries(t)
        if not closed_at(cfg, p, mem, M.pos_decode(cfg, e.key), e.act)
    ]
