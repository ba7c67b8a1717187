"""Build a non-win set with no strong solution: the closed set grown from the initial position.

The set for ``p`` ("p cannot force a win") is grown breadth first, a batch of positions at a
time with the batch engine. Where ``p`` is to move, every action is covered: an action that
wins for ``p`` marks the position *lost*, any other that does not end the game brings its
position into the set. Where the defender is to move, one reply is chosen by a heuristic, best
first: one that ends the game without ``p`` winning; one into a position already in the set
and not lost; then the fewest checkers on the board. A reply that turns out lost is withdrawn
and the next one tried; a defender with none left is lost, and so is every ``p`` position with
an action into it. The initial position lost means this heuristic found no non-win set (``p``
may well win): a :class:`~harness.cert.nonwin_builder.NonWinError`.

Cycles need no history: a non-win set is judged from positions alone, so an endless play
inside the set is not a win. At the end the set is what the initial position reaches through
every ``p`` action and the defenders' chosen replies; positions grown for replies that were
withdrawn are left out.

Use it where no strong solution fits: it needs memory for the positions it grows, not for
the game. With a strong solution, :func:`~harness.cert.nonwin_builder.build_nonwin` gives
smaller sets (docs/certificates.md compares them).

>>> from harness.rules import Ruleset
>>> rs = Ruleset.from_id("pop1-4x4-c3-reincarnation-continue-binempty-king-nozero-nojump")
>>> build = build_weak(rs, 0)
>>> build.player, len(build.positions) > 0
(0, True)
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

import numpy as np

from harness.cert.nonwin_builder import NonWinBuild, NonWinError, unpack_keys
from harness.rules.position import PLAYERS, Action, Position
from harness.rules.ruleset import Ruleset
from harness.solver.batch import engine
from harness.solver.bitboards import popcount
from harness.solver.classindex import KeyIndex
from harness.solver.states import States

BATCH = 1 << 14  # positions expanded at once
MAX_POSITIONS = 50_000_000  # positions grown before giving up


class _Grower:
    """The growing graph: per position its key, its state, and who points at it."""

    def __init__(self, rs: Ruleset, player: int, max_positions: int):
        self.rs, self.player, self.max_positions = rs, player, max_positions
        self.eng = engine(rs)
        self.index = KeyIndex(words=self.eng.key_words)
        self.keys: list[np.ndarray] = []  # chunks, in id order
        self.lost = np.zeros(1 << 10, dtype=bool)
        self.refs = np.zeros(1 << 10, dtype=np.int64)  # how many point at it (stale too)
        self.parents: list[list[int]] = []
        self.children: dict[int, np.ndarray] = {}  # p's positions: every live successor
        self.options: dict[int, list] = {}  # defenders: [replies (child, src, dst), next one]
        self.choice: dict[int, tuple[int, int, int]] = {}  # defender: (child or -1, src, dst)
        self.queue: deque[int] = deque()
        self.later: list[int] = []  # grown, not wanted when their turn came
        self.root = -1  # the initial position's id, once added

    def ids(self, keys: np.ndarray) -> np.ndarray:
        """The ids of ``keys``, new positions added (and queued for expansion)."""
        before = len(self.index)
        ids = self.index.add(keys)
        new = np.unique(ids[ids >= before])
        if len(new):
            if len(self.index) > self.max_positions:
                raise NonWinError(
                    f"{self.rs.id}: gave up after {self.max_positions:,} positions without "
                    f"closing a set for {PLAYERS[self.player]}"
                )
            first = np.zeros(len(self.index), dtype=np.int64)
            first[ids] = np.arange(len(ids))
            self.keys.append(keys[first[new]])
            if len(self.index) > len(self.lost):
                size = max(2 * len(self.lost), len(self.index))
                self.lost = np.concatenate([self.lost, np.zeros(size - len(self.lost), bool)])
                self.refs = np.concatenate([self.refs, np.zeros(size - len(self.refs), np.int64)])
            self.parents.extend([] for _ in range(len(new)))
            self.queue.extend(new.tolist())
        return ids

    def key_of(self, ids: np.ndarray) -> np.ndarray:
        if len(self.keys) > 1:
            self.keys = [np.concatenate(self.keys)]
        return self.keys[0][ids]

    def expand(self, batch: list[int]) -> None:
        eng, player = self.eng, self.player
        ids = np.array(batch, dtype=np.int64)
        states = unpack_keys(eng, self.key_of(ids))
        succ = eng.successors(states)
        p_wins = succ.result == 1 + player
        live = succ.result == 0
        child = np.full(len(succ), -1, dtype=np.int64)
        if live.any():
            child[live] = self.ids(eng.keys(succ.next)[live])
        on_board = (popcount(succ.next.x) + popcount(succ.next.o)).astype(np.int64)
        starts = np.searchsorted(succ.parent, np.arange(len(ids) + 1))
        in_batch = np.zeros(len(self.index), dtype=bool)
        in_batch[ids] = True
        attacker = states.turn == player
        doomed: list[int] = []
        for i, node in enumerate(batch):
            lo, hi = int(starts[i]), int(starts[i + 1])
            if attacker[i]:
                if p_wins[lo:hi].any():
                    doomed.append(node)
                    continue
                kids = np.unique(child[lo:hi][live[lo:hi]])
                self.children[node] = kids
                self.refs[kids] += 1
                for k in kids.tolist():
                    self.parents[k].append(node)
                if self.lost[kids].any():  # into a position already known to be lost
                    doomed.append(node)
                continue
            rows = np.arange(lo, hi)[~p_wins[lo:hi]]
            c = child[rows]
            known = (c >= 0) & ~in_batch[np.maximum(c, 0)] & (self.refs[np.maximum(c, 0)] > 0)
            tier = np.where(~live[rows], 0, np.where(known, 1, 2))
            order = rows[np.lexsort((on_board[rows], tier))]
            self.options[node] = [np.stack([child[order], succ.src[order], succ.dst[order]]), 0]
            if not self.next_reply(node):
                doomed.append(node)
        self.condemn(doomed)

    def next_reply(self, node: int) -> bool:
        """Point defender ``node`` at its next untried reply that is not lost; False when none
        is left."""
        replies, at = self.options[node]
        while at < replies.shape[1]:
            kid, src, dst = (int(v) for v in replies[:, at])
            at += 1
            self.options[node][1] = at
            if kid >= 0 and self.lost[kid]:
                continue
            self.choice[node] = (kid, src, dst)
            if kid >= 0:
                self.parents[kid].append(node)
                self.refs[kid] += 1
            return True
        self.choice.pop(node, None)
        return False

    def wanted(self, node: int) -> bool:
        """Whether something still points at ``node``: a p position not lost, or a defender
        whose reply it is (the root always)."""
        if node == self.root:
            return True
        for parent in self.parents[node]:
            if self.lost[parent]:
                continue
            if parent in self.children or self.choice.get(parent, (None,))[0] == node:
                return True
        return False

    def condemn(self, nodes: list[int]) -> None:
        """Mark ``nodes`` lost and carry it to whoever points at them."""
        stack = list(nodes)
        while stack:
            node = stack.pop()
            if self.lost[node]:
                continue
            self.lost[node] = True
            for parent in self.parents[node]:
                if self.lost[parent]:
                    continue
                if parent in self.children:  # p's position: one losing action is enough
                    stack.append(parent)
                elif self.choice.get(parent, (None,))[0] == node and not self.next_reply(parent):
                    stack.append(parent)

    def closed_set(self, root: int) -> list[int]:
        """What the root reaches through every p action and the chosen replies."""
        seen = {root}
        todo = [root]
        while todo:
            node = todo.pop()
            nxt = self.children.get(node)
            if nxt is None:
                kid = self.choice[node][0]
                nxt = [] if kid < 0 else [kid]
            for k in list(nxt):
                k = int(k)
                if k not in seen:
                    seen.add(k)
                    todo.append(k)
        return sorted(seen)


def build_weak(
    rs: Ruleset,
    player: int,
    *,
    max_positions: int = MAX_POSITIONS,
    progress: Callable[[int], None] | None = None,
) -> NonWinBuild:
    """The closed set of positions showing that ``player`` (0 x, 1 o) cannot force a win
    from the initial position of ``rs``, grown without a strong solution (module doc)."""
    t0 = time.monotonic()
    g = _Grower(rs, player, max_positions)
    eng = g.eng
    root_key = eng.keys(States.from_positions([Position.initial(rs)]))
    root = g.root = int(g.ids(root_key)[0])
    while True:
        if not g.queue:  # grown for a withdrawn reply, and since chosen again
            revived = [n for n in g.later if not g.lost[n] and g.wanted(n)]
            if not revived:
                break
            again = set(revived)
            g.later = [n for n in g.later if n not in again and not g.lost[n]]
            g.queue.extend(revived)
        batch = []
        while g.queue and len(batch) < BATCH:
            node = g.queue.popleft()
            if g.lost[node]:
                continue
            if g.wanted(node):
                batch.append(node)
            else:
                g.later.append(node)
        if batch:
            g.expand(batch)
        if g.lost[root]:
            raise NonWinError(
                f"{rs.id}: no non-win set for {PLAYERS[player]} found without a strong "
                f"solution (every reply tried from the initial position was lost)"
            )
        if progress is not None:
            progress(len(g.index))
    members = g.closed_set(root)
    states = unpack_keys(eng, g.key_of(np.array(members, dtype=np.int64)))
    positions = states.positions()
    actions: list[Action | None] = []
    for node in members:
        if node in g.children:
            actions.append(None)
        else:
            _, src, dst = g.choice[node]
            actions.append(Action(None if src < 0 else src, dst))
    return NonWinBuild(player, positions, actions, time.monotonic() - t0)
