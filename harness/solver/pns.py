"""Proof-number search with batched expansion, for rulesets too big for a strong solve.

A best-first AND-OR search (Allis's proof-number search) on a tree of canonical positions
(:class:`~harness.solver.proof.Canon`'s choice, so results plug into the certificate
builder), bounded by ``max_plies``: a node carries the plies left, and a node with none
left is disproven *for that bound* only. Each iteration walks from the root to the
most-proving node and expands it **together with its unexpanded siblings** in one call of
the batch engine (:mod:`harness.solver.batch`): children, their canonical images, the
immediate wins (an attacker action that wins at once proves its node without looking
further) and the forced replies (a defender reply that wins or draws at once disproves its
node; so does a reply that leaves the attacker without an action, which format-1
certificates cannot express, as in :mod:`harness.solver.proof`) are found for all of them
at once.

Move ordering from threats: a new node's proof and disproof numbers start from the threats
on its board (two of a player's checkers in a line whose third square is empty): a defender
facing attacker threats starts with a smaller proof number, an attacker facing defender
threats with a smaller disproof number.

Transposition table: solved positions are kept by canonical position: proven ones with
their *rank* (plies within which the win is proven: 1 for an immediate win, 1 + the child's
rank at the attacker's nodes, 1 + the largest child rank at the defender's) and, at the
attacker's nodes, the winning action; disproven ones with the largest bound they failed
at. A node is looked up when it is created. Solved subtrees are dropped from the tree at
once (the table holds what they proved), and when the table passes ``max_table`` entries
the older half of the disproofs is dropped (proofs are kept: they are the certificate).
Ranks strictly decrease along every proof, so :meth:`PNSearch.as_proof_search` hands a
:class:`~harness.solver.proof.ProofSearch` whose table the certificate builder
(:mod:`harness.cert.builder`) walks unchanged.

Budgets: nodes (expanded), seconds and resident memory; a spent budget raises
:class:`~harness.solver.proof.BudgetExhausted` after which :meth:`PNSearch.save` keeps the
table for a later run (:meth:`PNSearch.load`). :func:`prove_subtree` searches one position
(e.g. one child of the root) within a budget and returns what it proved, for callers that
split the work.

>>> from harness.rules import Ruleset
>>> rs = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
>>> r = PNSearch(rs, 0, max_plies=9).prove()
>>> r.winner, r.plies <= 9
('x', True)
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.atomic import atomic_file
from harness.rules.geometry import geometry
from harness.rules.position import PLAYERS, Position
from harness.rules.ruleset import Ruleset
from harness.solver.batch import DRAW, O_WINS, X_WINS, States, engine
from harness.solver.proof import (
    Act,
    BudgetExhausted,
    ProofSearch,
    ProofStateError,
    State,
    _pack,
    _unpack,
    state_of,
)
from harness.solver.retrograde import _rss

INF = 1 << 40
STATE_FORMAT = 1
SIBLINGS = 64  # leaves expanded in one call of the batch engine at most
DROPPED = -2  # the parent of a freed slot


@dataclass
class PNResult:
    """What :meth:`PNSearch.prove` found: ``winner`` None when the root is disproven
    within ``max_plies`` (no win for ``attacker`` within that bound)."""

    ruleset: str
    attacker: str
    winner: str | None
    plies: int | None
    nodes: int
    generated: int
    seconds: float
    table_size: int


class BatchCanon:
    """Canonical images of whole batches, the same choice as :class:`proof.Canon` (the least
    image by (x, o) bitboards, the first symmetry on ties)."""

    def __init__(self, rs: Ruleset):
        self.eng = engine(rs)

    def images(self, x: np.ndarray, o: np.ndarray):
        xs, os_ = self.eng.images(x), self.eng.images(o)
        best_x, best_o = xs[0].copy(), os_[0].copy()
        for ix, io in zip(xs[1:], os_[1:], strict=True):
            better = (ix < best_x) | ((ix == best_x) & (io < best_o))
            best_x = np.where(better, ix, best_x)
            best_o = np.where(better, io, best_o)
        return best_x, best_o


class PNSearch:
    """Proof-number search for ``attacker`` (0 x, 1 o) from ``root`` (a canonical state;
    the initial position by default) within ``max_plies``."""

    def __init__(
        self,
        rs: Ruleset,
        attacker: int,
        *,
        max_plies: int = 99,
        root: State | None = None,
        max_nodes: int | None = None,
        max_seconds: float | None = None,
        max_memory: int | None = None,
        max_table: int = 1 << 22,
        progress: Callable[[str], None] | None = None,
    ):
        self.rs = rs
        self.a = attacker
        self.max_plies = max_plies
        self.eng = engine(rs)
        self.canon = BatchCanon(rs)
        self.search = ProofSearch(rs)  # its scalar canon gives the root's image
        if root is None:
            root = self.search.canon.image(state_of(Position.initial(rs)))[0]
        self.root_state = root
        self.max_nodes = max_nodes
        self.max_seconds = max_seconds
        self.max_memory = max_memory
        self.max_table = max_table
        self.progress = progress
        self.proven: dict[State, tuple[int, Act | None]] = {}
        self.disproven: dict[State, int] = {}
        self.nodes = 0
        self.generated = 0
        self.searched = 0  # the largest bound disproven at the root (no win within it)
        self.bound = 0
        geo = geometry(rs)
        self.line_masks = np.array([ln.mask for ln in geo.lines], dtype=np.uint64)
        self._next_line = 0.0

    # --- the tree: parallel lists ---------------------------------------------------------

    def _new_tree(self) -> None:
        self.st: list[State] = []
        self.pn: list[int] = []
        self.dn: list[int] = []
        self.par: list[int] = []
        self.kids: list[list[int] | None] = []
        self.act: list[Act | None] = []
        self.rem: list[int] = []
        self.rank: list[int] = []  # proven rank once solved; the immediate-win part before
        self.best: list[Act | None] = []
        self.live = 0  # nodes in the tree (the slots in use)
        self.free: list[int] = []  # slots of dropped subtrees, reused by _add

    def _add(self, s: State, parent: int, act: Act | None, rem: int, pn: int, dn: int) -> int:
        self.live += 1
        if self.free:
            i = self.free.pop()
            self.st[i], self.pn[i], self.dn[i], self.par[i] = s, pn, dn, parent
            self.kids[i], self.act[i], self.rem[i] = None, act, rem
            self.rank[i], self.best[i] = 0, None
            return i
        i = len(self.st)
        self.st.append(s)
        self.pn.append(pn)
        self.dn.append(dn)
        self.par.append(parent)
        self.kids.append(None)
        self.act.append(act)
        self.rem.append(rem)
        self.rank.append(0)
        self.best.append(None)
        return i

    def _drop_below(self, i: int) -> None:
        """Free the slots of every node under ``i`` (solved: the table holds what they
        proved). Without this the tree keeps every node ever made, gigabytes on 6x6."""
        stack = list(self.kids[i] or ())
        while stack:
            j = stack.pop()
            ks = self.kids[j]
            if ks:
                stack.extend(ks)
            self.st[j] = self.kids[j] = self.act[j] = self.best[j] = None
            self.par[j] = DROPPED
            self.free.append(j)
            self.live -= 1

    def _lookup(self, s: State, rem: int) -> tuple[int, int, int] | None:
        """(pn, dn, rank) of a solved state from the table, or None."""
        hit = self.proven.get(s)
        if hit is not None and hit[0] <= rem:
            return 0, INF, hit[0]
        if rem <= 0 or self.disproven.get(s, -1) >= rem:
            return INF, 0, 0
        return None

    # --- public ---------------------------------------------------------------------------

    def prove(self, deepen: bool = True) -> PNResult:
        """Search until the root is solved within ``max_plies``; raises BudgetExhausted when
        a budget runs out (:attr:`searched` then says how far it got).

        With ``deepen`` the bound grows over the plies a win can take (odd plies when the
        attacker moves first, even ones otherwise), the table kept from one bound to the
        next: a shortest proof is found first and shallow disproofs prune the deeper runs.
        """
        t0 = time.monotonic()
        deadline = None if self.max_seconds is None else t0 + self.max_seconds
        node_limit = None if self.max_nodes is None else self.nodes + self.max_nodes
        root = self.root_state
        first = 1 if root[4] == self.a else 2
        bounds = list(range(first, self.max_plies + 1, 2)) if deepen else [self.max_plies]
        won = None
        for bound in bounds:
            self._search(bound, deadline, node_limit)
            hit = self.proven.get(root)
            if hit is not None and hit[0] <= bound:
                won = hit[0]
                break
            self.searched = bound
        return PNResult(
            self.rs.id,
            PLAYERS[self.a],
            None if won is None else PLAYERS[self.a],
            won,
            self.nodes,
            self.generated,
            time.monotonic() - t0,
            len(self.proven) + len(self.disproven),
        )

    def _search(self, bound: int, deadline: float | None, node_limit: int | None) -> None:
        """One proof-number search of the root within ``bound`` plies."""
        self._new_tree()
        self.bound = bound
        if self._lookup(self.root_state, bound) is not None:
            return
        r = self._add(self.root_state, -1, None, bound, 1, 1)
        rounds = 0
        while self.pn[r] and self.dn[r]:
            if node_limit is not None and self.nodes >= node_limit:
                raise BudgetExhausted(f"node budget of {self.max_nodes:,} spent")
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                raise BudgetExhausted(f"time budget of {self.max_seconds:g} s spent")
            rounds += 1
            if self.max_memory is not None and rounds % 64 == 0 and _rss() > self.max_memory:
                raise BudgetExhausted(
                    f"resident memory past {self.max_memory / 2**30:.1f} GiB "
                    "(budget --memory-limit)"
                )
            self._iterate(r)
            self._report(now)

    def as_proof_search(self) -> ProofSearch:
        """A :class:`ProofSearch` holding this search's proofs, for the certificate builder:
        proven entries with their rank and action, and "not within rank - 1" beside each so
        that the builder's least-budget question is answered from the table."""
        ps = ProofSearch(self.rs)
        ps.proven[self.a] = dict(self.proven)
        ps.failed[self.a] = {s: r - 1 for s, (r, _) in self.proven.items() if r > 1}
        root = ps.root()
        if root in self.proven:
            ps.done_depth[self.a] = self.proven[root][0] - 1
        return ps

    # --- one iteration ----------------------------------------------------------------------

    def _iterate(self, r: int) -> None:
        """Expand the most-proving leaf together with its unexpanded open siblings (up to
        :data:`SIBLINGS`) in one call of the batch engine, then update the numbers up."""
        pn, dn, kids, st = self.pn, self.dn, self.kids, self.st
        a = self.a
        n = r
        while kids[n] is not None:
            ks = kids[n]
            n = min(ks, key=pn.__getitem__) if st[n][4] == a else min(ks, key=dn.__getitem__)
        p = self.par[n]
        batch = [n]
        if p >= 0:
            for k in kids[p]:
                if k != n and kids[k] is None and pn[k] and dn[k] and len(batch) < SIBLINGS:
                    batch.append(k)
        self._expand(batch)
        for k in batch:
            if self.par[k] != DROPPED:  # not under a node an earlier update solved
                self._update_up(k)

    def _expand(self, batch: list[int]) -> None:
        a, eng = self.a, self.eng
        states = States(
            np.array([self.st[i][0] for i in batch], dtype=np.uint64),
            np.array([self.st[i][1] for i in batch], dtype=np.uint64),
            np.array([self.st[i][2] for i in batch], dtype=np.int8),
            np.array([self.st[i][3] for i in batch], dtype=np.int8),
            np.array([self.st[i][4] for i in batch], dtype=np.int8),
        )
        succ = eng.successors(states)
        self.nodes += len(batch)
        nxt = succ.next
        cx, co = self.canon.images(nxt.x, nxt.o)
        threat_a, threat_d = self._threats(nxt, a)
        win_code = X_WINS if a == 0 else O_WINS
        rows_parent = succ.parent.tolist()
        rows = zip(
            rows_parent,
            succ.src.tolist(),
            succ.dst.tolist(),
            succ.result.tolist(),
            cx.tolist(),
            co.tolist(),
            nxt.xb.tolist(),
            nxt.ob.tolist(),
            nxt.turn.tolist(),
            threat_a.tolist(),
            threat_d.tolist(),
            strict=True,
        )
        per: list[list] = [[] for _ in batch]
        for row in rows:
            per[row[0]].append(row)
        for j, i in enumerate(batch):
            self._attach(i, per[j], win_code)

    def _attach(self, i: int, rows: list, win_code: int) -> None:
        """Children of node ``i`` from its expansion rows (or solve it at once)."""
        a = self.a
        rem = self.rem[i]
        attacker_moves = self.st[i][4] == a
        kids: list[int] = []
        seen: set[State] = set()
        if attacker_moves:
            for row in rows:
                if row[3] == win_code:
                    self._solve(i, True, 1, (row[1], row[2]))
                    return
            for _, src, dst, res, x, o, xb, ob, t, ta, td in rows:
                if res:
                    continue  # the attacker draws or loses at once: never chosen
                c = (x, o, xb, ob, t)
                if c in seen:
                    continue
                seen.add(c)
                kids.append(self._child(c, i, (src, dst), rem - 1, ta, td))
            if not kids:
                self._solve(i, False, 0, None)
                return
        else:
            immediate = 0
            for row in rows:
                res, t = row[3], row[8]
                if res and res != win_code:
                    self._solve(i, False, 0, None)  # the defender wins or draws at once
                    return
                if res == win_code:
                    immediate = 1
                    continue
                if t != a:
                    self._solve(i, False, 0, None)  # the attacker stuck: not certifiable
                    return
            for _, src, dst, res, x, o, xb, ob, t, ta, td in rows:
                if res:
                    continue
                c = (x, o, xb, ob, t)
                if c in seen:
                    continue
                seen.add(c)
                kids.append(self._child(c, i, (src, dst), rem - 1, ta, td))
            self.rank[i] = immediate
            if not kids:
                self._solve(i, True, 1, None)
                return
        self.generated += len(kids)
        self.kids[i] = kids

    def _child(self, c: State, parent: int, act: Act, rem: int, ta: int, td: int) -> int:
        hit = self._lookup(c, rem)
        if hit is not None:
            k = self._add(c, parent, act, rem, hit[0], hit[1])
            self.rank[k] = hit[2]
            self.kids[k] = []
            return k
        if c[4] == self.a:
            # The attacker to move: defender threats make a disproof likelier.
            pn, dn = 1 + (td > 0), 1
        else:
            # The defender to move: the more attacker threats, the likelier a proof.
            pn, dn = 1, 1 + min(ta, 3)
        return self._add(c, parent, act, rem, pn, dn)

    def _threats(self, nxt: States, a: int):
        """Per position: lines with two attacker checkers and an empty third, and the same
        for the defender (counted over the board's lines)."""
        if not len(self.line_masks):
            zero = np.zeros(len(nxt.x), dtype=np.int16)
            return zero, zero
        att = nxt.x if a == 0 else nxt.o
        dfd = nxt.o if a == 0 else nxt.x
        occ = nxt.x | nxt.o
        ta = np.zeros(len(att), dtype=np.int16)
        td = np.zeros(len(att), dtype=np.int16)
        for m in self.line_masks:
            free = np.bitwise_count(~occ & m) == 1
            ta += free & (np.bitwise_count(att & m) == 2)
            td += free & (np.bitwise_count(dfd & m) == 2)
        return ta, td

    def _solve(self, i: int, proven: bool, rank: int, act: Act | None) -> None:
        s = self.st[i]
        if proven:
            self.pn[i], self.dn[i] = 0, INF
            self.rank[i] = rank
            old = self.proven.get(s)
            if old is None or rank < old[0]:
                self.proven[s] = (rank, act)
        else:
            self.pn[i], self.dn[i] = INF, 0
            if self.disproven.get(s, -1) < self.rem[i]:
                self.disproven[s] = self.rem[i]
                if len(self.disproven) > self.max_table:
                    self._evict()
        self._drop_below(i)
        self.kids[i] = []

    def _evict(self) -> None:
        drop = len(self.disproven) // 2
        for s in list(self.disproven)[:drop]:
            del self.disproven[s]

    def _update_up(self, n: int) -> None:
        pn, dn, kids, st, a = self.pn, self.dn, self.kids, self.st, self.a
        while n >= 0:
            ks = kids[n]
            if ks:
                if st[n][4] == a:
                    new_pn = min(pn[k] for k in ks)
                    new_dn = min(INF, sum(dn[k] for k in ks))
                    if new_pn == 0:
                        best = min((k for k in ks if pn[k] == 0), key=self.rank.__getitem__)
                        self._solve(n, True, self.rank[best] + 1, self.act[best])
                    elif new_dn == 0:
                        self._solve(n, False, 0, None)
                    else:
                        if new_pn == pn[n] and new_dn == dn[n]:
                            return
                        pn[n], dn[n] = new_pn, new_dn
                else:
                    new_pn = min(INF, sum(pn[k] for k in ks))
                    new_dn = min(dn[k] for k in ks)
                    if new_pn == 0:
                        worst = max(self.rank[n], 1 + max(self.rank[k] for k in ks))
                        self._solve(n, True, worst, None)
                    elif new_dn == 0:
                        self._solve(n, False, 0, None)
                    else:
                        if new_pn == pn[n] and new_dn == dn[n]:
                            return
                        pn[n], dn[n] = new_pn, new_dn
            n = self.par[n]

    def _report(self, now: float) -> None:
        if self.progress is None or now < self._next_line:
            return
        self._next_line = now + (2.0 if sys.stderr.isatty() else 60.0)
        r = 0
        self.progress(
            f"{PLAYERS[self.a]} within {self.bound} plies: {self.nodes:,} nodes, "
            f"root pn {self.pn[r]} dn {self.dn[r]}, "
            f"table {len(self.proven) + len(self.disproven):,}"
        )

    # --- state on disk ----------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the table (proofs and disproofs) atomically to ``path`` (npz)."""
        items = list(self.proven.items())
        arrays = {
            "meta": np.array([STATE_FORMAT, self.nodes, self.a, self.max_plies], dtype=np.int64),
            "ruleset": np.array(self.rs.id),
            "proven": _pack([s for s, _ in items]),
            "proven_rank": np.array([v[0] for _, v in items], dtype=np.int32),
            "proven_act": np.array(
                [(-2, -2) if v[1] is None else v[1] for _, v in items], dtype=np.int16
            ).reshape(-1, 2),
            "disproven": _pack(list(self.disproven)),
            "disproven_rem": np.array(list(self.disproven.values()), dtype=np.int32),
        }
        with atomic_file(Path(path)) as fh:
            np.savez_compressed(fh, **arrays)

    def load(self, path: str | os.PathLike[str]) -> None:
        """Merge a table saved by :meth:`save` (same ruleset and attacker)."""
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = data["meta"]
                ruleset = str(data["ruleset"])
                if int(meta[0]) != STATE_FORMAT:
                    raise ProofStateError(f"proof state {path}: format {int(meta[0])}")
                if ruleset != self.rs.id or int(meta[2]) != self.a:
                    raise ProofStateError(
                        f"proof state {path}: {ruleset} for {PLAYERS[int(meta[2])]}, not "
                        f"{self.rs.id} for {PLAYERS[self.a]}"
                    )
                self.nodes = max(self.nodes, int(meta[1]))
                for s, r, act in zip(
                    _unpack(data["proven"]),
                    data["proven_rank"].tolist(),
                    data["proven_act"].tolist(),
                    strict=True,
                ):
                    old = self.proven.get(s)
                    if old is None or r < old[0]:
                        self.proven[s] = (r, None if act[0] == -2 else (act[0], act[1]))
                for s, r in zip(
                    _unpack(data["disproven"]), data["disproven_rem"].tolist(), strict=True
                ):
                    if self.disproven.get(s, -1) < r:
                        self.disproven[s] = r
        except ProofStateError:
            raise
        except (OSError, ValueError, KeyError) as exc:
            raise ProofStateError(f"proof state {path}: not a saved PN search ({exc})") from exc


def prove_subtree(
    rs: Ruleset,
    state: State,
    attacker: int,
    max_plies: int,
    *,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
) -> tuple[PNResult | None, dict[State, tuple[int, Act | None]]]:
    """Search one canonical ``state`` (e.g. a child of the root) within a budget: the
    result (None when the budget ran out) and every proof found (mergeable into another
    search's table)."""
    search = PNSearch(
        rs, attacker, max_plies=max_plies, root=state, max_nodes=max_nodes, max_seconds=max_seconds
    )
    try:
        result = search.prove()
    except BudgetExhausted:
        result = None
    return result, search.proven


def prove_either(
    rs: Ruleset,
    max_plies: int,
    *,
    attackers: tuple[int, ...] = (0, 1),
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    max_memory: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[PNResult, PNSearch]:
    """Try each attacker in turn within ``max_plies``; the first proof wins. The budgets
    are shared (what the first attacker spent is gone for the second)."""
    t0 = time.monotonic()
    nodes_left = max_nodes
    last = None
    done: list[str] = []
    for a in attackers:
        seconds_left = None if max_seconds is None else max_seconds - (time.monotonic() - t0)
        if seconds_left is not None and seconds_left <= 0:
            raise BudgetExhausted(f"time budget of {max_seconds:g} s spent")
        search = PNSearch(
            rs,
            a,
            max_plies=max_plies,
            max_nodes=nodes_left,
            max_seconds=seconds_left,
            max_memory=max_memory,
            progress=progress,
        )
        try:
            result = search.prove()
        except BudgetExhausted as exc:
            reached = "; ".join(done + [f"{PLAYERS[a]}: no win within {search.searched} plies"])
            raise BudgetExhausted(f"{exc} ({reached}; {search.nodes:,} nodes)") from None
        done.append(f"{PLAYERS[a]}: no win within {search.max_plies} plies")
        last = (result, search)
        if result.winner is not None:
            return last
        if nodes_left is not None:
            nodes_left -= result.nodes
    assert last is not None
    return last


__all__ = ["BatchCanon", "PNResult", "PNSearch", "prove_either", "prove_subtree", "DRAW"]
