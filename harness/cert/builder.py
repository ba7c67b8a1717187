"""Build a certificate from a proof search: choose the strategy, rank it, shard it, write it.

The strategy closure is walked from the initial position. Every entry is a canonical
position (the least symmetric image by (x, o) bitboards) with the winner to move; its rank
is the least number of plies within which the search proves the win from it (odd for x).
A chosen action must keep every successor within ``rank - 2`` plies (``rank - 1`` after a
pass), so ranks strictly decrease along every play.

Choosing actions for a small certificate (``optimize``): among the actions that keep the
rank, pick the one whose successors add the least to the certificate, counting successors
already in it as free, a successor that wins at once as 1 and a deeper one as the average
size of the subtrees of its rank built so far. Immediate wins are always taken. At ranks up
to ``full_rank`` every action is considered (its successors are proven on demand); above,
only actions the search has already proven, to keep the work bounded.

>>> from harness.rules import Ruleset
>>> from harness.solver.proof import ProofSearch
>>> rs = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
>>> search = ProofSearch(rs)
>>> search.prove(max_plies=9).winner
'x'
>>> strategy = Strategy.build(search, 0)
>>> strategy.entries[search.root()][0]
7
>>> shards = strategy.layout(max_entries=50)
>>> sum(len(s.entries) for s in shards) == len(strategy.entries)
True
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.cert.format import Entry, Shard
from harness.solver.proof import Act, ProofSearch, State, action_of, position_of

MAX_PLIES = 15  # certify's default bound on the win it looks for


class StrategyError(ValueError):
    """The search's table does not prove what the builder needs (a bug or a stale state)."""


@dataclass
class Strategy:
    """Entries ``state -> (rank, action)`` and each entry's successor entries."""

    search: ProofSearch
    attacker: int
    entries: dict[State, tuple[int, Act]] = field(default_factory=dict)
    successors: dict[State, list[State]] = field(default_factory=dict)

    # --- building -----------------------------------------------------------------------

    @classmethod
    def build(cls, search: ProofSearch, attacker: int, **options) -> Strategy:
        """Walk the winning strategy of ``attacker`` from the initial position (``options``
        as :meth:`empty`'s)."""
        self = cls.empty(search, attacker, **options)
        self.enter_root()
        return self

    @classmethod
    def empty(
        cls,
        search: ProofSearch,
        attacker: int,
        *,
        optimize: bool = True,
        full_rank: int = 5,
        progress: Callable[[int], None] | None = None,
    ) -> Strategy:
        """A strategy with no entries yet, to be grown by :meth:`grow` (or ``build``);
        ``progress`` is told its entries every thousand."""
        self = cls(search, attacker)
        self._optimize = optimize
        self._full_rank = full_rank
        self._progress = progress
        self._sizes: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        # state -> (least budget proven or None, budgets searched so far)
        self._mb: dict[State, tuple[int | None, int]] = {}
        # With a frontier, entries of rank <= _stop_rank are collected here, not entered.
        self.frontier: dict[State, int] | None = None
        self._stop_rank = 0
        return self

    def grow(self, s: State, rank: int) -> None:
        """Add entry ``s`` of ``rank`` and everything its strategy reaches (one subtree)."""
        self._enter(s, rank)

    def enter_root(self) -> None:
        """Add the initial position's entries (its successors' when the defender moves first)."""
        search, attacker = self.search, self.attacker
        root = search.root()
        cap = search.proven_budget(root, attacker)
        if cap is None:
            raise StrategyError("the search has not proven the initial position")
        if root[4] == attacker:
            self._enter(root, self.min_budget(root, cap))
        else:
            for succ in self._and_successors(root, cap):
                self._enter(succ, self.min_budget(succ, cap - 1))

    def min_budget(self, s: State, cap: int) -> int | None:
        """The least budget ``≤ cap`` within which the search proves ``s``, or None."""
        known, searched = self._mb.get(s, (None, 0))
        if known is not None:
            return known if known <= cap else None
        search, a = self.search, self.attacker
        for d in range(searched + 1, cap + 1):
            if search.win(s, d, a):
                self._mb[s] = (d, d)
                return d
        self._mb[s] = (None, max(cap, searched))
        return None

    def _enter(self, root: State, rank: int | None) -> None:
        """Add ``root`` and everything its strategy reaches (iteratively: no deep recursion)."""
        if rank is None:
            raise StrategyError("a successor is not proven within its rank")
        stack: list[tuple[State, int, int, int]] = [(root, rank, 0, 0)]
        entries = self.entries
        while stack:
            s, r, phase, before = stack.pop()
            if phase == 1:
                # Every entry this subtree added: the estimate for later choices at rank r.
                size = self._sizes[r]
                size[0] += len(entries) - before
                size[1] += 1
                continue
            if s in entries:
                if entries[s][0] != r:
                    raise StrategyError("one position reached with two ranks")
                continue
            if self.frontier is not None and 3 <= r <= self._stop_rank:
                self.frontier.setdefault(s, r)  # a subtree for someone else to grow
                continue
            before = len(entries)
            act, succs = self._choose(s, r)
            entries[s] = (r, act)
            self.successors[s] = [t for t, _ in succs]
            if self._progress is not None and len(entries) % 1000 == 0:
                self._progress(len(entries))
            stack.append((s, r, 1, before))
            for t, rt in succs:
                if t not in entries:
                    stack.append((t, rt, 0, 0))

    def _choose(self, s: State, r: int) -> tuple[Act, list[tuple[State, int]]]:
        """The action for entry ``s`` of rank ``r`` and its successors with their ranks."""
        search, a = self.search, self.attacker
        rules, canon = search.rules, search.canon
        stored = search.proven[a].get(s)
        candidates: list[tuple[Act, int | None, State]] = []
        for act in rules.actions(s):
            res, nxt = rules.play(s, act)
            if res == a:
                return act, []
            if res is None:
                candidates.append((act, None, canon.image(nxt)[0]))
        if r < 2:
            raise StrategyError("rank 1 without an immediate win")
        best: tuple[float, int, Act, list[tuple[State, int]]] | None = None
        full = self._optimize and r <= self._full_rank
        for act, _, c in candidates:
            is_stored = stored is not None and stored[1] == act
            if not (full or is_stored or (self._optimize and self._proven_within(c, r - 1))):
                continue
            succs = self._successors_within(c, r - 1)
            if succs is None:
                continue
            cost = 0.0
            for t, rt in succs:
                if t not in self.entries:
                    cost += self._estimate(rt)
            key = (cost, len(succs))
            if best is None or key < best[:2]:
                best = (cost, len(succs), act, succs)
            if not self._optimize:
                break
        if best is None:
            raise StrategyError("no action keeps the rank (stale or inconsistent table)")
        return best[2], best[3]

    def refine(self, passes: int = 2) -> int:
        """Re-choose the actions of rank-3 entries now that the whole certificate is known.

        While the strategy was walked, a rank-3 entry could only count as free the
        immediate-win successors already built; now every other entry's successors are
        known. Each pass gives every rank-3 entry the action whose successors are least
        often new (not referenced by any other entry), and drops successors nobody refers
        to any more. Returns how many entries were removed in total (net).
        """
        before = len(self.entries)
        refs: dict[State, int] = defaultdict(int)
        for succs in self.successors.values():
            for t in succs:
                refs[t] += 1
        for _ in range(passes):
            changed = False
            for s in [s for s, (r, _) in self.entries.items() if r == 3]:
                if s not in self.entries:
                    continue
                old = self.successors[s]
                for t in old:
                    refs[t] -= 1
                best_act, best = self.entries[s][1], old
                best_cost = sum(1 for t in old if refs[t] == 0)
                for act, succs in self._alternatives(s, 3):
                    cost = sum(1 for t, _ in succs if refs[t] == 0)
                    if cost < best_cost:
                        best_act, best, best_cost = act, [t for t, _ in succs], cost
                if best is not old:
                    changed = True
                self.entries[s] = (3, best_act)
                self.successors[s] = best
                for t in best:
                    refs[t] += 1
                    if t not in self.entries:
                        self.entries[t] = (1, self._choose(t, 1)[0])
                        self.successors[t] = []
                for t in old:
                    if refs[t] == 0 and t in self.entries and self.entries[t][0] == 1:
                        del self.entries[t]
                        del self.successors[t]
            if not changed:
                break
        return before - len(self.entries)

    def _alternatives(self, s: State, r: int):
        """(action, successors with ranks) for every action of ``s`` that keeps rank ``r``."""
        search = self.search
        rules, canon = search.rules, search.canon
        for act in rules.actions(s):
            res, nxt = rules.play(s, act)
            if res is not None:
                continue
            succs = self._successors_within(canon.image(nxt)[0], r - 1)
            if succs is not None and all(rt is not None and rt <= r - 2 for _, rt in succs):
                yield act, succs

    def _proven_within(self, c: State, budget: int) -> bool:
        got = self.search.proven_budget(c, self.attacker)
        return got is not None and got <= budget

    def _successors_within(self, c: State, budget: int) -> list[tuple[State, int]] | None:
        """Successor entries (state, rank) of child ``c`` if the attacker wins from it
        within ``budget`` plies; None otherwise."""
        if c[4] == self.attacker:  # the defender passed: ``c`` itself is the next entry
            mb = self.min_budget(c, budget)
            return None if mb is None else [(c, mb)]
        if not self.search.win(c, budget, self.attacker):
            return None
        return [(t, self.min_budget(t, budget - 1)) for t in self._and_successors(c, budget)]

    def _and_successors(self, c: State, budget: int) -> list[State]:
        search, a = self.search, self.attacker
        rules, canon = search.rules, search.canon
        out: dict[State, None] = {}
        for act in rules.actions(c):
            res, nxt = rules.play(c, act)
            if res is None:
                t = canon.image(nxt)[0]
                if t[4] != a:
                    raise StrategyError("the attacker is left without an action")
                out[t] = None
            elif res != a:
                raise StrategyError("a proven child lets the defender escape")
        if any(self.min_budget(t, budget - 1) is None for t in out):
            raise StrategyError("a proven child has an unproven successor")
        return list(out)

    def _estimate(self, rank: int) -> float:
        if rank <= 1:
            return 1.0
        total, count = self._sizes[rank]
        if count:
            return total / count
        return 25.0 ** ((rank - 1) / 2)

    # --- sharding -----------------------------------------------------------------------

    def layout(self, max_entries: int = 20000) -> list[Shard]:
        """Shards by placement rank, then at most ``max_entries`` each, successors first.

        Groups of one placement rank are ordered so that every successor's group comes
        before (or is) its entry's group; within a group entries go by rank, so successors
        in the same group sit in the same or an earlier shard. If placement ranks form a
        cycle (falls returning checkers to the bin under reincarnation), the entries are
        ordered by rank alone and cut wherever the placement rank changes.
        """
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        rs = self.search.rs

        def group(s: State) -> int:
            return s[2] + s[3]

        members: dict[int, list[State]] = defaultdict(list)
        for s in self.entries:
            members[group(s)].append(s)
        deps: dict[int, set[int]] = {g: set() for g in members}
        for s, succs in self.successors.items():
            for t in succs:
                if group(t) != group(s):
                    deps[group(s)].add(group(t))
        order = _topological(deps)

        def sort_key(s: State) -> tuple[int, str]:
            return self.entries[s][0], position_of(s).text(rs)

        runs: list[tuple[int, list[State]]] = []
        if order is not None:
            for g in order:
                runs.append((g, sorted(members[g], key=sort_key)))
        else:
            ordered = sorted(self.entries, key=lambda s: (sort_key(s)[0], group(s), sort_key(s)[1]))
            for s in ordered:
                if runs and runs[-1][0] == group(s):
                    runs[-1][1].append(s)
                else:
                    runs.append((group(s), [s]))
        shards = []
        for g, states in runs:
            for i in range(0, len(states), max_entries):
                chunk = states[i : i + max_entries]
                shards.append(Shard(g, [self.entry(s) for s in chunk]))
        return shards

    def entry(self, s: State) -> Entry:
        rs = self.search.rs
        rank, act = self.entries[s]
        return Entry(position_of(s).text(rs), action_of(act).text(rs), rank)


def _topological(deps: dict[int, set[int]]) -> list[int] | None:
    """Groups with every group after those it depends on (lowest first among the free);
    None when the dependencies have a cycle."""
    waiting = {g: set(d) - {g} for g, d in deps.items()}
    users: dict[int, list[int]] = defaultdict(list)
    for g, d in waiting.items():
        for h in d:
            users[h].append(g)
    ready = [g for g, d in waiting.items() if not d]
    heapq.heapify(ready)
    order = []
    while ready:
        g = heapq.heappop(ready)
        order.append(g)
        for u in users[g]:
            waiting[u].discard(g)
            if not waiting[u]:
                heapq.heappush(ready, u)
    return order if len(order) == len(deps) else None
