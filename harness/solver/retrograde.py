"""Strong solutions by retrograde analysis over the whole reachable game graph.

:func:`solve` works in three passes, all vectorized with numpy (loops run over batches and
over plies, never over positions):

1. **Enumerate** the positions reachable by legal play from the initial one, breadth first,
   with the batch engine (:mod:`harness.solver.batch`). Positions are stored as *classes*:
   one key per position up to the ruleset's symmetries **and** the colour swap (a position
   seen from the side of the player to move; x to move with boards (a, b) is the same game as
   o to move with boards (a, b) and the names exchanged). A vectorized open-addressing hash
   table (:class:`KeyIndex`) gives every new key the next index, so each edge is stored as
   (parent index, child index, same side) the moment it is generated; edges to the same child
   by several actions are stored once. Actions that end the game are folded into three flags
   per class: the mover can win at once, can draw at once, can lose at once.
2. **Count** the positions as docs/rules.md defines them: reachable by legal play,
   counting the initial one, not those after a game-ending action, with the turn as handed
   over after a pass. A second breadth-first pass over the stored edges tracks which of a
   class's two colourings (x to move, o to move) are reachable; ``positions`` is the number of
   raw positions (every symmetric image and turn counted: the sum of orbit sizes) and
   ``canonical`` the number up to symmetry (turn still counted); ``classes`` is what was stored.
   The research family's raw counts are 132,569 / 531,725 / 511,953 positions on 4x4 with
   3, 4, 5 checkers (16,648 / 66,743 / 64,175 up to symmetry) and 39,895,502 for 5x5 c4
   (4,989,870 up to symmetry, 2,810,185 classes).
3. **Retrograde analysis** with counters and reverse edges, ply by ply: a class decided at ply
   k is looked at from each parent once; a parent with an action to a child that is won for
   the parent's mover wins in k + 1 (the first found is the fastest); otherwise the edge is
   counted off, and a parent with every edge counted off and no drawing action loses in
   k + 1 (the last found is the slowest). Immediate wins are ply 1; a class whose every
   action loses at once loses in 1. Whatever is never decided is a draw: every cycle that
   neither player can be forced out of is a draw, as the value is judged from the position
   alone (docs/rules.md, *Values*).

>>> from harness.rules import Ruleset
>>> sol = solve(Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"))
>>> sol.value, sol.plies, sol.positions
('x', 7, 4390)
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from harness.rules.position import Position
from harness.rules.ruleset import Ruleset
from harness.solver.batch import BatchEngine, engine
from harness.solver.budget import Budget
from harness.solver.classindex import KeyIndex, sorted_unique
from harness.solver.memory import peak_resident_bytes, return_freed_memory, trim_heap
from harness.solver.solution import LOSS, UNKNOWN, WIN, Solution
from harness.solver.states import DRAW, MOVER_LOSES, MOVER_WINS, States

MAX_CLASSES = 1 << 30  # an edge packs (parent, child, side) into one int64
MAX_CLASSES_WHY = "edges pack class indices into 31 bits"

BATCH = 16384  # positions expanded at once: big enough for numpy, small enough for the cache


@dataclass
class Graph:
    """The reachable class graph: edges sorted by parent, and flags of ending actions."""

    keys: np.ndarray
    parent: np.ndarray  # int32
    child: np.ndarray  # int32
    same: np.ndarray  # bool: the child's mover is the parent's mover (a pass)
    win_now: np.ndarray
    draw_now: np.ndarray
    lose_now: np.ndarray
    actions: np.ndarray  # int32: legal actions per class (0 only for a stuck start)


def _progress(enabled: bool | None, desc: str):
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(desc=desc, unit=" classes", file=sys.stderr, leave=False)


class _Growing:
    """An array appended to in chunks and grown in place (``realloc``, which remaps big
    blocks): the edges never exist twice, as they would in a list of chunks concatenated at
    the end.

    >>> g = _Growing(np.int32); g.append(np.arange(3)); g.append(np.arange(2)); g.done().tolist()
    [0, 1, 2, 0, 1]
    """

    def __init__(self, dtype):
        self.array = np.zeros(1 << 16, dtype=dtype)
        self.n = 0

    def append(self, chunk: np.ndarray) -> None:
        need = self.n + len(chunk)
        if need > len(self.array):
            self.array.resize(max(need, len(self.array) + len(self.array) // 8), refcheck=False)
        self.array[self.n : need] = chunk
        self.n = need

    def done(self) -> np.ndarray:
        """The array, cut to what was appended (in place)."""
        self.array.resize(self.n, refcheck=False)
        return self.array


def enumerate_graph(
    eng: BatchEngine, budget: Budget | None = None, progress: bool | None = None
) -> Graph:
    """Pass 1: every reachable class, and the edges between them (see the module doc)."""
    rs = eng.rs
    index = KeyIndex(words=eng.key_words)
    root = Position.initial(rs)
    me, them, mb, tb = States.from_positions([root]).mover_view()
    index.add(eng.class_keys(me, them, mb, tb))
    key_chunks = [eng.class_keys(me, them, mb, tb)]
    parents, children, sames = _Growing(np.int32), _Growing(np.int32), _Growing(bool)
    flags = []  # per expanded chunk: (win_now, draw_now, lose_now, actions)
    level_start, level_end = 0, 1
    bar = _progress(progress, "enumerate")
    all_keys = key_chunks[0]
    while level_start < level_end:
        if len(key_chunks) > 1:
            all_keys = np.concatenate(key_chunks)
            key_chunks = [all_keys]
        for lo in range(level_start, level_end, BATCH):
            hi = min(lo + BATCH, level_end)
            me, them, mb, tb = eng.unpack_class(all_keys[lo:hi])
            ex = eng.expand(me, them, mb, tb)
            local = ex.parent
            res = ex.result
            k = hi - lo
            flags.append(
                (
                    np.bincount(local[res == MOVER_WINS], minlength=k) > 0,
                    np.bincount(local[res == DRAW], minlength=k) > 0,
                    np.bincount(local[res == MOVER_LOSES], minlength=k) > 0,
                    np.bincount(local, minlength=k).astype(np.int32),
                )
            )
            live = np.flatnonzero(res == 0)
            if len(live):
                child_keys = eng.child_keys(ex, live)
                if budget is not None:
                    grow = index.growth_bytes(len(child_keys))
                    if grow:
                        budget.check_need("growing the key index", grow, len(index))
                before = len(index)
                child = index.add(child_keys)
                if len(index) > before:
                    fresh = np.flatnonzero(child >= before)
                    new_keys = np.empty(len(index) - before, dtype=child_keys.dtype)
                    new_keys[child[fresh] - before] = child_keys[fresh]
                    key_chunks.append(new_keys)
                parent = local[live] + lo
                same = ex.passed[live]
                # One edge per (parent, child, side): actions that lead to the same class.
                code = (parent.astype(np.int64) << 33) | (child << 1) | same
                code.sort()
                keep = np.ones(len(code), dtype=bool)
                keep[1:] = code[1:] != code[:-1]
                code = code[keep]
                parents.append((code >> 33).astype(np.int32))
                children.append(((code >> 1) & 0xFFFFFFFF).astype(np.int32))
                sames.append((code & 1).astype(bool))
            if bar is not None:
                bar.update(len(index) - bar.n)
            (budget or Budget(None, None, None, 0.0, MAX_CLASSES, MAX_CLASSES_WHY)).check(
                len(index)
            )
        level_start, level_end = level_end, len(index)
    if bar is not None:
        bar.close()
    keys = np.concatenate(key_chunks) if len(key_chunks) > 1 else key_chunks[0]
    assert len(keys) == len(index)
    del index
    return Graph(
        keys=keys,
        parent=parents.done(),
        child=children.done(),
        same=sames.done(),
        win_now=np.concatenate([f[0] for f in flags]),
        draw_now=np.concatenate([f[1] for f in flags]),
        lose_now=np.concatenate([f[2] for f in flags]),
        actions=np.concatenate([f[3] for f in flags]),
    )


def _owner_counts(owner: np.ndarray, n: int) -> np.ndarray:
    """How many times each of ``0 .. n-1`` occurs in ``owner`` (an edge column), counted a
    chunk at a time: ``np.bincount`` would first copy a whole ``int32`` column to ``int64``.

    >>> _owner_counts(np.array([2, 0, 2], dtype=np.int32), 4).tolist()
    [1, 0, 2, 0]
    """
    out = np.zeros(n, dtype=np.int64)
    for lo in range(0, len(owner), EDGE_CHUNK):
        chunk = owner[lo : lo + EDGE_CHUNK]
        least, most = int(chunk.min()), int(chunk.max())
        if most - least < 4 * len(chunk):
            # A narrow range (the parents, which come sorted): count it directly.
            out[least : most + 1] += np.bincount(chunk - least)
            continue
        owners, counts = sorted_unique(chunk, counts=True)
        out[owners] += counts
    return out


def _csr(owner: np.ndarray, n: int) -> np.ndarray:
    off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(_owner_counts(owner, n), out=off[1:])
    return off


def _gather(off: np.ndarray, nodes: np.ndarray, labels: np.ndarray | None = None):
    """Edge ids of every node in ``nodes`` (CSR offsets), and each edge's node's label
    (``labels[i]`` belongs to ``nodes[i]``; the node's position in ``nodes`` if None)."""
    starts, ends = off[nodes], off[nodes + 1]
    counts = ends - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if labels is None:
        labels = np.arange(len(nodes))
    owner = np.repeat(labels, counts)
    shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    shift += np.arange(total)
    return shift, owner


# Edges gathered at once in the count and retrograde passes: their temporaries take about
# 60 bytes an edge, so a chunk costs ~60 MB whatever the size of the graph.
EDGE_CHUNK = 1 << 20


def _pieces(off: np.ndarray, nodes: np.ndarray, limit: int | None = None):
    """Split ``nodes`` into consecutive slices with at most ``limit`` edges each (a node
    with more edges than that gets a slice of its own), so that gathered arrays stay small."""
    if len(nodes) == 0:
        return
    limit = EDGE_CHUNK if limit is None else limit
    counts = off[nodes + 1] - off[nodes]
    ends = np.cumsum(counts)
    start = 0
    while start < len(nodes):
        base = ends[start - 1] if start else 0
        stop = int(np.searchsorted(ends, base + limit, side="right"))
        stop = max(stop, start + 1)
        yield slice(start, stop)
        start = stop


def reachable_sides(graph: Graph) -> np.ndarray:
    """Pass 2: per class, which colourings are reached (bit 0 x to move, bit 1 o to move).

    The representative of class 0 is the initial position with x to move.
    """
    n = len(graph.keys)
    off = _csr(graph.parent, n)
    sides = np.zeros(n, dtype=np.int8)
    sides[0] = 1
    frontier = np.array([0], dtype=np.int64)  # node * 2 + side (0: x moves)
    while len(frontier):
        nodes, side = frontier >> 1, frontier & 1
        found = []
        for piece in _pieces(off, nodes):
            eids, pside = _gather(off, nodes[piece], side[piece])
            if not len(eids):
                continue
            child = graph.child[eids].astype(np.int64)
            # A child's mover is the parent's opponent, unless the opponent passed.
            cside = pside ^ ~graph.same[eids]
            del eids, pside
            code = sorted_unique(child * 2 + cside)
            c, s = code >> 1, code & 1
            new = (sides[c] >> s & 1) == 0
            c, s = c[new], s[new]
            # One side at a time: a class reached on both sides in one step appears twice,
            # and a fancy-indexed |= keeps only the last write.
            for side_bit in (0, 1):
                sides[c[s == side_bit]] |= np.int8(1 << side_bit)
            found.append(code[new])
        frontier = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    return sides


def _reverse(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reverse edges: CSR offsets by child, and each edge's parent and side, ordered by
    (child, parent, side).

    A counting sort, chunk by chunk in the forward order (which is by parent): each chunk's
    edges go to the next free places of their children's segments, in the chunk's own
    stable order by child. The peak is the forward and reverse edges side by side (14
    bytes an edge), with no sort of a whole array.
    """
    n = len(graph.keys)
    e = len(graph.parent)
    off = _csr(graph.child, n)
    fill = off[:-1].copy()
    rev_parent = np.empty(e, dtype=np.int32)
    rev_same = np.empty(e, dtype=bool)
    for lo in range(0, e, EDGE_CHUNK):
        child = graph.child[lo : lo + EDGE_CHUNK]
        order = np.argsort(child, kind="stable")
        ordered = child[order]
        # Rank of each edge among the chunk's edges into the same child.
        first = np.ones(len(ordered), dtype=bool)
        first[1:] = ordered[1:] != ordered[:-1]
        starts = np.flatnonzero(first)
        sizes = np.diff(np.append(starts, len(ordered)))
        dest = fill[ordered] + (np.arange(len(ordered)) - np.repeat(starts, sizes))
        rev_parent[dest] = graph.parent[lo : lo + EDGE_CHUNK][order]
        rev_same[dest] = graph.same[lo : lo + EDGE_CHUNK][order]
        fill[ordered[starts]] += sizes
    return off, rev_parent, rev_same


def retrograde(graph: Graph, free: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Pass 3: (result, plies) per class, results relative to the player to move.

    With ``free`` the graph's forward edges are dropped as soon as the reverse edges are
    built (they are not needed after), which lowers the peak memory by a third.
    """
    n = len(graph.keys)
    result = np.zeros(n, dtype=np.int8)
    plies = np.zeros(n, dtype=np.int32)
    counter = _owner_counts(graph.parent, n).astype(np.int32)
    # A class that can only lose at once loses in 1; one with a drawing action never loses.
    can_avoid_loss = graph.draw_now | (graph.actions == 0)
    wins = graph.win_now
    losses = ~wins & (counter == 0) & ~can_avoid_loss
    result[wins] = WIN
    result[losses] = LOSS
    plies[wins | losses] = 1
    rev_off, rev_parent, rev_same = _reverse(graph)
    if free:
        graph.parent = graph.child = graph.same = None  # type: ignore[assignment]
    level = np.flatnonzero(wins | losses)
    k = 1
    while len(level):
        decided = []
        # In pieces: safe, because an edge is looked at once and a parent whose count runs
        # out has no winning edge left for a later piece to find.
        for piece in _pieces(rev_off, level):
            children = level[piece]
            eids, owner = _gather(rev_off, children)
            parent = rev_parent[eids]
            child_result = result[children][owner]
            # The child's result from the parent mover's side: the same unless sides differ.
            good = np.where(rev_same[eids], child_result == WIN, child_result == LOSS)
            del eids, owner, child_result
            open_ = result[parent] == UNKNOWN
            winners = sorted_unique(parent[good & open_])
            result[winners] = WIN
            plies[winners] = k + 1
            # Edges to children lost for the parent: count them off (undecided parents only).
            bad = ~good & (result[parent] == UNKNOWN)
            losers, hits = sorted_unique(parent[bad], counts=True)
            counter[losers] -= hits.astype(np.int32)
            lost = losers[(counter[losers] == 0) & ~can_avoid_loss[losers]]
            result[lost] = LOSS
            plies[lost] = k + 1
            decided += [winners, lost]
        level = np.concatenate(decided)
        k += 1
    return result, plies


def solve(
    rs: Ruleset,
    *,
    max_positions: int | None = None,
    max_seconds: float | None = None,
    max_memory: int | None = None,
    progress: bool | None = None,
) -> Solution:
    """Strongly solve ``rs`` (every reachable position): see the module doc.

    Budgets (``max_positions`` counts classes) raise :class:`BudgetExceeded`.
    """
    start = time.perf_counter()
    cpu_start = time.process_time()
    budget = Budget(max_positions, max_seconds, max_memory, start, MAX_CLASSES, MAX_CLASSES_WHY)
    return_freed_memory()
    eng = engine(rs)
    timings = {}
    graph = enumerate_graph(eng, budget, progress)
    trim_heap()
    timings["enumerate"] = time.perf_counter() - start
    classes, edges = len(graph.keys), len(graph.parent)
    # The later passes allocate per class and per edge; refuse before, not half-way.
    budget.check_need("the count", classes * 32 + min(edges, EDGE_CHUNK) * 64, classes)
    t = time.perf_counter()
    sides = reachable_sides(graph)
    orbit = np.empty(classes, dtype=np.int16)
    for i in range(0, classes, BATCH):
        me, them, _, _ = eng.unpack_class(graph.keys[i : i + BATCH])
        orbit[i : i + BATCH] = eng.orbit_sizes(me, them)
    timings["count"] = time.perf_counter() - t
    budget.check(classes)
    # The pass adds the reverse edges (5 bytes an edge: parent and side), its per-class
    # arrays (result, plies, counter, flags: 14 bytes a class) and a chunk's temporaries; the
    # forward edges are freed once the reverse ones are built.
    budget.check_need("the retrograde pass", classes * 14 + edges * 5 + EDGE_CHUNK * 64, classes)
    t = time.perf_counter()
    result, plies = retrograde(graph, free=True)
    trim_heap()
    timings["retrograde"] = time.perf_counter() - t
    timings["cpu"] = time.process_time() - cpu_start
    sol = Solution(
        rs,
        graph.keys,
        result,
        plies,
        sides,
        orbit,
        edges=edges,
        seconds=time.perf_counter() - start,
        timings=timings,
        peak_rss=peak_resident_bytes(),
    )
    return sol
