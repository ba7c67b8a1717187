"""The proof-number search's tree, held in numpy arrays so that one iteration handles
thousands of leaves in a few dozen array operations.

A node is a row: its canonical state, its parent, the plies left (``rem``), its depth, its
proof and disproof numbers, and, once solved, its *rank* (plies within which it is proven)
and the action from its parent that reaches it. A node's children are made together when it
is expanded, so they are one contiguous run of rows: ``kid0`` (the first, -1 while the node
is a leaf) and ``nk`` (how many).

Three operations, each over many nodes at once:

- :meth:`Tree.select` walks from the root to up to ``k`` leaves. The root's *width* ``k``
  is shared among a node's open children in the order of their numbers (proof number at
  the attacker's nodes, disproof number at the defender's): the second-best child gets a
  quarter, the third an eighth and so on, the best one the rest. With ``k = 1`` this is
  Allis's most-proving node; with more, the leaves near it.
- :meth:`Tree.add_children` appends the children of expanded leaves.
- :meth:`Tree.update` recomputes the numbers of the ancestors of changed nodes, one depth
  at a time from the deepest, and reports the nodes it solved (the caller records them).

Solved subtrees stay in the arrays until :meth:`Tree.compact` drops every node below a
solved one (the search's table holds what they proved) and renumbers the rest. When the
open tree itself is too big, :meth:`Tree.shrink` makes the least recently selected inner
nodes leaves again (their numbers kept), so a long search runs in bounded memory.

>>> import numpy as np
>>> t = Tree(attacker=0)
>>> root = t.add_root((0, 0, 0, 0, 0), rem=3, pn=1, dn=1)
>>> t.select(8).tolist()
[0]
"""

from __future__ import annotations

import numpy as np

INF = 1 << 40
NO_RANK = 1 << 30
FIELDS = {  # as narrow as their values allow: the tree is mostly fresh rows
    "x": np.uint64,
    "o": np.uint64,
    "xb": np.int8,
    "ob": np.int8,
    "turn": np.int8,
    "par": np.int32,  # rows stay below 2**31 (the search bounds the tree at 2**24)
    "kid0": np.int32,
    "nk": np.int16,  # a position has a few hundred actions at most
    "pn": np.int64,
    "dn": np.int64,
    "rem": np.int16,
    "depth": np.int16,
    "rank": np.int16,  # plies
    "src": np.int8,  # squares
    "dst": np.int8,
    "seen": np.int32,  # the last selection that passed the node (or made it)
}
ROW_BYTES = sum(np.dtype(t).itemsize for t in FIELDS.values())


class Tree:
    """The AND-OR tree of one bound's search for ``attacker`` (0 x, 1 o)."""

    def __init__(self, attacker: int, capacity: int = 1 << 12):
        self.a = attacker
        self.n = 0
        self.cap = capacity
        self.clock = 0  # selections so far
        for name, dtype in FIELDS.items():
            setattr(self, name, np.zeros(capacity, dtype=dtype))
        self.slot = np.zeros(capacity, dtype=np.int32)  # scratch of _distinct (no meaning)

    def __len__(self) -> int:
        return self.n

    def _reserve(self, extra: int) -> None:
        if self.n + extra <= self.cap:
            return
        cap = self.cap
        while self.n + extra > cap:
            cap *= 2
        for name in FIELDS:
            old = getattr(self, name)
            new = np.zeros(cap, dtype=old.dtype)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)
        self.slot = np.zeros(cap, dtype=np.int32)
        self.cap = cap

    def clear(self) -> None:
        """Drop every node, keeping the arrays (and the memory pages they have touched)."""
        self.n = 0
        self.clock = 0

    def add_root(self, state: tuple, rem: int, pn: int, dn: int) -> int:
        self._reserve(1)
        i = self.n
        self.x[i], self.o[i], self.xb[i], self.ob[i], self.turn[i] = state
        self.par[i], self.kid0[i], self.nk[i] = -1, -1, 0
        self.pn[i], self.dn[i], self.rem[i], self.depth[i] = pn, dn, rem, 0
        self.rank[i], self.src[i], self.dst[i], self.seen[i] = 0, -2, -2, self.clock
        self.n = 1
        return i

    def state(self, i: int) -> tuple[int, int, int, int, int]:
        return self.states(np.array([i]))[0]

    def states(self, nodes: np.ndarray) -> list[tuple[int, int, int, int, int]]:
        return list(
            zip(
                self.x[nodes].tolist(),
                self.o[nodes].tolist(),
                self.xb[nodes].tolist(),
                self.ob[nodes].tolist(),
                self.turn[nodes].tolist(),
                strict=True,
            )
        )

    # --- children of many nodes --------------------------------------------------------

    def _kids_of(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(children, the position in ``nodes`` of each one's parent, each run's start)."""
        # take(mode="clip") for the gathers of the hot loops: the rows are in range, and
        # numpy then skips its bounds check.
        nk = self.nk.take(nodes, mode="clip").astype(np.int64)
        start = np.cumsum(nk) - nk
        seg = np.repeat(np.arange(len(nodes)), nk)
        kids = np.repeat(self.kid0.take(nodes, mode="clip"), nk)
        kids += np.arange(len(seg)) - start[seg]
        return kids, seg, start

    def _distinct(self, nodes: np.ndarray) -> np.ndarray:
        """``nodes`` (rows of the tree) without repeats, in their order: each writes its
        place into its node's slot of a scratch column, and it is kept when it reads its
        own place back. Whichever write of a repeated node lands, exactly one of its copies
        reads it. No sort: a few passes over ``nodes``, whatever the tree's size."""
        place = np.arange(len(nodes), dtype=np.int32)
        self.slot[nodes] = place
        return nodes[self.slot[nodes] == place]

    def select(self, k: int) -> np.ndarray:
        """Up to ``k`` open leaves, the most-proving one among them (level by level, in
        child order)."""
        self.clock += 1
        front = np.zeros(1, dtype=np.int64)
        width = np.array([k], dtype=np.int64)
        out = []
        while len(front):
            self.seen[front] = self.clock
            inner = self.kid0[front] >= 0
            out.append(front[~inner])
            front, width = front[inner], width[inner]
            if not len(front):
                break
            kids, seg, start = self._kids_of(front)
            attackers = self.turn[front] == self.a
            key = np.where(
                attackers[seg], self.pn.take(kids, mode="clip"), self.dn.take(kids, mode="clip")
            )
            # By parent, then number, ties in child order: one stable sort of one word (a
            # front has at most k nodes, and the numbers stay below INF = 2**40).
            order = np.argsort((seg << 41) | key, kind="stable")
            place = np.empty(len(kids), dtype=np.int64)
            place[order] = np.arange(len(kids)) - start[seg[order]]
            share = np.where(place > 0, width[seg] >> np.minimum(place + 1, 62), 0)
            share[key >= INF] = 0
            rest = width - np.bincount(seg, weights=share, minlength=len(front)).astype(np.int64)
            best = order[start]  # each run's best child
            share[best] = np.where(key[best] < INF, rest, 0)
            take = share > 0
            front, width = kids[take], share[take]
        return np.concatenate(out)

    def add_children(
        self,
        parents: np.ndarray,
        counts: np.ndarray,
        cols: dict[str, np.ndarray],
    ) -> np.ndarray:
        """Append ``counts[j]`` children under ``parents[j]`` (rows of ``cols`` in parent
        order); returns the new rows."""
        total = int(counts.sum())
        self._reserve(total)
        lo = self.n
        rows = slice(lo, lo + total)  # new rows are one run: slices, not index arrays
        kid0 = lo + np.cumsum(counts) - counts
        has = counts > 0
        self.kid0[parents[has]] = kid0[has]
        self.nk[parents] = counts
        par = np.repeat(parents, counts)
        for name, values in cols.items():
            getattr(self, name)[rows] = values
        self.par[rows] = par
        self.kid0[rows] = -1
        self.nk[rows] = 0
        self.rem[rows] = self.rem[par] - 1
        self.depth[rows] = self.depth[par] + 1
        self.rank[rows] = 0
        self.seen[rows] = self.clock
        self.n = lo + total
        return np.arange(lo, lo + total)

    # --- numbers up --------------------------------------------------------------------

    def update(self, changed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Recompute the ``changed`` nodes that have children (just expanded) and every
        ancestor of them all; returns the nodes this solved: (proven, disproven, for each
        proven one the child whose action proves it, or -1 at the defender's nodes)."""
        proven, disproven, via = [], [], []
        if not len(changed):
            return self._cat(proven), self._cat(disproven), self._cat(via)
        # One depth at a time, deepest first: the changed nodes of that depth (distinct, and
        # never a parent of another changed node) and the parents of the level below.
        depth = self.depth[changed]
        up = np.zeros(0, dtype=np.int64)
        for d in range(int(depth.max()), -1, -1):
            below = changed[depth == d + 1]
            parents = np.concatenate([up, self.par[below]])
            parents = self._distinct(parents[parents >= 0])
            # In row order, as the nodes it solves are recorded: the table's eviction drops
            # its oldest disproofs first, so the order is part of the search.
            cur = np.sort(np.concatenate([changed[depth == d], parents]))
            cur = cur[(self.pn[cur] != 0) & (self.dn[cur] != 0) & (self.nk[cur] > 0)]
            if not len(cur):
                up = up[:0]
                continue
            kids, seg, start = self._kids_of(cur)
            kpn, kdn = self.pn.take(kids, mode="clip"), self.dn.take(kids, mode="clip")
            attackers = self.turn[cur] == self.a
            pn = np.where(
                attackers,
                np.minimum.reduceat(kpn, start),
                np.minimum(np.add.reduceat(kpn, start), INF),
            )
            dn = np.where(
                attackers,
                np.minimum(np.add.reduceat(kdn, start), INF),
                np.minimum.reduceat(kdn, start),
            )
            won, lost = pn == 0, (dn == 0) & (pn != 0)
            if won.any():
                krank = self.rank.take(kids, mode="clip").astype(np.int64)
                least = np.minimum.reduceat(np.where(kpn == 0, krank, NO_RANK), start)
                most = np.maximum.reduceat(krank, start)
                rank = np.where(attackers, least, most) + 1
                self.rank[cur[won]] = rank[won]
                # The proving child at the attacker's nodes: the first of least rank.
                hit = np.flatnonzero((kpn == 0) & (krank == least[seg]) & attackers[seg])
                first_seg, first = np.unique(seg[hit], return_index=True)
                child = np.full(len(cur), -1, dtype=np.int64)
                child[first_seg] = kids[hit[first]]
                proven.append(cur[won])
                via.append(child[won])
                pn[won], dn[won] = 0, INF
            if lost.any():
                disproven.append(cur[lost])
                pn[lost], dn[lost] = INF, 0
            moved = (pn != self.pn[cur]) | (dn != self.dn[cur])
            self.pn[cur], self.dn[cur] = pn, dn
            up = self.par[cur[moved]]
        return self._cat(proven), self._cat(disproven), self._cat(via)

    @staticmethod
    def _cat(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    # --- dropping subtrees ----------------------------------------------------------------

    def under_solved(self) -> int:
        """How many nodes are children of solved nodes: at least that many would go in a
        :meth:`compact` (with their own subtrees, about 6 to 13 times as many on 6x6 c8
        torus), found in a pass over the tree instead of a copy of it."""
        n = self.n
        solved = ((self.pn[:n] == 0) | (self.dn[:n] == 0)) & (self.kid0[:n] >= 0)
        return int(self.nk[:n][solved].sum(dtype=np.int64))

    def compact(self) -> int:
        """Drop every node below a solved node or a leaf (a node made a leaf again by
        :meth:`shrink`) and renumber; returns how many were dropped."""
        n = self.n
        # Down from the root, one depth at a time: the children of every kept node that is
        # still open are kept.
        keep = np.zeros(n, dtype=bool)
        front = np.zeros(min(n, 1), dtype=np.int64)
        keep[front] = True
        while len(front):
            front = front[(self.kid0[front] >= 0) & (self.pn[front] != 0) & (self.dn[front] != 0)]
            front = self._kids_of(front)[0]
            keep[front] = True
        new = np.cumsum(keep) - 1
        rows = np.flatnonzero(keep)  # found once, gathered from by every column
        m = len(rows)
        for name in FIELDS:
            arr = getattr(self, name)
            arr[:m] = arr.take(rows, mode="clip")  # rows < n: no bounds check needed
        self.n = m
        p = self.par[:m]
        self.par[:m] = np.where(p >= 0, new[np.maximum(p, 0)], -1)
        k0 = self.kid0[:m]
        gone = (k0 < 0) | (self.pn[:m] == 0) | (self.dn[:m] == 0)
        self.kid0[:m] = np.where(gone, -1, new[np.maximum(k0, 0)])
        self.nk[:m] = np.where(gone, 0, self.nk[:m])
        return n - m

    def shrink(self, target: int) -> int:
        """Make the least recently selected inner nodes leaves again, keeping their numbers
        as the leaves' estimates, so that at most ``target`` nodes remain; returns how many
        were dropped.

        A node is never selected more recently than its parent, so a node stays exactly when
        its parent was selected at or after the cut: the cut is chosen from the parents'
        stamps. It is never later than the last selection, so the root and the children of
        every node that selection passed stay (up to a batch of leaves and their children
        above ``target``). Proofs are not lost (the table keeps them all); disproofs the
        table has evicted are, and are found again when their nodes are expanded again."""
        dropped = self.compact()
        n = self.n
        if n <= max(target, 1):  # the root (row 0) always stays
            return dropped
        parent_seen = self.seen[self.par[1:n]]
        keep = max(target - 1, 0)
        # The least stamp that keeps at most ``keep`` nodes besides the root.
        cut = int(np.partition(parent_seen, len(parent_seen) - keep - 1)[-keep - 1]) + 1
        cut = min(cut, self.clock)
        old = (self.kid0[:n] >= 0) & (self.seen[:n] < cut)
        self.kid0[:n][old] = -1
        self.nk[:n][old] = 0
        return dropped + self.compact()


__all__ = ["INF", "ROW_BYTES", "Tree"]
