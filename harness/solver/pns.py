"""Proof-number search with batched expansion, for rulesets too big for a strong solve.

A best-first AND-OR search (Allis's proof-number search) on a tree of canonical positions
(:class:`~harness.solver.proof.Canon`'s choice, so results plug into the certificate
builder), bounded by ``max_plies``: a node carries the plies left, and a node with none
left is disproven *for that bound* only. Each iteration requests from 1,024 to 16,384
leaves (fewer under a small tree bound or what is left of a node budget), as many as it
has expanded within the bound, and selects them near the most-proving node
(:meth:`~harness.solver.pntree.Tree.select`) and expands them in one call of the batch
engine (:mod:`harness.solver.batch`): children, their canonical images, the
immediate wins (an attacker action that wins at once proves its node without looking
further) and the forced replies (a defender reply that wins or draws at once disproves its
node; so does a reply that leaves the attacker without an action, which format-1
certificates cannot express, as in :mod:`harness.solver.proof`) are found for all of them
at once. Two kinds of leaf are decided without children: a leaf with one ply left (its
children would have none) and a defender's leaf with two: every reply's position is
expanded in the same iteration and the leaf is proven (rank 2) exactly when each leaves
the attacker an immediate win. Those replies are nodes, counted as the depth-first search
counts its one-ply questions; the likeliest refutation (the reply that leaves the attacker
the fewest threats) is expanded first and the others only where it did not refute, as the
depth-first search stops at the first refuting reply. On 6x6 c8 torus this cut the time
to the 9-ply proof by more than half.

Move ordering from threats: a new node's proof and disproof numbers start from the threats
on its board (two of a player's checkers in a line whose third square is empty): a defender
facing attacker threats starts with a smaller proof number, an attacker facing defender
threats with a smaller disproof number.

Transposition table: solved positions are kept by canonical position: proven ones with
their *rank* (plies within which the win is proven: 1 for an immediate win, 1 + the child's
rank at the attacker's nodes, 1 + the largest child rank at the defender's) and, at the
attacker's nodes, the winning action; disproven ones with the largest bound they failed
at. A leaf is looked up when it is selected. Solved subtrees are dropped from the tree
when it has grown fourfold and they are worth a copy of it (the table holds what they
proved); past ``max_tree / 2`` nodes the
least recently selected subtrees go too, their roots kept as leaves with their numbers
(a disproof the table has evicted is then found again when its node is expanded again).
When the table passes ``max_table`` entries the older disproofs are dropped down to half
of it (proofs are kept: they are the certificate).
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
from functools import cache
from itertools import repeat
from pathlib import Path

import numpy as np

from harness.atomic import atomic_file
from harness.rules.geometry import geometry, geometry_for
from harness.rules.position import PLAYERS, Position
from harness.rules.ruleset import Ruleset
from harness.solver.batch import engine
from harness.solver.bitboards import SquareMap, window_index, window_layout, window_mask
from harness.solver.memory import resident_bytes, small_pages
from harness.solver.pntree import INF, NO_RANK, ROW_BYTES, Tree
from harness.solver.proof import (
    Act,
    BudgetExhausted,
    ProofSearch,
    ProofStateError,
    State,
    pack_states,
    state_of,
    unpack_states,
)
from harness.solver.states import DRAW, O_WINS, X_WINS, States

STATE_FORMAT = 1
MIN_BATCH = 16  # the least bound on a batch, whatever the tree's bound (see BATCH_SHARE)
START_BATCH = 1024  # leaves requested in one iteration at least (when the budget allows):
# a selection yields about a sixth of what it requests, so 16 left a bound's first dozen
# iterations at a few dozen leaves each, paying an iteration's fixed cost (a millisecond of
# numpy calls) for little work. The 5x5 c8 torus proof went from 0.13 to 0.10 CPU s (55 to
# 35 iterations, 8,468 to 8,850 nodes) and 4x4 from 0.05 to 0.03; the 6x6 proof was the
# same (14.5 to 15.0 s either way, 1.19 M to 1.22 M nodes). 2,048 and 4,096 made more
# nodes in the same time.
MAX_BATCH = 16384  # and at most (one call of the batch engine); between them, as many as
# were expanded so far within this bound, so the batch grows with the tree. On the
# 6x6 c8 torus proof, 16,384 made more nodes a CPU second than 4,096, 8,192 or 24,576
# (docs/solver.md has the figures and the command).
BATCH_SHARE = 10  # and a batch is at most max_tree / 2**10 leaves: its children (a few
# hundred a leaf at most) stay a small part of the bounded tree
COMPACT_AT = 1 << 16  # the tree drops its solved subtrees when it has grown past this
COMPACT_GROWTH = 4  # and then again when it has grown this much (each drop copies the tree)
COMPACT_WORTH = 64  # when the children of solved nodes are at least 1/64 of the tree
MAX_TREE = 1 << 24  # nodes; past half of it the least recently selected subtrees go
FILTER_BITS = 1 << 22  # a bit per hash of the states the table has held (4 MB)


def state_hashes(x, o, xb, ob, turn) -> np.ndarray:
    """A hash of each state below :data:`FILTER_BITS` (the table's filter)."""
    h = x.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    h ^= o.astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
    h ^= (xb.astype(np.uint64) << np.uint64(8) | ob.astype(np.uint64)) << np.uint64(1)
    h ^= turn.astype(np.uint64)
    h ^= h >> np.uint64(29)
    return (h & np.uint64(FILTER_BITS - 1)).astype(np.intp)


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
        return self.eng.least_images(x, o)


def first_rows(group: np.ndarray, groups: int, cols) -> np.ndarray:
    """Indices, in order, of the first row of each distinct row of ``cols`` within each
    ``group`` (a number below ``groups``).

    The rows are sorted by one word, the group above a 64-bit hash of the columns, with a
    stable sort, so equal rows are adjacent and the earliest comes first; neighbours count
    as equal only when every column is. Four times faster than sorting by all six columns
    (:func:`numpy.lexsort`) on 100,000 rows. Two different rows of a group with the same
    hash bits (a chance of about one in 2**40 per pair on 6x6) can keep a repeated row
    between them: a node then has the same child twice, which costs a little search and
    changes no result.

    >>> g = np.array([0, 0, 0, 1, 1])
    >>> first_rows(g, 2, (np.array([5, 7, 5, 5, 5], dtype=np.uint64),)).tolist()
    [0, 1, 3]
    """
    if len(group) < 2:
        return np.arange(len(group))
    mix = np.uint64(0x9E3779B97F4A7C15)
    h = np.zeros(len(group), dtype=np.uint64)
    for col in cols:
        h ^= col.astype(np.uint64) + (h >> np.uint64(29))
        h *= mix
    bits = max(1, int(groups - 1).bit_length())
    key = (group.astype(np.uint64) << np.uint64(64 - bits)) | (h >> np.uint64(bits))
    order = np.argsort(key, kind="stable")
    k = key[order]
    same = k[1:] == k[:-1]
    for col in cols:
        c = col[order]
        same &= c[1:] == c[:-1]
    first = np.ones(len(group), dtype=bool)
    first[1:] = ~same
    return np.sort(order[first])


@cache
def _two_of_line_tables(rows: int, cols: int, edge: str):
    """Per window of :func:`~harness.solver.batch.window_layout`: (where, table), where the
    table gives, for the window's bits of a board, a bit per line assigned to the window:
    set when exactly two of the line's squares are. Each line goes to one window: the first
    that starts on one of its rows (so on wrapping edges every window has the same lines
    and the same table), else the first that holds it. None without windows, or when a
    window would get more than 64 lines."""
    layout = window_layout(rows, cols, edge)
    if layout is None:
        return None
    assigned: list[list[int]] = [[] for _ in layout]
    for ln in geometry_for(rows, cols, edge).lines:
        rows_of = {sq // cols for sq in ln.squares}
        holds = [k for k, (window, *_) in enumerate(layout) if rows_of <= set(window)]
        starts = [k for k in holds if layout[k][0][0] in rows_of]
        k = (starts or holds)[0]
        assigned[k].append(window_mask(layout[k][0], cols, ln.squares))
    if max(len(a) for a in assigned) > 64:
        return None
    tables: dict[tuple[int, ...], np.ndarray] = {}
    out = []
    for (window, *where), masks in zip(layout, assigned, strict=True):
        key = tuple(masks)
        if key not in tables:
            idx = np.arange(1 << (len(window) * cols), dtype=np.uint64)
            table = np.zeros(len(idx), dtype=np.uint32 if len(masks) <= 32 else np.uint64)
            for bit, m in enumerate(masks):
                two = np.bitwise_count(idx & np.uint64(m)) == 2
                table |= two.astype(table.dtype) << table.dtype.type(bit)
            tables[key] = table
        out.append((where, tables[key]))
    return out


class LineThreats:
    """Threats per position: the lines holding two of a player's checkers and none of the
    other's (so the third square is empty), counted for both players at once.

    A line holds two of a player's and none of the other's exactly when two of its squares
    are the player's and two are occupied. Where the board has the row windows of
    :meth:`~harness.solver.batch.BatchEngine.has_line`, one table per window gives, from
    the window's bits, which of its lines have exactly two squares set: one look-up of each
    board and of both together per window (6 windows of 24 lines on 6x6 torus).

    Otherwise the lines are split into families in which no two lines share their first
    square, each counted with whole-board shifts: the maps from each first square to its
    line's second and third squares pull the two boards back onto the first squares,
    where three bitboards say, per line, which of its squares a player holds (4 families
    instead of 144 lines on 6x6 torus; half the speed of the tables there).

    >>> from harness.rules import Ruleset
    >>> rs = Ruleset.from_id("pop1-3x3-c3-ringout-continue-binempty-king-nozero-nojump")
    >>> x, o = np.array([0b000000011], np.uint64), np.array([0b100000000], np.uint64)
    >>> ta, td = LineThreats(rs).count(x, o)
    >>> int(ta[0]), int(td[0])  # x on squares 0 and 1: the first row; o alone on 8
    (1, 0)
    """

    def __init__(self, rs: Ruleset, windows: bool = True):
        self.windows = _two_of_line_tables(rs.rows, rs.cols, rs.edge) if windows else None
        self.families = [] if self.windows is not None else self._families(rs)

    @staticmethod
    def _families(rs: Ruleset):
        """(first squares, map to the second, map to the third) per family of lines."""
        families: list[dict[int, tuple[int, int]]] = []
        for ln in geometry(rs).lines:
            first, second, third = ln.squares
            family = next((f for f in families if first not in f), None)
            if family is None:
                family = {}
                families.append(family)
            family[first] = (second, third)
        return [
            (
                np.uint64(sum(1 << s for s in f)),
                SquareMap({s: t[0] for s, t in f.items()}),
                SquareMap({s: t[1] for s, t in f.items()}),
            )
            for f in families
        ]

    def count(self, att: np.ndarray, dfd: np.ndarray, defender: bool = True):
        """(attacker threats, defender threats) per position, as int16; the defender's are
        None without ``defender``."""
        if self.windows is not None:
            return self._count_windows(att, dfd, defender)
        ta = np.zeros(len(att), dtype=np.int16)
        td = np.zeros(len(att), dtype=np.int16) if defender else None
        for firsts, second, third in self.families:
            a1, a2 = second.pull(att), third.pull(att)
            d1, d2 = second.pull(dfd), third.pull(dfd)
            # Per line (at its first square): exactly two of a player's squares, none of
            # the other's.
            a_two = ((att & a1) | (att & a2) | (a1 & a2)) & ~(att & a1 & a2)
            d_none = ~(dfd | d1 | d2)
            ta += np.bitwise_count(a_two & d_none & firsts)
            if td is not None:
                d_two = ((dfd & d1) | (dfd & d2) | (d1 & d2)) & ~(dfd & d1 & d2)
                a_none = ~(att | a1 | a2)
                td += np.bitwise_count(d_two & a_none & firsts)
        return ta, td

    def _count_windows(self, att: np.ndarray, dfd: np.ndarray, defender: bool):
        occ = att | dfd
        ta = np.zeros(len(att), dtype=np.int16)
        td = np.zeros(len(att), dtype=np.int16) if defender else None
        for where, table in self.windows:  # indices in range: no bounds check ("clip")
            two_occupied = table.take(window_index(occ, *where), mode="clip")
            ta += np.bitwise_count(
                table.take(window_index(att, *where), mode="clip") & two_occupied
            )
            if td is not None:
                td += np.bitwise_count(
                    table.take(window_index(dfd, *where), mode="clip") & two_occupied
                )
        return ta, td


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
        max_tree: int = MAX_TREE,
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
        if max_memory is not None:  # the tree: a quarter of the memory, room for a batch
            max_tree = min(max_tree, max(1 << 20, max_memory // (4 * ROW_BYTES)))
        self.max_tree = max_tree
        self.max_batch = min(MAX_BATCH, max(MIN_BATCH, max_tree >> BATCH_SHARE))
        # Room for the whole bounded tree at once: numpy's zeroed arrays take memory only
        # where rows are written, and the tree copies itself to grow only when a batch's
        # children take it past max_tree. Every bound's search reuses the arrays: a page
        # the process gets fresh costs more than the rows written into it, and a huge
        # page far more (small_pages: on 6x6 c8 torus, 2.2 of 2.7 s of adding children).
        small_pages()
        self.tree = Tree(attacker, capacity=max_tree + self.max_batch)
        self.shrunk = 0  # how many times the open tree was cut back to fit max_tree
        self.progress = progress
        self.proven: dict[State, tuple[int, Act | None]] = {}
        self.disproven: dict[State, int] = {}
        # A bit per state hash the table has held (never cleared): a leaf whose bit is not
        # set is not in the table, so most leaves are not looked up one by one.
        self.filter = np.zeros(FILTER_BITS, dtype=bool)
        self.nodes = 0
        self.generated = 0
        self.searched = 0  # the largest bound disproven at the root (no win within it)
        self.bound = 0
        self.threats = LineThreats(rs)
        self._next_line = 0.0
        self._node_limit: int | None = None

    def _table_values(self, states: list[State], rem: np.ndarray):
        """What the table knows of ``states`` with ``rem`` plies left: (proven, disproven,
        rank of each proof). A proof counts when its rank fits the plies, a disproof when it
        was for at least as many (and a state with no plies left is disproven)."""
        rank = np.array(
            [NO_RANK if hit is None else hit[0] for hit in map(self.proven.get, states)],
            dtype=np.int64,
        )
        bound = np.fromiter(
            map(self.disproven.get, states, repeat(-1)), dtype=np.int64, count=len(states)
        )
        proven = rank <= rem
        return proven, ~proven & ((rem <= 0) | (bound >= rem)), rank

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
        self.tree.clear()
        self.bound = bound
        self._node_limit = node_limit
        if any(self._table_values([self.root_state], np.array([bound]))[:2]):
            return
        t = self.tree
        t.add_root(self.root_state, bound, 1, 1)
        self._compact_at = min(COMPACT_AT, self.max_tree)
        start = self.nodes
        rounds = 0
        while t.pn[0] and t.dn[0]:
            k = min(self.max_batch, max(START_BATCH, self.nodes - start))
            if node_limit is not None:
                if self.nodes >= node_limit:
                    raise BudgetExhausted(f"node budget of {self.max_nodes:,} spent")
                k = min(k, node_limit - self.nodes)  # the budget is exact (and _settle)
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                raise BudgetExhausted(f"time budget of {self.max_seconds:g} s spent")
            rounds += 1
            if (
                self.max_memory is not None
                and rounds % 4 == 0
                and resident_bytes() > self.max_memory
            ):
                raise BudgetExhausted(
                    f"resident memory past {self.max_memory / 2**30:.1f} GiB "
                    "(budget --memory-limit)"
                )
            self._iterate(k)
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

    def _iterate(self, k: int) -> None:
        """Select up to ``k`` leaves near the most-proving one, settle those the table has
        solved since they were made, expand the others in one call of the batch engine, and
        update the numbers up; then record what was solved."""
        t = self.tree
        leaves = t.select(k)
        fresh = self._from_table(leaves)
        if len(fresh):
            self._expand(fresh)
        proven, disproven, via = t.update(leaves)
        safe = np.maximum(via, 0)
        src, dst = t.src[safe].tolist(), t.dst[safe].tolist()
        acts = [None if v < 0 else (src[n], dst[n]) for n, v in enumerate(via.tolist())]
        self._record(proven, acts, disproven)
        if len(t) >= self._compact_at:
            # A copy of the tree that would drop almost nothing is skipped: most of a
            # growing tree is open leaves, which compaction keeps.
            if t.under_solved() * COMPACT_WORTH >= len(t) or len(t) > self.max_tree // 2:
                t.compact()
            if len(t) > self.max_tree // 2:
                t.shrink(self.max_tree // 4)
                self.shrunk += 1
            self._compact_at = min(max(COMPACT_AT, COMPACT_GROWTH * len(t)), self.max_tree)

    def _from_table(self, leaves: np.ndarray) -> np.ndarray:
        """Solve the leaves the table knows (a transposition solved since the leaf was
        made); returns the others."""
        t = self.tree
        maybe = np.flatnonzero(self.filter[self._hashes(leaves)] | (t.rem[leaves] <= 0))
        known = leaves[maybe]
        proven, disproven, rank = self._table_values(t.states(known), t.rem[known])
        win, loss = known[proven], known[disproven]
        t.pn[win], t.dn[win], t.rank[win] = 0, INF, rank[proven]
        t.pn[loss], t.dn[loss], t.rank[loss] = INF, 0, 0
        left = np.ones(len(leaves), dtype=bool)
        left[maybe[proven | disproven]] = False
        return leaves[left].astype(np.int64)

    def _hashes(self, nodes: np.ndarray) -> np.ndarray:
        t = self.tree
        return state_hashes(t.x[nodes], t.o[nodes], t.xb[nodes], t.ob[nodes], t.turn[nodes])

    def _expand(self, leaves: np.ndarray) -> None:
        """Children of every leaf, or its value at once: an attacker's leaf with a winning
        action is proven (rank 1) and one without a child disproven; a defender's leaf with
        a reply that wins, draws or leaves the attacker without an action is disproven, and
        one whose every reply loses at once is proven (rank 1)."""
        t, a = self.tree, self.a
        states = States(t.x[leaves], t.o[leaves], t.xb[leaves], t.ob[leaves], t.turn[leaves])
        succ = self.eng.successors(states)
        self.nodes += len(leaves)
        m = len(leaves)
        nxt, res = succ.next, succ.result
        rp = succ.parent.astype(np.int64)
        attacker_leaf = t.turn[leaves] == a
        win = res == (X_WINS if a == 0 else O_WINS)
        cont = res == 0
        bad = (~cont & ~win) | (cont & (nxt.turn != a))
        any_win = np.bincount(rp[win], minlength=m) > 0
        won = attacker_leaf & any_win
        lost = ~attacker_leaf & (np.bincount(rp[bad], minlength=m) > 0)
        closed = won | lost
        # A leaf with one ply left needs no children: its value is known now (a child
        # would have no plies left, and be disproven for this bound).
        deep = t.rem[leaves] > 1
        rows = np.flatnonzero(cont & ~closed[rp] & deep[rp])
        cx, co = self.canon.images(nxt.x[rows], nxt.o[rows])
        xb, ob, turn, par = nxt.xb[rows], nxt.ob[rows], nxt.turn[rows], rp[rows]
        # One child per distinct canonical position, from its first action.
        keep = first_rows(par, m, (cx, co, xb, ob, turn))
        # The defender's leaves with two plies left are decided here, without children.
        cols = (cx, co, xb, ob, turn)
        settled = self._settle_last_replies(leaves, attacker_leaf, par[keep], keep, cols)
        keep = keep[~settled[par[keep]]]
        rows, cx, co, xb, ob, turn, par = (c[keep] for c in (rows, *cols, par))
        counts = np.bincount(par, minlength=m)
        self.generated += len(rows)
        ta, td = self._threats(cx, co, a)  # threats are the same in every image
        to_attacker = turn == a
        # Move ordering: defender threats make a disproof likelier at the attacker's nodes,
        # attacker threats a proof at the defender's.
        pn = np.where(to_attacker, 1 + (td > 0), 1).astype(np.int64)
        dn = np.where(to_attacker, 1, 1 + np.minimum(ta, 3)).astype(np.int64)
        kids = t.add_children(
            leaves,
            counts,
            {
                "x": cx,
                "o": co,
                "xb": xb,
                "ob": ob,
                "turn": turn,
                "pn": pn,
                "dn": dn,
                "src": succ.src[rows],
                "dst": succ.dst[rows],
            },
        )
        last = kids[t.rem[kids] <= 0]  # no plies left: disproven for this bound
        t.pn[last], t.dn[last] = INF, 0
        going = np.bincount(rp[cont], minlength=m) > 0
        empty = ~closed & ~going
        proven_now = won | (empty & ~attacker_leaf)
        disproven_now = lost | (empty & attacker_leaf) | (~closed & going & ~deep)
        t.pn[leaves[proven_now]], t.dn[leaves[proven_now]] = 0, INF
        t.rank[leaves[proven_now]] = 1
        t.pn[leaves[disproven_now]], t.dn[leaves[disproven_now]] = INF, 0
        # The winning action of a won leaf: its first winning row.
        hits = np.flatnonzero(win & won[rp])
        lead, at = np.unique(rp[hits], return_index=True)
        src, dst = succ.src[hits[at]].tolist(), succ.dst[hits[at]].tolist()
        act_of = {j: (src[n], dst[n]) for n, j in enumerate(lead.tolist())}
        idx = np.flatnonzero(proven_now)
        self._record(leaves[idx], [act_of.get(j) for j in idx.tolist()], leaves[disproven_now])

    def _settle_last_replies(self, leaves, attacker_leaf, par, at, cols):
        """The defender's leaves with two plies left, decided at once: proven (rank 2) when
        every reply leaves the attacker an immediate win, else disproven for this bound.

        The replies are the rows ``at`` of the columns ``cols`` (canonical x, o, bins and
        turn), ``par`` the leaf of each. Their positions are expanded in the batch engine,
        counted as nodes: first, per leaf, the reply that leaves the attacker the fewest
        threats (the likeliest refutation), then the other replies of the leaves it did not
        refute. Returns which leaves were settled."""
        t = self.tree
        m = len(leaves)
        # Closed leaves (decided by their own actions) and those without a reply that goes
        # on have no rows here: the caller decides them.
        last = ~attacker_leaf & (t.rem[leaves] == 2) & (np.bincount(par, minlength=m) > 0)
        if not last.any():
            return np.zeros(m, dtype=bool)
        sub = np.flatnonzero(last[par])
        if self._node_limit is not None and self.nodes + len(sub) > self._node_limit:
            # The replies are nodes: with too few left, these leaves get children instead.
            return np.zeros(m, dtype=bool)
        cx, co = cols[0][at[sub]], cols[1][at[sub]]
        ta, _ = self._threats(cx, co, self.a, defender=False)
        order = np.lexsort((ta, par[sub]))
        firsts = np.ones(len(sub), dtype=bool)
        firsts[1:] = par[sub][order][1:] != par[sub][order][:-1]
        pick = np.zeros(len(sub), dtype=bool)
        pick[order[firsts]] = True
        failed = np.zeros(m, dtype=bool)
        for phase in (sub[pick], sub[~pick]):
            phase = phase[~failed[par[phase]]]
            if not len(phase):
                continue
            me, them, mb, tb = States(*(c[at[phase]] for c in cols)).mover_view()
            won = self.eng.wins_at_once(me, them, mb, tb)
            self.nodes += len(phase)
            failed |= np.bincount(par[phase][~won], minlength=m) > 0
        proven, disproven = last & ~failed, last & failed
        t.pn[leaves[proven]], t.dn[leaves[proven]] = 0, INF
        t.rank[leaves[proven]] = 2
        t.pn[leaves[disproven]], t.dn[leaves[disproven]] = INF, 0
        self._record(leaves[proven], [None] * int(proven.sum()), leaves[disproven])
        return last

    def _record(self, proven: np.ndarray, acts: list, disproven: np.ndarray) -> None:
        """Keep solved nodes in the table: the least rank of a proof, the largest bound of
        a disproof."""
        t = self.tree
        self.filter[self._hashes(proven)] = True
        self.filter[self._hashes(disproven)] = True
        for s, r, act in zip(t.states(proven), t.rank[proven].tolist(), acts, strict=True):
            old = self.proven.get(s)
            if old is None or r < old[0]:
                self.proven[s] = (r, act)
        for s, rem in zip(t.states(disproven), t.rem[disproven].tolist(), strict=True):
            if self.disproven.get(s, -1) < rem:
                self.disproven[s] = rem
        if len(self.disproven) > self.max_table:
            self._evict()

    def _threats(self, x: np.ndarray, o: np.ndarray, a: int, defender: bool = True):
        """Per position: the attacker's threats and the defender's (:class:`LineThreats`)."""
        att, dfd = (x, o) if a == 0 else (o, x)
        return self.threats.count(att, dfd, defender)

    def _evict(self) -> None:
        """Drop the older disproofs, keeping the newest half of the bound."""
        drop = len(self.disproven) - self.max_table // 2
        for s in list(self.disproven)[:drop]:
            del self.disproven[s]

    def _report(self, now: float) -> None:
        if self.progress is None or now < self._next_line:
            return
        self._next_line = now + (2.0 if sys.stderr.isatty() else 60.0)
        t = self.tree
        self.progress(
            f"{PLAYERS[self.a]} within {self.bound} plies: {self.nodes:,} nodes, "
            f"root pn {t.pn[0]} dn {t.dn[0]}, tree {len(t):,}, "
            f"table {len(self.proven) + len(self.disproven):,}"
        )

    # --- state on disk ----------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the table (proofs and disproofs) atomically to ``path`` (npz)."""
        items = list(self.proven.items())
        arrays = {
            "meta": np.array([STATE_FORMAT, self.nodes, self.a, self.max_plies], dtype=np.int64),
            "ruleset": np.array(self.rs.id),
            "proven": pack_states([s for s, _ in items]),
            "proven_rank": np.array([v[0] for _, v in items], dtype=np.int32),
            "proven_act": np.array(
                [(-2, -2) if v[1] is None else v[1] for _, v in items], dtype=np.int16
            ).reshape(-1, 2),
            "disproven": pack_states(list(self.disproven)),
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
                    unpack_states(data["proven"]),
                    data["proven_rank"].tolist(),
                    data["proven_act"].tolist(),
                    strict=True,
                ):
                    old = self.proven.get(s)
                    if old is None or r < old[0]:
                        self.proven[s] = (r, None if act[0] == -2 else (act[0], act[1]))
                for s, r in zip(
                    unpack_states(data["disproven"]), data["disproven_rem"].tolist(), strict=True
                ):
                    if self.disproven.get(s, -1) < r:
                        self.disproven[s] = r
        except ProofStateError:
            raise
        except (OSError, ValueError, KeyError) as exc:
            raise ProofStateError(f"proof state {path}: not a saved PN search ({exc})") from exc
        for table in (self.proven, self.disproven):
            if table:
                cols = np.array(list(table), dtype=np.uint64).T
                self.filter[state_hashes(*cols)] = True


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
    deepen: bool = True,
) -> tuple[PNResult, PNSearch]:
    """Try each attacker in turn within ``max_plies``; the first proof wins. The budgets
    are shared (what the first attacker spent is gone for the second). ``deepen`` as in
    :meth:`PNSearch.prove`."""
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
            result = search.prove(deepen=deepen)
        except BudgetExhausted as exc:
            got = f"no win within {search.searched} plies" if search.searched else "no bound done"
            reached = "; ".join(done + [f"{PLAYERS[a]}: {got}"])
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
