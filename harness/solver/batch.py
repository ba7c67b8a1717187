"""The numpy batch engine: one turn for a whole batch of positions at once.

Positions are arrays: ``x`` and ``o`` bitboards (``uint64``, bit ``row * cols + col``), the
bins ``xb`` and ``ob`` and the player to move ``turn`` (0 for x, 1 for o). The engine
implements docs/rules.md exactly like :mod:`harness.rules.engine` (the reference; see its docstring
for the decisions on the rule text's gaps) but without a Python loop per position: every step
is a numpy operation on every action of the batch at once.

How a batch is expanded (see :meth:`BatchEngine.expand`): the legal actions are listed for
the whole batch (:meth:`BatchEngine.actions`: the empty squares of the placers; each
mover's checkers against a padded table of destinations), each is landed, and all are
popped together (:meth:`BatchEngine.pop`): the landing square L differs from row to row,
so its rays come from tables indexed by L, a row of slots per ray (neighbour N, target T).
A push moves one checker to an empty square, so it flips two bits of its owner's board, and
the flips of one pop add up. The results (lines, ringout, stuck) are judged for the whole
batch (:meth:`BatchEngine.judge`). An earlier engine grouped the actions by landing square
and popped each group with constant shifts: faster per action on batches of many thousand
positions, but its fixed cost (eight pop rays times every square, a numpy call each) was
most of the time of a search's batches of a few hundred, and of the un-player's checks.

Lines are found on whole boards: every line lies within three consecutive rows (cyclically
on wrapping edges), so one look-up in a table over the bits of each window of three rows
answers (one table for the whole board up to 18 squares); boards whose windows exceed 18
bits use "pull-back" maps per line direction instead (the squares whose step lies in the
board): a board has a line iff ``b & pull1(b) & pull2(b) & domain`` is not zero. Positions
may be anything :class:`harness.rules.Position` allows, lines already on the board included.

Canonical keys: every symmetry of the ruleset (:func:`harness.rules.symmetry.symmetries`) is
applied to both bitboards through lookup tables over chunks of at most 13 squares, and the
least packed key wins. :meth:`BatchEngine.keys` packs (x, o, bins, turn) as a position;
:meth:`BatchEngine.class_keys` packs a position *from the mover's side* (mover's board,
opponent's board, mover's bin, opponent's bin, no turn), which also identifies a position
with its colour swap: swapping x and o and the player to move gives the same position seen
from the mover's side, the same game with the players' names exchanged, so both have the
same value with the winner renamed. A key is one ``uint64`` when it fits
(``2 * squares + 2 * bin bits + 1 <= 64``, e.g. up to 5x5 with c4) and a
structured ``(hi, lo)`` pair of ``uint64`` otherwise (``(hi, mid, lo)`` on 8x8 boards with
more than 7 checkers), compared word by word.

>>> from harness.rules import Ruleset, Position
>>> rs = Ruleset.from_id("pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump")
>>> eng = BatchEngine(rs)
>>> succ = eng.successors(States.from_positions([Position.initial(rs)]))
>>> len(succ), succ.action_texts(rs)[:3]
(16, ['a1', 'b1', 'c1'])
>>> succ.next_positions()[0].text(rs)
'x.../..../..../.... 2 3 o'
>>> len(set(eng.keys(succ.next).tolist()))  # 16 placements, 3 up to symmetry
3
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache

import numpy as np

from harness.rules.geometry import (
    DIRECTIONS,
    LINE_DIRECTIONS,
    PATTERN_DIRECTIONS,
    geometry,
    surface_step,
)
from harness.rules.ruleset import Ruleset
from harness.rules.symmetry import symmetries
from harness.solver.bitboards import (
    ONE,
    ZERO,
    PermuterStack,
    SquareMap,
    in_slices,
    line_windows,
    mover_columns,
    popcount,
    set_bits,
    square_bit,
    window_index,
)
from harness.solver.states import (
    DRAW,
    KEY2,
    KEY3,
    MOVER_LOSES,
    MOVER_WINS,
    NONE,
    O_WINS,
    X_WINS,
    Expansion,
    States,
    Successors,
)

KEY_SLICE = 1 << 15  # positions canonicalized at once


JUDGE_SLICE = 1 << 14  # actions judged at once: the temporaries stay small enough to reuse


POP_SLICE = 1 << 12  # actions popped at once: a slots-by-rows table of 256 KB a column


@cache
def _engine(rs: Ruleset) -> BatchEngine:
    return BatchEngine(rs)


def engine(rs: Ruleset) -> BatchEngine:
    """The cached :class:`BatchEngine` of a ruleset."""
    return _engine(rs)


class BatchEngine:
    """Tables and batch operations for one ruleset (build once, via :func:`engine`)."""

    def __init__(self, rs: Ruleset):
        self.rs = rs
        geo = geometry(rs)
        self.geo = geo
        n = self.n = geo.squares
        self.full = np.uint64((1 << n) - 1)
        self.bin_bits = max(1, rs.checkers.bit_length())
        # Bins and the turn bit above the boards; two or three words when one does not do.
        high_bits = 2 * self.bin_bits + 1
        if 2 * n + high_bits <= 64:
            self.key_words = 1
        elif n + high_bits <= 64:
            self.key_words = 2
        else:
            self.key_words = 3
        self._build_moves()
        self._build_pops()
        self._build_lines()
        self._build_reach()
        width = min(13, n) if n > 16 else 8
        syms = symmetries(rs)
        self.symmetries = syms
        self.stack = PermuterStack([s.perm for s in syms], width)
        self.permuters = self.stack.parts[1:]  # the identity (first) needs no look-up

    # --- tables ---------------------------------------------------------------------------

    def _build_moves(self) -> None:
        """Per source square: (destination, squares that must be empty in between)."""
        rs, geo, n = self.rs, self.geo, self.n
        pairs: list[list[tuple[int, np.uint64]]] = [[] for _ in range(n)]
        if rs.movement != "nomove":
            for src in range(n):
                found: dict[int, int] = {}
                if rs.pattern == "king":
                    for t in geo.king_targets[src]:
                        found[t] = 0
                elif rs.pattern == "anywhere":
                    for t in range(n):
                        if t != src:
                            found[t] = 0
                else:
                    for d in PATTERN_DIRECTIONS[rs.pattern]:
                        between = 0
                        for t in geo.slide_rays[src][d]:
                            found[t] = 0 if rs.jump else between
                            between |= 1 << t
                if rs.zero:
                    found[src] = 0
                pairs[src] = [(t, np.uint64(m)) for t, m in sorted(found.items())]
        self.move_pairs = pairs
        # The same per source as padded rows, for all movers at once: the destination and
        # the squares that must be empty (the destination and those between); a pad needs
        # every square empty, which a mover's board never is.
        width = max((len(p) for p in pairs), default=0)
        self.move_dst = np.full((n, width), -1, dtype=np.int8)
        self.move_clear = np.full((n, width), ~ZERO, dtype=np.uint64)
        for src, row in enumerate(pairs):
            for j, (dst, between) in enumerate(row):
                self.move_dst[src, j] = dst
                self.move_clear[src, j] = between if dst == src else between | square_bit(dst)

    def _build_pops(self) -> None:
        """Per landing square and ray slot: the neighbour, the neighbour with its target, and
        the neighbours sharing that target; per landing square the neighbours that fall.

        A slot without a ray has an impossible neighbour (every bit) and no pair, so it never
        pushes; a ray whose target is off the board has no pair either (its checker falls
        or, on ``blocked`` edges, stays)."""
        geo, n = self.geo, self.n
        slots = max((len(rays) for rays in geo.pop_rays), default=0)
        self.pop_pair = np.zeros((slots, n), dtype=np.uint64)
        self.pop_nb = np.full((slots, n), ~ZERO, dtype=np.uint64)
        self.pop_shared = np.zeros((slots, n), dtype=np.uint64)
        self.pop_fall = np.zeros(n, dtype=np.uint64)
        falls = self.rs.edge in ("reincarnation", "ringout")
        for L in range(n):
            by_target: dict[int, int] = defaultdict(int)
            for ray in geo.pop_rays[L]:
                if ray.target is not None:
                    by_target[ray.target] |= 1 << ray.neighbour
            for k, ray in enumerate(geo.pop_rays[L]):
                self.pop_nb[k, L] = square_bit(ray.neighbour)
                if ray.target is None:
                    if falls:
                        self.pop_fall[L] |= square_bit(ray.neighbour)
                    continue
                self.pop_pair[k, L] = square_bit(ray.neighbour) | square_bit(ray.target)
                if by_target[ray.target].bit_count() > 1:
                    self.pop_shared[k, L] = np.uint64(by_target[ray.target])
        self.any_shared = bool(self.pop_shared.any())

    def _build_lines(self) -> None:
        """Per line direction: pull-backs by one and two steps and the domain of starts."""
        rs = self.rs
        R, C = rs.rows, rs.cols
        self.line_maps = []
        for _name, direction in LINE_DIRECTIONS:
            first: dict[int, int] = {}
            second: dict[int, int] = {}
            domain = 0
            for r in range(R):
                for c in range(C):
                    s1 = surface_step(R, C, rs.edge, r, c, direction)
                    if s1 is None:
                        continue
                    s2 = surface_step(R, C, rs.edge, s1.row, s1.col, (s1.dr, s1.dc))
                    if s2 is None:
                        continue
                    sq, a, b = r * C + c, s1.row * C + s1.col, s2.row * C + s2.col
                    if len({sq, a, b}) < 3:
                        continue
                    first[sq], second[sq] = a, b
                    domain |= 1 << sq
            if domain:
                self.line_maps.append((SquareMap(first), SquareMap(second), np.uint64(domain)))
        self.line_windows = line_windows(rs.rows, rs.cols, rs.edge)

    def _build_reach(self) -> None:
        """For "has a move": per direction a planar shift, or per square a reach mask."""
        rs = self.rs
        R, C = rs.rows, rs.cols
        self.reach_shifts = None
        self.reach_masks = None
        if rs.movement == "nomove":
            return
        if rs.pattern == "anywhere" or rs.jump:
            masks = []
            for src in range(self.n):
                m = 0
                for t, _ in self.move_pairs[src]:
                    if t != src:
                        m |= 1 << t
                masks.append(np.uint64(m))
            self.reach_masks = masks
            return
        maps = []
        for d in PATTERN_DIRECTIONS[rs.pattern]:
            dr, dc = DIRECTIONS[d]
            mapping = {}
            for r in range(R):
                for c in range(C):
                    if 0 <= r + dr < R and 0 <= c + dc < C:
                        mapping[r * C + c] = (r + dr) * C + c + dc
            maps.append(SquareMap(mapping))
        self.reach_shifts = maps

    # --- predicates -----------------------------------------------------------------------

    def has_line_pulled(self, b: np.ndarray) -> np.ndarray:
        """:meth:`has_line` by pull-backs alone (used to build and check the tables)."""
        found = np.zeros(len(b), dtype=bool)
        for first, second, domain in self.line_maps:
            found |= (b & first.pull(b) & second.pull(b) & domain) != 0
        return found

    def has_line(self, b: np.ndarray) -> np.ndarray:
        """Whether each bitboard holds three in a row on the edge surface.

        Every line lies within three consecutive rows (cyclically on wrapping edges), so a
        table over the bits of each such window of rows answers with one look-up per window;
        small boards use one table over the whole board.
        """
        if self.line_windows is None:
            return self.has_line_pulled(b)
        found = None
        for *where, table in self.line_windows:
            hit = table.take(window_index(b, *where), mode="clip")
            found = hit if found is None else found | hit
        return found

    def movement_allowed(self, mb: np.ndarray) -> np.ndarray:
        if self.rs.movement == "always":
            return np.ones(len(mb), dtype=bool)
        if self.rs.movement == "binempty":
            return mb == 0
        return np.zeros(len(mb), dtype=bool)

    def has_action(self, me: np.ndarray, them: np.ndarray, mb: np.ndarray) -> np.ndarray:
        """Whether the player whose board is ``me`` and bin ``mb`` has a legal action."""
        occ = me | them
        not_full = occ != self.full
        out = (mb > 0) & not_full
        need = ~out & self.movement_allowed(mb) & (me != 0)
        if not need.any():
            return out
        idx = np.flatnonzero(need)
        m, o = me[idx], occ[idx]
        if self.rs.zero:
            can = np.ones(len(idx), dtype=bool)
        elif self.reach_shifts is not None:
            empty = ~o & self.full
            near = np.zeros_like(m)
            for shift in self.reach_shifts:
                near |= shift.pull(empty)  # squares with an empty square in that direction
            can = (near & m) != 0
        else:
            empty = ~o & self.full
            can = np.zeros(len(idx), dtype=bool)
            for src in range(self.n):
                can |= (((m >> np.uint64(src)) & ONE) != 0) & ((self.reach_masks[src] & empty) != 0)
        out[idx] = can
        return out

    # --- expansion ------------------------------------------------------------------------

    def expand(self, me, them, mb, tb) -> Expansion:
        """Every legal action of every position, given from the mover's side.

        ``me``/``them`` are uint64 bitboards, ``mb``/``tb`` int8 bins. Rows come as
        :meth:`actions` lists them: the placements, then the moves, each by parent (see
        :meth:`successors` for the reference order).
        """
        me, them, mb, tb = mover_columns(me, them, mb, tb)
        parent, src, dst = self.actions(me, them, mb)
        return self.play(parent, src, dst, me, them, mb, tb)

    def play(self, parent, src, dst, me, them, mb, tb) -> Expansion:
        """The actions (``src`` -1 for a placement, ``dst``) played in positions ``parent``
        of the batch (``me``, ``them``, ``mb``, ``tb``, from the mover's side), each landed,
        popped and judged. The actions must be legal."""
        parent = np.asarray(parent, dtype=np.int64)
        src = np.asarray(src, dtype=np.int8)
        dst = np.asarray(dst, dtype=np.int8)
        m, t, my_bin, their_bin = self._land_and_pop(parent, src, dst, me, them, mb, tb)
        result, passed = self.judge(m, t, my_bin, their_bin)
        return Expansion(parent, src, dst, m, t, my_bin, their_bin, result, passed)

    def _land_and_pop(self, parent, src, dst, me, them, mb, tb):
        """(me, them, my bin, their bin) after each action, before it is judged."""
        placed = src < 0
        lift = np.where(placed, ZERO, ONE << src.astype(np.uint64))
        m = me[parent] & ~lift
        m |= ONE << dst.astype(np.uint64)
        t = them[parent]
        my_bin = mb[parent] - placed.astype(np.int8)
        their_bin = tb[parent]
        self.pop(dst, m, t, my_bin, their_bin)
        return m, t, my_bin, their_bin

    def wins_at_once(self, me, them, mb, tb) -> np.ndarray:
        """Whether the mover of each position (from the mover's side) has an action that
        wins at once: :meth:`expand`'s ``MOVER_WINS``, judged only where it can be. Off
        ringout edges a win needs the mover's line, so only the actions that make one are
        judged (a few in a hundred in a search)."""
        me, them, mb, tb = mover_columns(me, them, mb, tb)
        parent, src, dst = self.actions(me, them, mb)
        after = self._land_and_pop(parent, src, dst, me, them, mb, tb)
        if self.rs.edge != "ringout":
            rows = np.flatnonzero(self.has_line(after[0]))
            parent, after = parent[rows], tuple(c[rows] for c in after)
        result, _ = self.judge(*after)
        return np.bincount(parent[result == MOVER_WINS], minlength=len(me)) > 0

    def actions(self, me, them, mb):
        """``(parent, src, dst)`` of every legal action: the placements (by parent, then
        square), then the moves (by parent, source, destination).

        Placements are the empty squares of the positions with a checker in the bin;
        moves pair each mover's checkers with its source's padded row of destinations
        (:attr:`move_dst`), kept where the squares that must be empty are.
        """
        n = self.n
        occ = me | them
        placers = np.flatnonzero(mb > 0)
        p_parent, p_dst = set_bits(~occ[placers] & self.full, n)
        p_parent = placers[p_parent]
        movers = np.flatnonzero(self.movement_allowed(mb) & (me != 0))
        if len(movers) and self.move_dst.shape[1]:
            pair, m_src = set_bits(me[movers], n)
            holder = movers[pair]
            ok = (occ[holder][:, None] & self.move_clear[m_src]) == 0
            pair, slot = np.nonzero(ok)
            m_parent = holder[pair]
            m_src = m_src[pair]
            m_dst = self.move_dst.ravel()[m_src * self.move_dst.shape[1] + slot]
        else:
            m_parent = np.zeros(0, dtype=np.int64)
            m_src = m_dst = np.zeros(0, dtype=np.int8)
        parent = np.concatenate([p_parent, m_parent])
        src = np.concatenate([np.full(len(p_parent), -1, dtype=np.int8), m_src.astype(np.int8)])
        dst = np.concatenate([p_dst.astype(np.int8), m_dst])
        return parent, src, dst

    def pop(self, landing, m, t, my_bin, their_bin) -> None:
        """Pop from each row's landing square, in place (docs/rules.md, "Pop"): decided on the
        snapshot, applied together.

        A ray pushes when its neighbour is occupied and its target empty (``snapshot &
        pair == neighbour``) and no other occupied neighbour shares the target. A push
        moves one checker to an empty square, so it flips the two bits of ``pair`` in the
        board that owns the checker; the pushes of one pop touch distinct squares, so
        their flips add up (exclusive or) to the pop. Rows go :data:`POP_SLICE` at a time,
        all ray slots at once (a slots-by-rows table).
        """
        falls = bool(self.pop_fall.any())
        for lo in range(0, len(landing), POP_SLICE):
            sl = slice(lo, lo + POP_SLICE)
            L = landing[sl].astype(np.intp)
            ms, ts = m[sl], t[sl]
            snap = ms | ts
            pair = self.pop_pair.take(L, axis=1, mode="clip")
            nb = self.pop_nb.take(L, axis=1, mode="clip")
            go = (pair & snap) == nb
            if self.any_shared:
                go &= np.bitwise_count(self.pop_shared.take(L, axis=1, mode="clip") & snap) < 2
            flip = pair * go
            mine = flip * ((nb & ms) != 0)
            ms ^= np.bitwise_xor.reduce(mine, axis=0)
            ts ^= np.bitwise_xor.reduce(flip ^ mine, axis=0)
            if falls:  # no push lands on a neighbour (it is one step from L, a target two)
                down = self.pop_fall.take(L, mode="clip")
                my_fall, their_fall = ms & down, ts & down
                ms &= ~my_fall
                ts &= ~their_fall
                if self.rs.edge == "reincarnation":
                    my_bin[sl] += popcount(my_fall)
                    their_bin[sl] += popcount(their_fall)

    def judge(self, m, t, my_bin, their_bin):
        """(result relative to the mover, passed) of positions just played, given from the
        mover's side: lines, then ringout, then stuck (see docs/rules.md)."""
        if len(m) > JUDGE_SLICE:
            return in_slices(self.judge, JUDGE_SLICE, m, t, my_bin, their_bin)
        rs = self.rs
        total = len(m)
        mine_line = self.has_line(m)
        their_line = self.has_line(t)
        result = np.where(
            mine_line,
            np.where(their_line, DRAW, MOVER_WINS),
            np.where(their_line, MOVER_LOSES, NONE),
        ).astype(np.int8)
        if rs.edge == "ringout":
            open_ = result == NONE
            me_short = (popcount(m) + my_bin) < 3
            them_short = (popcount(t) + their_bin) < 3
            ring = np.where(
                me_short,
                np.where(them_short, DRAW, MOVER_LOSES),
                np.where(them_short, MOVER_WINS, NONE),
            ).astype(np.int8)
            result = np.where(open_, ring, result)
        passed = np.zeros(total, dtype=bool)
        open_ = np.flatnonzero(result == NONE)
        if len(open_):
            stuck = ~self.has_action(t[open_], m[open_], their_bin[open_])
            if stuck.any():
                s_idx = open_[stuck]
                if rs.stuck == "draw":
                    result[s_idx] = DRAW
                else:
                    again = self.has_action(m[s_idx], t[s_idx], my_bin[s_idx])
                    result[s_idx[~again]] = DRAW
                    passed[s_idx[again]] = True
        return result, passed

    def successors(self, states: States) -> Successors:
        """Every legal action of every position and its outcome, in the reference order."""
        me, them, mb, tb = states.mover_view()
        ex = self.expand(me, them, mb, tb)
        if (ex.src < 0).any() and (ex.src >= 0).any():
            # A parent's placements before its moves: a stable sort by parent.
            order = np.argsort(ex.parent, kind="stable")
            ex = Expansion(*(getattr(ex, f)[order] for f in Expansion.__dataclass_fields__))
        turn = states.turn[ex.parent]
        # As handed over: the opponent, unless the opponent passed (then the mover again).
        # A game-ending action hands over to the opponent too.
        nxt_turn = np.where(ex.passed, turn, 1 - turn).astype(np.int8)
        is_o = turn == 1
        x = np.where(is_o, ex.them, ex.me)
        o = np.where(is_o, ex.me, ex.them)
        xb = np.where(is_o, ex.tb, ex.mb).astype(np.int8)
        ob = np.where(is_o, ex.mb, ex.tb).astype(np.int8)
        result = ex.result.copy()
        wins = ex.result == MOVER_WINS
        loses = ex.result == MOVER_LOSES
        result[wins] = np.where(is_o[wins], O_WINS, X_WINS)
        result[loses] = np.where(is_o[loses], X_WINS, O_WINS)
        return Successors(
            ex.parent, ex.src, ex.dst, States(x, o, xb, ob, nxt_turn), result, ex.passed
        )

    # --- keys -----------------------------------------------------------------------------

    def images(self, b: np.ndarray) -> list[np.ndarray]:
        """``b`` under every symmetry, identity first."""
        return [b] + [p(b) for p in self.permuters]

    def least_images(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The least image of each pair of boards over every symmetry, ``a`` compared first.

        When both boards fit one 64-bit word, the words are compared. Otherwise only ``a``
        is mapped by every symmetry; ``b`` is mapped by the one that gave the least ``a``,
        and by all of them only in the rows where two give that least ``a`` (a board with a
        symmetry of its own), so most rows cost one look-up of ``b``.

        >>> eng = engine(Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"))
        >>> a, b = np.array([0b100], dtype=np.uint64), np.array([0b010], dtype=np.uint64)
        >>> [bin(int(v[0])) for v in eng.least_images(a, b)]
        ['0b1', '0b10']
        """
        n = np.uint64(self.n)
        if 2 * self.n <= 64:
            word = (a << n) | b
            for p in self.permuters:
                image = p(a)
                image <<= n
                image |= p(b)
                np.minimum(word, image, out=word)
            return word >> n, word & np.uint64((1 << self.n) - 1)
        images = self.images(a)
        best = a.copy()
        which = np.zeros(len(a), dtype=np.intp)
        for i, image in enumerate(images[1:], 1):
            which[image < best] = i
            np.minimum(best, image, out=best)
        least_b = self.stack.pick(b, which)
        tied = np.zeros(len(a), dtype=bool)
        for i, image in enumerate(images):
            tied |= (image == best) & (which != i)
        rows = np.flatnonzero(tied)
        if len(rows):
            sub_best, least = best[rows], least_b[rows]
            for image_a, image_b in zip(images, self.images(b[rows]), strict=True):
                fits = image_a[rows] == sub_best
                np.minimum(least, np.where(fits, image_b, least), out=least)
            least_b[rows] = least
        return best, least_b

    def _words(self, a, b, abin, bbin, extra=None) -> list[np.ndarray]:
        """Two boards and two bins (and an optional bit) as key words, most significant first."""
        n, bb = self.n, self.bin_bits
        high = (abin.astype(np.uint64) << np.uint64(bb)) | bbin.astype(np.uint64)
        if extra is not None:
            high = (high << ONE) | extra.astype(np.uint64)
        if self.key_words == 1:
            return [(high << np.uint64(2 * n)) | (a << np.uint64(n)) | b]
        if self.key_words == 2:
            return [(high << np.uint64(n)) | a, b]
        return [high, a, b]

    def _canonical(self, a, b, abin, bbin, extra=None) -> np.ndarray:
        """The least key over every symmetric image of the boards (bins are invariant).

        Works in slices of :data:`KEY_SLICE` so that the temporaries stay in the cache.
        """
        total = len(a)
        if total > KEY_SLICE:
            return in_slices(self._canonical, KEY_SLICE, a, b, abin, bbin, extra)
        # The bins (and the extra bit) are the high words and invariant, so the least key
        # is the least (a, b) image.
        best = self._words(*self.least_images(a, b), abin, bbin, extra)
        if len(best) == 1:
            return best[0]
        out = np.empty(total, dtype=KEY2 if len(best) == 2 else KEY3)
        for name, word in zip(out.dtype.names, best, strict=True):
            out[name] = word
        return out

    def keys(self, states: States) -> np.ndarray:
        """Canonical keys of positions: equal exactly for symmetric images of a position."""
        return self._canonical(states.x, states.o, states.xb, states.ob, states.turn)

    def class_keys(self, me, them, mb, tb) -> np.ndarray:
        """Canonical keys of positions given from the mover's side (no turn in the key).

        A position and its colour swap (x and o exchanged, the other player to move) look the
        same from the mover's side, so they share a key.
        """
        return self._canonical(me, them, mb, tb)

    def child_keys(self, ex: Expansion, rows: np.ndarray) -> np.ndarray:
        """:meth:`class_keys` of the children ``rows`` of ``ex``, :data:`KEY_SLICE` at a
        time: no copy of the children's columns is made at full length."""
        if not len(rows):
            return self.class_keys(*ex.child_view(rows))
        return in_slices(lambda r: self.class_keys(*ex.child_view(r)), KEY_SLICE, rows)

    def unpack_class(self, keys: np.ndarray):
        """(me, them, mb, tb) of class keys (the canonical representative)."""
        n, bb = self.n, self.bin_bits
        nmask = np.uint64((1 << n) - 1)
        bmask = np.uint64((1 << bb) - 1)
        if self.key_words == 1:
            me = (keys >> np.uint64(n)) & nmask
            them = keys & nmask
            high = keys >> np.uint64(2 * n)
        elif self.key_words == 2:
            me = keys["hi"] & nmask
            them = keys["lo"]
            high = keys["hi"] >> np.uint64(n)
        else:
            me, them, high = keys["mid"], keys["lo"], keys["hi"]
        tb = (high & bmask).astype(np.int8)
        mb = ((high >> np.uint64(bb)) & bmask).astype(np.int8)
        return me, them, mb, tb

    def orbit_sizes(self, me, them) -> np.ndarray:
        """How many distinct positions the symmetries make of each (me, them) pair."""
        ms, ts = self.images(me), self.images(them)
        if self.key_words == 1 and 2 * self.n <= 64:
            words = np.stack([(a << np.uint64(self.n)) | b for a, b in zip(ms, ts, strict=True)])
            words.sort(axis=0)
            return 1 + (np.diff(words, axis=0) != 0).sum(axis=0)
        count = np.ones(len(me), dtype=np.int64)
        for i in range(1, len(ms)):
            new = np.ones(len(me), dtype=bool)
            for j in range(i):
                new &= (ms[i] != ms[j]) | (ts[i] != ts[j])
            count += new
        return count
