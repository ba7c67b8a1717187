"""Build non-win sets from a strong solution (:class:`harness.solver.retrograde.Solution`).

The set for ``p`` ("p cannot force a win") is walked breadth first from the initial
position, a whole frontier at a time with the batch engine: where ``p`` is to move every
action's successor joins the set; where the defender is to move one action is chosen among
those the solution rates as not winning for ``p`` (a draw or a defender's win). Positions
are kept as canonical images (the least ``(x, o)`` image, as in format 1), so the defender's
action is written in the frame of the stored image.

Choosing the defender's action for a small set (``greedy``), best first:

1. an action that ends the game without ``p`` winning (adds nothing);
2. an action into a position already in the set, or one this frontier adds anyway (the
   successors of ``p``'s positions);
3. an action into a new position that other parents of this frontier also reach, the most
   shared first; among equals a defender's win before a draw, and the fastest win first.

The greedy build is then *consolidated* (:func:`consolidate`): every defender's reply moves
to its candidate already in the set that the most of the set's moves lead to, and what the
initial position no longer reaches is dropped. A reply that stays in the set keeps it closed,
so a pass never adds a position; passes repeat while the set shrinks.

``greedy=False`` takes the first non-losing action in the reference order instead; the
measured sizes are in docs/certificates.md.

>>> from harness.rules import Ruleset
>>> from harness.solver.retrograde import solve
>>> sol = solve(Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"))
>>> sol.value
'x'
>>> build_nonwin(sol, 1).player, len(build_nonwin(sol, 1).positions) > 0  # o cannot win
(1, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from harness.cert.format import Shard
from harness.cert.nonwin_format import NonWinEntry, NonWinSet
from harness.rules.position import PLAYERS, Action, Position
from harness.rules.ruleset import Ruleset
from harness.solver.batch import BatchEngine, engine
from harness.solver.bitboards import popcount
from harness.solver.classindex import KeyIndex
from harness.solver.solution import Solution
from harness.solver.states import DRAW, States

CHUNK = 1 << 15  # frontier positions expanded at once
LOOKAHEAD = 8  # candidates per defender expanded once more to count what they add
ROUNDS = 5  # builds at most, each preferring the previous one's positions
PASSES = 16  # consolidation passes at most (they stop when one does not shrink the set)


class NonWinError(ValueError):
    """The solution does not support the requested non-win set (the player wins)."""


@dataclass
class NonWinBuild:
    """A built set: canonical images, and the defender's action per image (None for p)."""

    player: int
    positions: list[Position]
    actions: list[Action | None]
    seconds: float = 0.0
    rounds: int = 1

    def shards(self, rs, max_entries: int = 20000) -> list[Shard]:
        """Entries grouped by placement rank (highest first, the order play meets them), cut
        into shards of at most ``max_entries``; within a shard in the order they were found."""
        groups: dict[int, list[NonWinEntry]] = {}
        for pos, act in zip(self.positions, self.actions, strict=True):
            entry = NonWinEntry(pos.text(rs), None if act is None else act.text(rs))
            groups.setdefault(pos.placement_rank(), []).append(entry)
        out = []
        for rank in sorted(groups, reverse=True):
            entries = groups[rank]
            for lo in range(0, len(entries), max_entries):
                out.append(Shard(rank, entries[lo : lo + max_entries]))
        return out

    def as_set(self, rs, max_entries: int = 20000) -> NonWinSet:
        return NonWinSet(self.player, self.shards(rs, max_entries))


def unpack_keys(eng: BatchEngine, keys: np.ndarray) -> States:
    """The positions whose :meth:`BatchEngine.keys` are ``keys``: the canonical images.

    A position key packs (x bin, o bin, turn, x board, o board) most significant first
    (``BatchEngine._words`` with the turn as the extra bit).
    """
    n, bb = eng.n, eng.bin_bits
    nmask = np.uint64((1 << n) - 1)
    if eng.key_words == 1:
        o = keys & nmask
        x = (keys >> np.uint64(n)) & nmask
        high = keys >> np.uint64(2 * n)
    elif eng.key_words == 2:
        o = keys["lo"]
        x = keys["hi"] & nmask
        high = keys["hi"] >> np.uint64(n)
    else:
        o, x, high = keys["lo"], keys["mid"], keys["hi"]
    turn = (high & np.uint64(1)).astype(np.int8)
    high = high >> np.uint64(1)
    bmask = np.uint64((1 << bb) - 1)
    ob = (high & bmask).astype(np.int8)
    xb = ((high >> np.uint64(bb)) & bmask).astype(np.int8)
    return States(x.astype(np.uint64), o.astype(np.uint64), xb, ob, turn)


def _first_per_group(group: np.ndarray, order_keys: tuple[np.ndarray, ...]) -> np.ndarray:
    """Row index of the best row of every group: least ``order_keys`` (last key primary)."""
    order = np.lexsort((*order_keys, group))
    g = group[order]
    first = np.ones(len(g), dtype=bool)
    first[1:] = g[1:] != g[:-1]
    return order[first]


def build_nonwin(
    sol: Solution,
    player: int,
    *,
    greedy: bool = True,
    lookahead: int = LOOKAHEAD,
    rounds: int = ROUNDS,
    consolidated: bool = True,
    progress: Callable[[int], None] | None = None,
) -> NonWinBuild:
    """The closed set of positions showing that ``player`` (0 x, 1 o) cannot force a win
    from the initial position, built from the strong solution ``sol``.

    With ``greedy``, the set is built up to ``rounds`` times, each round preferring the
    positions of the round before, and the smallest is kept; a round that does not shrink the
    set ends the search. ``lookahead`` bounds how many of a defender's candidates that open new
    ground are expanded once more to count what they would add (0: none). With
    ``consolidated`` the greedy set is then shrunk by :func:`consolidate`.
    """
    t0 = time.monotonic()
    best, seen = _build_once(sol, player, greedy, 0, None, progress)
    done = 1
    if greedy and lookahead > 0 and rounds > 1:
        # Looking ahead usually, not always, gives a smaller set: the smaller one leads.
        build, index = _build_once(sol, player, greedy, lookahead, None, progress)
        done += 1
        if len(build.positions) < len(best.positions):
            best, seen = build, index
    while greedy and done < rounds:
        build, index = _build_once(sol, player, greedy, lookahead, seen, progress)
        done += 1
        if len(build.positions) >= len(best.positions):
            break
        best, seen = build, index
    if greedy and consolidated:
        best = consolidate(sol.ruleset, best)
    best.rounds = done
    best.seconds = time.monotonic() - t0
    return best


def consolidate(rs: Ruleset, build: NonWinBuild, passes: int = PASSES) -> NonWinBuild:
    """The closed non-win set ``build`` made smaller without leaving it: in each pass every
    defender replies into its successor in the set that the most of the set's moves lead to,
    and the positions the initial position no longer reaches are dropped. A defender with an
    action that ends the game without the player winning replies with it (the stored action
    when that is one). Every reply stays inside
    the set, so the set stays closed and never grows; passes stop when one does not shrink it.

    No solution is needed: every position of a closed set is one the player cannot force a
    win from, so any successor in the set is a reply that keeps the player from winning. A
    set of any builder (the weak builder's, a published certificate's) can be consolidated.
    The set's moves are held as arrays: about 20 bytes a move.
    """
    player = build.player
    eng = engine(rs)
    n = len(build.positions)
    index = KeyIndex(words=eng.key_words)
    node = index.add(eng.keys(States.from_positions(build.positions))) if n else np.zeros(0)
    if len(index) != n:
        raise NonWinError(f"{rs.id}: the set holds a position twice")
    if n == 0:
        return build
    # A defender with an action that ends the game without the player winning replies with
    # it (adding nothing): its stored action when that is one, else its first.
    ending: dict[int, Action] = {}
    forced: list[tuple[np.ndarray, np.ndarray]] = []
    cands: list[tuple[np.ndarray, ...]] = []
    for lo in range(0, n, CHUNK):
        states = States.from_positions(build.positions[lo : lo + CHUNK])
        succ = eng.successors(states)
        parent = node[lo : lo + CHUNK][succ.parent].astype(np.int32)
        child = index.find(eng.keys(succ.next)).astype(np.int32) if len(succ) else parent
        live = succ.result == 0
        by_p = states.turn[succ.parent] == player
        # succ.result: the absolute result of an action that ends the game (1 + player: won).
        for r in np.flatnonzero(~by_p & ~live & (succ.result != 1 + player)).tolist():
            src = int(succ.src[r])
            act = Action(None if src < 0 else src, int(succ.dst[r]))
            stored = build.actions[lo + int(succ.parent[r])]
            if int(parent[r]) not in ending or act == stored:
                ending[int(parent[r])] = act
        take = by_p & live
        if (child[take] < 0).any():
            raise NonWinError(f"{rs.id}: the set is not closed (a move of the player leaves it)")
        forced.append((parent[take], child[take]))
        ok = ~by_p & live & (child >= 0)
        cands.append((parent[ok], child[ok], succ.src[ok], succ.dst[ok]))
    fp, fc = (np.concatenate(c) for c in zip(*forced, strict=True))
    cp, cc, csrc, cdst = (np.concatenate(c) for c in zip(*cands, strict=True))
    ends = np.zeros(n, dtype=bool)
    ends[list(ending)] = True
    cands_ok = ~ends[cp]
    root = int(index.find(eng.keys(States.from_positions([Position.initial(rs)])))[0])
    if root < 0:
        raise NonWinError(f"{rs.id}: the set does not hold the initial position")
    alive, choice, size = np.ones(n, dtype=bool), None, n
    for _ in range(passes):
        indeg = np.bincount(fc[alive[fp]], minlength=n)
        if choice is not None:
            indeg += np.bincount(cc[choice[choice >= 0]], minlength=n)
        rows = np.flatnonzero(cands_ok & alive[cp] & alive[cc])
        score = indeg[cc[rows]]
        if choice is not None:
            score = score - (choice[cp[rows]] == rows)  # a defender's own reply counts not
        best = rows[_first_per_group(cp[rows], (-score,))]
        pick = np.full(n, -1, dtype=np.int64)
        pick[cp[best]] = best
        chosen = pick[pick >= 0]
        reach = _reachable(
            root, n, np.concatenate([fp, cp[chosen]]), np.concatenate([fc, cc[chosen]])
        )
        if int(reach.sum()) >= size:
            break
        alive, choice, size = reach, np.where(reach, pick, -1), int(reach.sum())
    if choice is None:
        return build
    keep = alive[node]
    positions, actions = [], []
    for k in np.flatnonzero(keep).tolist():
        i, act = int(node[k]), build.actions[k]
        if i in ending:
            act = ending[i]
        elif choice[i] >= 0:
            src = int(csrc[choice[i]])
            act = Action(None if src < 0 else src, int(cdst[choice[i]]))
        positions.append(build.positions[k])
        actions.append(act)
    return NonWinBuild(player, positions, actions, build.seconds, build.rounds)


def _reachable(root: int, n: int, parents: np.ndarray, children: np.ndarray) -> np.ndarray:
    """Which of nodes ``0..n-1`` ``root`` reaches along the moves ``parents -> children``."""
    order = np.argsort(parents, kind="stable")
    to = children[order]
    start = np.searchsorted(parents[order], np.arange(n + 1))
    seen = np.zeros(n, dtype=bool)
    seen[root] = True
    frontier = np.array([root], dtype=np.int64)
    while len(frontier):
        lo, lens = start[frontier], start[frontier + 1] - start[frontier]
        at = np.repeat(lo - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
        nxt = np.unique(to[at])
        nxt = nxt[~seen[nxt]]
        seen[nxt] = True
        frontier = nxt
    return seen


def _build_once(
    sol: Solution,
    player: int,
    greedy: bool,
    lookahead: int,
    prefer: KeyIndex | None,
    progress: Callable[[int], None] | None,
) -> tuple[NonWinBuild, KeyIndex]:
    """One breadth-first build; ``prefer`` holds the keys of a previous round's set."""
    rs = sol.ruleset
    eng = engine(rs)
    p_win = 1 + player  # the solution's value code of a win for `player`
    seen = KeyIndex(words=eng.key_words)
    root = States.from_positions([Position.initial(rs)])
    root_key = eng.keys(root)
    value, _ = sol.lookup(root)
    if int(value[0]) == p_win:
        raise NonWinError(
            f"{rs.id}: {PLAYERS[player]} wins from the initial position; there is no non-win set"
        )
    seen.add(root_key)
    pending = [unpack_keys(eng, root_key)]
    positions: list[Position] = []
    actions: list[Action | None] = []
    while pending:
        frontier = pending.pop(0)
        if len(frontier) > CHUNK:
            pending.insert(0, frontier.take(np.arange(CHUNK, len(frontier))))
            frontier = frontier.take(np.arange(CHUNK))
        succ, value, plies = sol.rate_successors(frontier)
        if (value < 0).any():
            raise NonWinError(f"{rs.id}: a successor is not in the solution (a stale solution?)")
        mover_is_p = frontier.turn[succ.parent] == player
        ended = succ.result != 0
        if (mover_is_p & (value == p_win)).any():
            at = frontier.take(succ.parent[mover_is_p & (value == p_win)][:1]).positions()[0]
            raise NonWinError(
                f"{rs.id}: {PLAYERS[player]} can force a win from {at.text(rs)} "
                "(the solution disagrees with itself?)"
            )
        live = ~ended
        keys = eng.keys(succ.next) if len(succ) else root_key[:0]
        forced = mover_is_p & live
        # The defender's candidates: every action the solution does not rate as p's win.
        cand = ~mover_is_p & (value != p_win)
        defenders = np.flatnonzero(frontier.turn != player)
        has = np.zeros(len(frontier), dtype=bool)
        has[succ.parent[cand]] = True
        if not has[defenders].all():
            bad = frontier.take(defenders[~has[defenders]][:1]).positions()[0]
            raise NonWinError(
                f"{rs.id}: {PLAYERS[1 - player]} has no action keeping {PLAYERS[player]} from "
                f"winning in {bad.text(rs)}: that position is won for {PLAYERS[player]}"
            )
        rows = np.flatnonzero(cand)
        if greedy and len(rows):
            best = _choose(
                eng, player, succ, value, plies, keys, rows, ended, forced, seen, prefer, lookahead
            )
        else:
            best = _first_per_group(succ.parent[rows], (rows,)) if len(rows) else rows
        chosen_rows = rows[best]
        chosen = np.full(len(frontier), -1, dtype=np.int64)
        chosen[succ.parent[chosen_rows]] = chosen_rows
        # Record the frontier's entries.
        for i, pos in enumerate(frontier.positions()):
            r = int(chosen[i])
            if pos.turn == player:
                actions.append(None)
            else:
                src = int(succ.src[r])
                actions.append(Action(None if src < 0 else src, int(succ.dst[r])))
            positions.append(pos)
        # The next frontier: new successors, forced and chosen.
        take = forced.copy()
        take[chosen_rows] = True
        take &= live
        nxt = keys[take]
        before = len(seen)
        ids = seen.add(nxt)
        uniq, first = np.unique(ids, return_index=True)
        if (uniq >= before).any():
            pending.append(unpack_keys(eng, nxt[first[uniq >= before]]))
        if progress is not None:
            progress(len(positions))
    return NonWinBuild(player, positions, actions), seen


def _choose(
    eng: BatchEngine,
    player: int,
    succ,
    value: np.ndarray,
    plies: np.ndarray,
    keys: np.ndarray,
    rows: np.ndarray,
    ended: np.ndarray,
    forced: np.ndarray,
    seen: KeyIndex,
    prefer: KeyIndex | None,
    lookahead: int,
) -> np.ndarray:
    """Index into ``rows`` (the defenders' candidate actions) of each defender's choice."""
    q_win = 2 - player
    crow_keys = keys[rows]
    known = seen.find(crow_keys) >= 0
    batch = KeyIndex(words=eng.key_words)
    if forced.any():
        batch.add(keys[forced])
    known |= batch.find(crow_keys) >= 0
    if prefer is not None:
        known |= prefer.find(crow_keys) >= 0
    r_end = ended[rows]
    tier = np.where(r_end, 0, np.where(known, 1, 2)).astype(np.int8)
    # How many candidate rows of this frontier share each new successor.
    live_rows = ~r_end
    share = np.zeros(len(rows), dtype=np.int64)
    if live_rows.any():
        counter = KeyIndex(words=eng.key_words)
        ids = counter.add(crow_keys[live_rows])
        share[live_rows] = np.bincount(ids)[ids]
    after = succ.next.take(rows)
    on_board = (popcount(after.x) + popcount(after.o)).astype(np.int64)
    parent = succ.parent[rows]
    # Candidates not looked at count as adding more than any that was.
    added = np.where(tier == 2, np.iinfo(np.int64).max, 0)
    if lookahead > 0:
        look = _worth_a_look(parent, tier, on_board, share, lookahead)
        if len(look):
            added[look] = _new_successors(eng, after.take(look), seen, prefer)
    is_draw = (value[rows] == DRAW).astype(np.int8)
    pl = np.where(value[rows] == q_win, plies[rows], 0)
    return _first_per_group(parent, (pl, is_draw, -share, on_board, added, tier))


def _worth_a_look(
    parent: np.ndarray, tier: np.ndarray, on_board: np.ndarray, share: np.ndarray, top: int
) -> np.ndarray:
    """Candidates to expand once more: of every defender with no candidate already in the
    set (tier 2 only), its ``top`` best by fewest checkers on the board, then most shared."""
    best_tier = np.full(int(parent.max()) + 1, 2, dtype=np.int8)
    np.minimum.at(best_tier, parent, tier)
    eligible = np.flatnonzero(best_tier[parent] == 2)
    if not len(eligible):
        return eligible
    order = eligible[np.lexsort((-share[eligible], on_board[eligible], parent[eligible]))]
    g = parent[order]
    start = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    rank = np.arange(len(g)) - np.repeat(start, np.diff(np.r_[start, len(g)]))
    return np.sort(order[rank < top])


def _new_successors(
    eng: BatchEngine, states: States, seen: KeyIndex, prefer: KeyIndex | None
) -> np.ndarray:
    """Per position, how many distinct successors that do not end the game are neither in
    ``seen`` nor in ``prefer``: what entering it would add, one ply on."""
    nxt = eng.successors(states)
    live = nxt.result == 0
    par = nxt.parent[live].astype(np.int64)
    k = eng.keys(nxt.next)[live]
    distinct = KeyIndex(words=eng.key_words)
    ids = distinct.add(k)
    pair = np.unique(par * len(distinct) + ids)  # (position, successor class) once each
    par = pair // max(len(distinct), 1)
    first = np.zeros(len(distinct), dtype=np.int64)
    first[ids] = np.arange(len(ids))
    k = k[first[pair % max(len(distinct), 1)]]
    old = seen.find(k) >= 0
    if prefer is not None:
        old |= prefer.find(k) >= 0
    return np.bincount(par[~old], minlength=len(states))
