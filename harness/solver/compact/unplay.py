"""Predecessors without stored edges: every way the last action could have made a position
is proposed from the position alone, played forward by the batch engine, and kept only if
it gives exactly that position (:class:`Unplayer`)."""

from __future__ import annotations

import numpy as np

from harness.rules.geometry import geometry
from harness.solver.batch import BatchEngine
from harness.solver.bitboards import set_bits
from harness.solver.compact.constants import VERIFY_SLICE, VERIFY_SLICE_FILTERED
from harness.solver.states import NONE


class Unplayer:
    """Every parent of a batch of positions, found by proposing and checking (module doc).

    Like the batch engine's pop (:meth:`BatchEngine.pop`), the proposals are made for every
    landing square at once, from tables indexed by the landing square L with a row of slots
    per ray or per source:

    - ``impossible``: after a pop from L, a ray whose squares play no other part in it never
      shows an occupied neighbour with an empty target (it would have pushed), nor, where
      checkers fall, an occupied neighbour without a target (it would have fallen). A row
      with ``occ & pair == seen`` for such a ray did not come from a landing on L.
    - ``pushed``: a ray whose neighbour is empty and target occupied (``occ & pair ==
      target``) may have pushed the target's checker there: undone, it flips ``pair`` in
      its owner's board.
    - ``fell``: where checkers fall, a ray off the board whose neighbour is empty may have
      dropped a checker of either player.
    - ``source``: the squares a move to L may come from, with the squares that must be
      empty (the source and those between); the checker may also come from the bin.
    """

    def __init__(self, eng: BatchEngine):
        self.eng = eng
        rs = eng.rs
        self.rs = rs
        geo = geometry(rs)
        n = self.n = eng.n
        self.falls = rs.edge in ("reincarnation", "ringout")
        self.refill = rs.edge == "reincarnation"
        never = ~np.uint64(0)  # no board shows this (the landing square is occupied)
        # The engine's pop tables, read backwards: a pushed ray's pair and target, and the
        # neighbours of rays off the board (where checkers fall).
        pair, neighbour = eng.pop_pair, eng.pop_nb
        self.pushed = (pair, np.where(pair != 0, pair ^ neighbour, never))
        off_board = (pair == 0) & (neighbour != never)
        self.fell = np.where(off_board & self.falls, neighbour, np.uint64(0))
        self.impossible = (np.zeros(pair.shape, np.uint64), np.full(pair.shape, never))
        for L in range(n):
            rays = geo.pop_rays[L]
            nbs = [r.neighbour for r in rays]
            tgts = [r.target for r in rays if r.target is not None]
            for k, r in enumerate(rays):
                nb = 1 << r.neighbour
                if r.target is None:
                    if self.falls and r.neighbour not in tgts:
                        self.impossible[0][k, L] = self.impossible[1][k, L] = nb
                    continue
                tg = 1 << r.target
                alone = tgts.count(r.target) == 1
                if alone and r.target not in nbs and r.neighbour not in tgts:
                    self.impossible[0][k, L], self.impossible[1][k, L] = nb | tg, nb
        # Per square, the moves landing there: source (-1 pads) and squares to be empty.
        sources: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for s in range(n):
            for t, between in eng.move_pairs[s]:
                sources[t].append((s, 0 if s == t else int(between) | 1 << s))
        width = max((len(row) for row in sources), default=0)
        self.source = np.full((width, n), -1, dtype=np.int8)
        self.source_clear = np.full((width, n), never, dtype=np.uint64)
        for L, row in enumerate(sources):
            for j, (s, clear) in enumerate(row):
                self.source[j, L], self.source_clear[j, L] = s, clear

    def parents(self, ma, oa, mba, oba, passed: bool):
        """Verified parents of after-states given from the side of the player who acted (M:
        board ``ma``, bin ``mba``; O: ``oa``, ``oba``), with ``passed`` what the forward play
        must report. Returns (row, M, O, M's bin, O's bin) of every (parent, action) found;
        a parent with several actions to the same after-state appears once per action."""
        parts = (part[:5] for part in self._verified(ma, oa, mba, oba, passed))
        return self._joined(parts, 5)

    def parent_keys(self, ma, oa, mba, oba, passed: bool, keep=None):
        """:meth:`parents` as (row as ``int32``, the parent's class key): the parents of
        :data:`VERIFY_SLICE` after-states at a time (:data:`VERIFY_SLICE_FILTERED` with
        ``keep``) become keys, so no batch-long column of parent boards is held.

        ``keep``, a test of class keys (:meth:`KeyFilter.may_hold`), drops proposals
        before they are played forward: their keys are then made first. That costs nothing
        more wherever every proposal is a parent (every edge of 5x5, where none is dropped
        by the forward play) and spares the forward play of the parents ``keep`` drops."""
        keyed = (
            (row.astype(np.int32), self.eng.class_keys(M, O, Mb, Ob) if key is None else key)
            for row, M, O, Mb, Ob, key in self._verified(ma, oa, mba, oba, passed, keep)
        )
        return self._joined(keyed, 2)

    def _verified(self, ma, oa, mba, oba, passed: bool, keep=None):
        """:meth:`parents` in parts of :data:`VERIFY_SLICE` after-states: their proposals
        played forward by one call of the batch engine, and kept where they give the
        after-state exactly; with ``keep`` (:meth:`parent_keys`), only the proposals whose
        class keys it keeps, each given with its key (None without ``keep``), in parts of
        :data:`VERIFY_SLICE_FILTERED`."""
        step = VERIFY_SLICE if keep is None else VERIFY_SLICE_FILTERED
        for lo in range(0, len(ma), step):
            sl = slice(lo, lo + step)
            after = ma[sl], oa[sl], mba[sl], oba[sl]
            cols = self._proposals(*after)
            if keep is not None:
                key = self.eng.class_keys(*cols[2:6])
                kept = np.flatnonzero(keep(key))
                cols = tuple(c[kept] for c in (*cols, key))
            src, dst, PM, PO, PMb, POb, row = cols[:7]
            ex = self.eng.play(np.arange(len(src)), src, dst, PM, PO, PMb, POb)
            good = (
                (ex.result == NONE)
                & (ex.passed == passed)
                & (ex.me == after[0][row])
                & (ex.them == after[1][row])
                & (ex.mb == after[2][row])
                & (ex.tb == after[3][row])
            )
            key = cols[7][good] if keep is not None else None
            yield row[good] + lo, PM[good], PO[good], PMb[good], POb[good], key

    @staticmethod
    def _joined(parts, width: int):
        parts = list(parts)
        if not parts:
            e = np.zeros(0, dtype=np.int64)
            u = np.zeros(0, dtype=np.uint64)
            b = np.zeros(0, dtype=np.int8)
            return (e, u, u, b, b)[:width]
        return tuple(np.concatenate(col) for col in zip(*parts, strict=True))

    def _proposals(self, ma, oa, mba, oba):
        """(source or -1, landing square, M, O, M's bin, O's bin, row) of every legal
        action that may have given a row's after-state: a superset of the parents."""
        rs, n = self.rs, self.n
        row, L = set_bits(ma, n)  # the mover's checkers: where the last one may have landed
        occ = ma[row] | oa[row]
        # "clip": squares are in range, so the look-ups skip numpy's bounds check.
        pair, seen = (t.take(L, axis=1, mode="clip") for t in self.impossible)
        keep = np.flatnonzero(~((occ & pair) == seen).any(axis=0))
        row, L, occ = row[keep], L[keep], occ[keep]
        # Hypotheses per ray, judged on the after-state (occ, mine), undone together.
        M, O, mine = ma[row], oa[row], ma[row]
        Mb, Ob = mba[row].astype(np.int16), oba[row].astype(np.int16)
        cols = [row, L, M, O, Mb, Ob, occ, mine]
        for k in range(len(self.fell)):
            row, L, M, O, Mb, Ob, occ, mine = cols
            pair = self.pushed[0][k].take(L, mode="clip")
            can = np.flatnonzero((occ & pair) == self.pushed[1][k].take(L, mode="clip"))
            if len(can):
                flip = pair[can]
                its = (mine[can] & flip) != 0  # the target's checker is the mover's
                undone = [c[can] for c in cols]
                undone[2] = np.where(its, M[can] ^ flip, M[can])
                undone[3] = np.where(its, O[can], O[can] ^ flip)
                cols = [np.concatenate(pair_) for pair_ in zip(cols, undone, strict=True)]
            if self.falls:
                row, L, M, O, Mb, Ob, occ, mine = cols
                nb = self.fell[k].take(L, mode="clip")
                can = np.flatnonzero((nb != 0) & ((occ & nb) == 0))
                if len(can):
                    dec = 1 if self.refill else 0
                    mfell = [c[can] for c in cols]
                    mfell[2], mfell[4] = M[can] | nb[can], Mb[can] - dec
                    ofell = [c[can] for c in cols]
                    ofell[3], ofell[5] = O[can] | nb[can], Ob[can] - dec
                    cols = [np.concatenate(c) for c in zip(cols, mfell, ofell, strict=True)]
        row, L, M, O, Mb, Ob, occ, _mine = cols
        ok = np.flatnonzero((Mb >= 0) & (Ob >= 0))
        row, L, M, O, Mb, Ob = row[ok], L[ok], M[ok], O[ok], Mb[ok], Ob[ok]
        lbit = np.uint64(1) << L.astype(np.uint64)
        # Where the checker on L came from: the bin, or a square it moved from.
        sel = np.flatnonzero(Mb + 1 <= rs.checkers)
        props = [(np.full(len(sel), -1, np.int8), sel, M[sel] & ~lbit[sel], Mb[sel] + 1)]
        if rs.movement != "nomove":
            occ = M | O
            moving = np.flatnonzero(self.eng.movement_allowed(Mb.astype(np.int8)))
            Lm, occ_m = L[moving], occ[moving]
            for j in range(len(self.source)):
                src = self.source[j].take(Lm, mode="clip")
                ok = np.flatnonzero((occ_m & self.source_clear[j].take(Lm, mode="clip")) == 0)
                sel, s = moving[ok], src[ok].astype(np.uint64)
                # A zero move (s == L) leaves the boards as they are.
                props.append((src[ok], sel, M[sel] & ~lbit[sel] | np.uint64(1) << s, Mb[sel]))
        sel = np.concatenate([p[1] for p in props])
        return (
            np.concatenate([p[0] for p in props]),
            L[sel].astype(np.int8),
            np.concatenate([p[2] for p in props]),
            O[sel],
            np.concatenate([p[3] for p in props]).astype(np.int8),
            Ob[sel].astype(np.int8),
            row[sel],
        )
