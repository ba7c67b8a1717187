"""Proof search for a forced win where the game graph does not fit in memory.

An AND-OR search, depth-first and iteratively deepened on the number of plies to the win:
``win(p, d)`` asks whether the *attacker* wins from position ``p`` within ``d`` plies,
``d`` counting every action (the attacker's and the defender's). Positions are reduced
to their canonical symmetric image (:func:`harness.rules.symmetry.canonical`'s choice:
the least image by (x, o) bitboards), and a transposition table keyed by that image keeps
both kinds of answer:

* *proven*: the least budget ``d`` at which ``p`` was proven, and for attacker-to-move
  positions the winning action (in the canonical image's frame);
* *failed*: the largest budget at which ``p`` could not be proven.

Move ordering: at the attacker's nodes immediate wins are found first (every child is
played before any is searched), then children already proven, then children that leave the
defender the fewest replies that do not lose at once (forced replies: a child from which the
defender wins or draws at once is dropped, so the attacker always meets the defender's
immediate threat first). At the defender's nodes the replies that refuted the attacker
before at the same depth (killers) are tried first.

The proof has the invariant a certificate needs: a proven attacker-to-move position at
budget ``d`` has a stored action after which every defender reply leads to a win or to a
position proven at a budget ``≤ d - 2``; budgets only ever decrease, so the invariant
survives. :mod:`harness.cert.builder` turns it into entries whose rank is that budget.

Format 1 certificates cannot express a win in which the attacker is left without an action
after a defender reply (the defender would move twice); the search treats such a reply as
a refutation, so everything it proves can be certified.

A node budget and a time budget bound a run; when either is spent :class:`BudgetExhausted`
is raised and the table can be saved (:meth:`ProofSearch.save`) and loaded into a later run
(:meth:`ProofSearch.load`), which then resumes where the first stopped.

>>> from harness.rules import Ruleset
>>> rs = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
>>> result = ProofSearch(rs).prove(max_plies=9)
>>> result.winner, result.plies
('x', 7)
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.atomic import atomic_file
from harness.rules.engine import has_legal_action, legal_actions
from harness.rules.geometry import geometry
from harness.rules.position import PLAYERS, Action, Position
from harness.rules.ruleset import Ruleset
from harness.rules.symmetry import symmetries

STATE_FORMAT = 1

# A position inside the search: (x bits, o bits, x's bin, o's bin, player to move).
State = tuple[int, int, int, int, int]
# An action inside the search: (src or -1 for a placement, dst).
Act = tuple[int, int]

WIN, OTHER, OPEN = 0, 1, 2  # kinds of child: attacker won / game ended otherwise / goes on


class BudgetExhausted(Exception):
    """The node or time budget ran out; the transposition table holds the partial work."""


class FastRules:
    """A lean turn generator for the search, equal to the reference engine without history.

    It is specialised for speed, not for clarity: pops from precomputed per-square rays,
    lines looked for only through squares that gained a checker (a position the search
    reaches has no line on it, since a line ends the game). It is tested against
    :mod:`harness.rules.engine` on random positions of every edge.

    >>> from harness.rules import Ruleset
    >>> rs = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
    >>> f = FastRules(rs)
    >>> f.play((0, 0, 8, 8, 0), (-1, 5))   # x places on b2; the game goes on
    (None, (32, 0, 7, 8, 1))
    """

    def __init__(self, rs: Ruleset):
        self.rs = rs
        geo = geometry(rs)
        self.n = geo.squares
        self.full = geo.full
        # rays[L]: ((neighbour bit, target bit or 0 when the push leaves the board), ...)
        self.rays = tuple(
            tuple((1 << r.neighbour, 0 if r.target is None else 1 << r.target) for r in rays)
            for rays in geo.pop_rays
        )
        # Whether two rays of one landing square can target the same square (tiny torus).
        self.shared = tuple(
            len({t for _, t in rays if t}) < len([t for _, t in rays if t]) for rays in self.rays
        )
        through: list[list[int]] = [[] for _ in range(self.n)]
        for line in geo.lines:
            for sq in line.squares:
                through[sq].append(line.mask)
        self.lines_through = tuple(tuple(m) for m in through)
        self.bit_index = {1 << sq: sq for sq in range(self.n)}
        self.falls_to_bin = rs.edge == "reincarnation"
        self.ringout = rs.edge == "ringout"
        self.stuck_draw = rs.stuck == "draw"
        self.moves_when = rs.movement  # nomove / binempty / always

    # --- actions ------------------------------------------------------------------------

    def actions(self, s: State) -> list[Act]:
        """Every legal action, in the reference engine's order."""
        x, o, bx, bo, t = s
        occ = x | o
        acts: list[Act] = []
        if (bx, bo)[t]:
            acts = [(-1, sq) for sq in range(self.n) if not occ >> sq & 1]
        if self.moves_when == "always" or (self.moves_when == "binempty" and not (bx, bo)[t]):
            for a in legal_actions(self.rs, Position((x, o), (bx, bo), t)):
                if a.src is not None:
                    acts.append((a.src, a.dst))
        return acts

    def has_action(self, x: int, o: int, bx: int, bo: int, t: int) -> bool:
        if (bx, bo)[t] and (x | o) != self.full:
            return True
        return has_legal_action(self.rs, Position((x, o), (bx, bo), t))

    # --- one turn -----------------------------------------------------------------------

    def play(self, s: State, act: Act) -> tuple[int | None, State]:
        """Play ``act``: (result, position handed over); result 0 = x wins, 1 = o wins,
        2 = draw, None = the game goes on.

        Equal to :func:`harness.rules.engine.play_unchecked` with an empty history.
        """
        x, o, bx, bo, t = s
        src, dst = act
        lbit = 1 << dst
        if t == 0:
            if src < 0:
                bx -= 1
            else:
                x &= ~(1 << src)
            x |= lbit
        else:
            if src < 0:
                bo -= 1
            else:
                o &= ~(1 << src)
            o |= lbit
        snap = x | o
        gained_x = lbit if t == 0 else 0
        gained_o = lbit if t == 1 else 0
        rays = self.rays[dst]
        if self.shared[dst]:
            counts: dict[int, int] = {}
            for nb, tb in rays:
                if snap & nb and tb:
                    counts[tb] = counts.get(tb, 0) + 1
        else:
            counts = None
        for nb, tb in rays:
            if not snap & nb:
                continue
            if tb == 0:
                # Off a non-wrapping edge: falls (reincarnation, ringout) or stays (blocked).
                if self.rs.edge == "blocked":
                    continue
                if x & nb:
                    x ^= nb
                    if self.falls_to_bin:
                        bx += 1
                else:
                    o ^= nb
                    if self.falls_to_bin:
                        bo += 1
                continue
            if snap & tb or (counts is not None and counts[tb] > 1):
                continue
            if x & nb:
                x ^= nb | tb
                gained_x |= tb
            else:
                o ^= nb | tb
                gained_o |= tb
        xline = self._line(x, gained_x)
        oline = self._line(o, gained_o)
        them = 1 - t
        if xline or oline:
            res = 2 if xline and oline else (0 if xline else 1)
            return res, (x, o, bx, bo, them)
        if self.ringout:
            short = [p for p, (b, n) in enumerate(((x, bx), (o, bo))) if b.bit_count() + n < 3]
            if len(short) == 2:
                return 2, (x, o, bx, bo, them)
            if short:
                return 1 - short[0], (x, o, bx, bo, them)
        if not self.has_action(x, o, bx, bo, them):
            if self.stuck_draw or not self.has_action(x, o, bx, bo, t):
                return 2, (x, o, bx, bo, them)
            return None, (x, o, bx, bo, t)
        return None, (x, o, bx, bo, them)

    def _line(self, board: int, gained: int) -> bool:
        through = self.lines_through
        bit_index = self.bit_index
        while gained:
            low = gained & -gained
            gained ^= low
            for mask in through[bit_index[low]]:
                if board & mask == mask:
                    return True
        return False


class Canon:
    """Canonical images by table look-up: 8-bit chunks of a bitboard mapped per symmetry.

    ``image(s)`` equals ``canonical(rs, pos)[0]`` of the reference (the least image by
    (x, o) bitboards) and also returns the symmetry's index, so actions can be mapped.
    """

    def __init__(self, rs: Ruleset):
        self.syms = symmetries(rs)
        n = rs.squares
        self.chunks = (n + 7) // 8
        # Made with numpy and handed over as tuples of ints (what the scalar look-ups
        # index fastest): the same tables as a loop over every byte and bit, which took
        # 13 to 20 ms on 5x5, a tenth of a small proof search.
        byte = np.arange(256, dtype=np.uint64)
        self.tables = []
        for sym in self.syms:
            per_chunk = []
            for c in range(self.chunks):
                table = np.zeros(256, dtype=np.uint64)
                for b in range(min(8, n - 8 * c)):
                    table |= ((byte >> np.uint64(b)) & np.uint64(1)) << np.uint64(
                        sym.perm[8 * c + b]
                    )
                per_chunk.append(tuple(table.tolist()))
            self.tables.append(tuple(per_chunk))
        self.perms = [sym.perm for sym in self.syms]
        self.inverse = [sym.inverse().perm for sym in self.syms]

    def map_bits(self, k: int, bits: int) -> int:
        out = 0
        for table in self.tables[k]:
            out |= table[bits & 255]
            bits >>= 8
        return out

    def image(self, s: State) -> tuple[State, int]:
        x, o, bx, bo, t = s
        best_x = best_o = -1
        best_k = 0
        for k, tables in enumerate(self.tables):
            ix = 0
            b = x
            for table in tables:
                ix |= table[b & 255]
                b >>= 8
            if best_x >= 0 and ix > best_x:
                continue
            io = 0
            b = o
            for table in tables:
                io |= table[b & 255]
                b >>= 8
            if best_x < 0 or ix < best_x or io < best_o:
                best_x, best_o, best_k = ix, io, k
        return (best_x, best_o, bx, bo, t), best_k

    def map_act(self, k: int, act: Act) -> Act:
        perm = self.perms[k]
        src, dst = act
        return (-1 if src < 0 else perm[src], perm[dst])


def state_of(pos: Position) -> State:
    return (pos.board[0], pos.board[1], pos.bins[0], pos.bins[1], pos.turn)


def position_of(s: State) -> Position:
    return Position((s[0], s[1]), (s[2], s[3]), s[4])


def action_of(act: Act) -> Action:
    return Action(None if act[0] < 0 else act[0], act[1])


def act_of(action: Action) -> Act:
    return (-1 if action.src is None else action.src, action.dst)


@dataclass
class ProofResult:
    """The outcome of :meth:`ProofSearch.prove`: ``winner`` None when no win was found
    within ``max_plies`` (for either player tried)."""

    ruleset: str
    winner: str | None
    plies: int | None
    nodes: int
    seconds: float
    table_size: int


class ProofSearch:
    """Iteratively deepened AND-OR proof search with a transposition table.

    ``attacker`` is 0 (x) or 1 (o); :meth:`prove` tries both unless told which.
    ``max_nodes``/``max_seconds`` bound the work of one run (None: unbounded); ``progress``
    is called now and then with a short status line.
    """

    def __init__(
        self,
        rs: Ruleset,
        *,
        max_nodes: int | None = None,
        max_seconds: float | None = None,
        progress: Callable[[str], None] | None = None,
    ):
        self.rs = rs
        self.rules = FastRules(rs)
        self.canon = Canon(rs)
        # Per attacker: canonical state -> (budget, action) and canonical state -> budget.
        self.proven: list[dict[State, tuple[int, Act | None]]] = [{}, {}]
        self.failed: list[dict[State, int]] = [{}, {}]
        self.done_depth = [0, 0]  # budgets fully searched from the root without a win
        self.killers: dict[tuple[int, int], Act] = {}
        self.nodes = 0
        self.max_nodes = max_nodes
        self.max_seconds = max_seconds
        self.progress = progress
        self._deadline: float | None = None
        self._node_limit: int | None = None
        self._next_report = 0.0

    # --- public -------------------------------------------------------------------------

    def root(self) -> State:
        return self.canon.image(state_of(Position.initial(self.rs)))[0]

    def wall_deadline(self) -> float | None:
        """The running search's time limit as a wall-clock time (``time.time()``), or None:
        what a search on another machine can keep to, since monotonic clocks do not compare
        across machines."""
        if self._deadline is None:
            return None
        return time.time() + (self._deadline - time.monotonic())

    def keep_to(self, wall_deadline: float, seconds: float) -> None:
        """Spend no time past ``wall_deadline`` (another search's :meth:`wall_deadline`,
        under a budget of ``seconds``): past it, raise :class:`BudgetExhausted` as that
        search would."""
        self.max_seconds = seconds
        self._deadline = time.monotonic() + (wall_deadline - time.time())

    def nodes_left(self) -> int | None:
        """Nodes the running search may still visit under its node budget, or None."""
        if self._node_limit is None:
            return None
        return max(0, self._node_limit - self.nodes)

    def keep_within(self, nodes: int, budget: int) -> None:
        """Visit at most ``nodes`` more nodes (what another search had left of its budget
        of ``budget``): past them, raise :class:`BudgetExhausted` as that search would."""
        self.max_nodes = budget
        self._node_limit = self.nodes + nodes

    def prove(
        self, max_plies: int = 99, attackers: tuple[int, ...] = (0, 1), start: int = 1
    ) -> ProofResult:
        """Deepen until one attacker wins from the initial position within ``max_plies``.

        Raises :class:`BudgetExhausted` when a budget runs out (the table is kept).
        """
        t0 = time.monotonic()
        self._deadline = None if self.max_seconds is None else t0 + self.max_seconds
        self._node_limit = None if self.max_nodes is None else self.nodes + self.max_nodes
        root = self.root()
        for d in range(start, max_plies + 1):
            for a in attackers:
                # A win for x ends on x's action: odd plies; for o, even ones.
                if (d % 2 == 1) != (a == 0) or d <= self.done_depth[a]:
                    continue
                self._report(f"{PLAYERS[a]} within {d} plies", force=True)
                if self.win(root, d, a):
                    return self._result(PLAYERS[a], self.proven[a][root][0], t0)
                self.done_depth[a] = d
        return self._result(None, None, t0)

    def least_win(self, s: State, attacker: int, max_plies: int) -> int | None:
        """The least plies within which ``attacker`` wins from canonical ``s`` (deepening
        over the plies such a win can take), or None if not within ``max_plies``.

        Raises :class:`BudgetExhausted` when the node budget runs out."""
        self._deadline = None if self.max_seconds is None else time.monotonic() + self.max_seconds
        self._node_limit = None if self.max_nodes is None else self.nodes + self.max_nodes
        # A win for the attacker ends on its own action: odd plies if it moves in s.
        for d in range(1 if s[4] == attacker else 2, max_plies + 1, 2):
            if self.win(s, d, attacker):
                return self.proven[attacker][s][0]
        return None

    def proven_budget(self, s: State, attacker: int) -> int | None:
        """The budget a canonical state was proven at, or None."""
        hit = self.proven[attacker].get(s)
        return None if hit is None else hit[0]

    def children(self, s: State) -> Iterator[tuple[Act, int | None, State]]:
        """(action, result or None, canonical handed position) for each legal action."""
        rules, canon = self.rules, self.canon
        for act in rules.actions(s):
            res, nxt = rules.play(s, act)
            yield act, res, canon.image(nxt)[0]

    # --- the search ---------------------------------------------------------------------

    def win(self, s: State, d: int, a: int) -> bool:
        """Whether attacker ``a`` wins from canonical state ``s`` within ``d`` plies."""
        hit = self.proven[a].get(s)
        if hit is not None and hit[0] <= d:
            return True
        if self.failed[a].get(s, -1) >= d:
            return False
        self.nodes += 1
        # The node budget is exact; the clock and progress are looked at every 1,024 nodes.
        if self.nodes & 1023 == 0 or (
            self._node_limit is not None and self.nodes >= self._node_limit
        ):
            self._tick()
        ok = self._or(s, d, a) if s[4] == a else self._and(s, d, a)
        if not ok:
            if self.failed[a].get(s, -1) < d:
                self.failed[a][s] = d
        return ok

    def _or(self, s: State, d: int, a: int) -> bool:
        rules = self.rules
        acts = rules.actions(s)
        played = []
        for act in acts:
            res, nxt = rules.play(s, act)
            if res is None:
                played.append((act, nxt))
            elif res == a:
                self._store(s, 1, act, a)
                return True
        if d < 2 or not played:
            return False
        canon = self.canon
        proven, failed = self.proven[a], self.failed[a]
        scored = []
        for act, nxt in played:
            c = canon.image(nxt)[0]
            hit = proven.get(c)
            if hit is not None and hit[0] <= d - 1:
                self._store(s, hit[0] + 1, act, a)
                return True
            if failed.get(c, -1) >= d - 1:
                continue
            if c[4] != a and d >= 3:
                # Forced replies: a child where the defender wins or draws at once is lost.
                score = self._defender_score(c, a)
                if score is None:
                    failed[c] = max(failed.get(c, -1), d - 1)
                    continue
            else:
                score = 0
            scored.append((score, act, c))
        scored.sort(key=lambda item: item[0])
        for _, act, c in scored:
            if self.win(c, d - 1, a):
                self._store(s, self.proven[a][c][0] + 1, act, a)
                return True
        return False

    def _defender_score(self, c: State, a: int) -> int | None:
        """None if the defender (to move in ``c``) ends the game without losing at once;
        else the number of replies that do not lose at once (fewer is better)."""
        rules = self.rules
        count = 0
        for act in rules.actions(c):
            res, _ = rules.play(c, act)
            if res is None:
                count += 1
            elif res != a:
                return None
        return count

    def _and(self, s: State, d: int, a: int) -> bool:
        if d < 2:
            return False
        rules, canon = self.rules, self.canon
        proven, failed = self.proven[a], self.failed[a]
        pending = []
        worst = 0
        acts = rules.actions(s)
        killer = self.killers.get((d, a))
        if killer is not None and killer in acts:
            acts.remove(killer)
            acts.insert(0, killer)
        for act in acts:
            res, nxt = rules.play(s, act)
            if res is not None:
                if res != a:
                    self.killers[(d, a)] = act
                    return False
                worst = max(worst, 1)
                continue
            c = canon.image(nxt)[0]
            if c[4] != a:
                # The attacker has no action and the defender moves again: not certifiable.
                self.killers[(d, a)] = act
                return False
            hit = proven.get(c)
            if hit is not None and hit[0] <= d - 1:
                worst = max(worst, hit[0] + 1)
                continue
            if failed.get(c, -1) >= d - 1:
                self.killers[(d, a)] = act
                return False
            pending.append((act, c))
        for act, c in pending:
            if not self.win(c, d - 1, a):
                self.killers[(d, a)] = act
                return False
            worst = max(worst, proven[c][0] + 1)
        self._store(s, worst, None, a)
        return True

    def _store(self, s: State, d: int, act: Act | None, a: int) -> None:
        hit = self.proven[a].get(s)
        if hit is None or d < hit[0]:
            self.proven[a][s] = (d, act)

    def _result(self, winner: str | None, plies: int | None, t0: float) -> ProofResult:
        size = sum(len(t) for t in self.proven) + sum(len(t) for t in self.failed)
        return ProofResult(self.rs.id, winner, plies, self.nodes, time.monotonic() - t0, size)

    def _tick(self) -> None:
        if self._node_limit is not None and self.nodes >= self._node_limit:
            raise BudgetExhausted(f"node budget of {self.max_nodes} spent")
        now = time.monotonic()
        if self._deadline is not None and now >= self._deadline:
            raise BudgetExhausted(f"time budget of {self.max_seconds:g} s spent")
        self._report(None)

    def _report(self, what: str | None, force: bool = False) -> None:
        if self.progress is None:
            return
        now = time.monotonic()
        if not force and now < self._next_report:
            return
        self._next_report = now + 2.0
        size = sum(len(t) for t in self.proven) + sum(len(t) for t in self.failed)
        line = f"{self.nodes:,} nodes, table {size:,}"
        self.progress(line if what is None else f"{what}: {line}")

    # --- state on disk ------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the table to ``path`` (npz), atomically: a temp file renamed over it."""
        path = Path(path)
        arrays: dict[str, np.ndarray] = {
            "meta": np.array([STATE_FORMAT, self.nodes, *self.done_depth], dtype=np.int64),
            "ruleset": np.array(self.rs.id),
        }
        for a in (0, 1):
            items = list(self.proven[a].items())
            arrays[f"proven{a}"] = pack_states([s for s, _ in items])
            arrays[f"proven{a}_d"] = np.array([v[0] for _, v in items], dtype=np.int32)
            arrays[f"proven{a}_act"] = np.array(
                [(-2, -2) if v[1] is None else v[1] for _, v in items], dtype=np.int16
            ).reshape(-1, 2)
            items_f = list(self.failed[a].items())
            arrays[f"failed{a}"] = pack_states([s for s, _ in items_f])
            arrays[f"failed{a}_d"] = np.array([v for _, v in items_f], dtype=np.int32)
        with atomic_file(path) as fh:
            np.savez_compressed(fh, **arrays)

    def load(self, path: str | os.PathLike[str]) -> None:
        """Merge a table saved by :meth:`save` for the same ruleset into this one."""
        try:
            data = np.load(path, allow_pickle=False)
            meta = data["meta"]
            ruleset = str(data["ruleset"])
        except (OSError, ValueError, KeyError) as exc:
            raise ProofStateError(f"proof state {path}: not a saved proof search ({exc})") from exc
        if int(meta[0]) != STATE_FORMAT:
            raise ProofStateError(f"proof state {path}: format {int(meta[0])}, expected 1")
        if ruleset != self.rs.id:
            raise ProofStateError(f"proof state {path}: ruleset {ruleset}, not {self.rs.id}")
        self.nodes = max(self.nodes, int(meta[1]))
        self.done_depth = [max(self.done_depth[a], int(meta[2 + a])) for a in (0, 1)]
        for a in (0, 1):
            acts = data[f"proven{a}_act"]
            for s, d, act in zip(
                unpack_states(data[f"proven{a}"]),
                data[f"proven{a}_d"].tolist(),
                acts.tolist(),
                strict=True,
            ):
                self._store(s, d, None if act[0] == -2 else (act[0], act[1]), a)
            failed = self.failed[a]
            for s, d in zip(
                unpack_states(data[f"failed{a}"]), data[f"failed{a}_d"].tolist(), strict=True
            ):
                if failed.get(s, -1) < d:
                    failed[s] = d


class ProofStateError(ValueError):
    """A saved proof state that cannot be loaded (corrupt, other format or ruleset)."""


def pack_states(states: list[State]) -> np.ndarray:
    out = np.zeros((len(states), 3), dtype=np.uint64)
    if states:
        out[:, 0] = np.array([s[0] for s in states], dtype=np.uint64)
        out[:, 1] = np.array([s[1] for s in states], dtype=np.uint64)
        out[:, 2] = np.array([s[2] | s[3] << 8 | s[4] << 16 for s in states], dtype=np.uint64)
    return out


def unpack_states(arr: np.ndarray) -> Iterator[State]:
    for x, o, m in arr.tolist():
        yield (x, o, m & 255, m >> 8 & 255, m >> 16)


def stderr_progress() -> Callable[[str], None] | None:
    """A progress printer: a tqdm status line in a terminal; otherwise (a log, a batch job)
    at most one plain line a minute, the first after a minute, so short runs print nothing."""
    if not sys.stderr.isatty():
        next_line = [time.monotonic() + 60.0]

        def log(line: str) -> None:
            now = time.monotonic()
            if now >= next_line[0]:
                next_line[0] = now + 60.0
                print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)

        return log
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return lambda line: print(line, file=sys.stderr)
    bar = tqdm(total=0, bar_format="{desc}", file=sys.stderr, leave=False)

    def show(line: str) -> None:
        bar.set_description_str(line)

    return show
