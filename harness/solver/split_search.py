"""The proof search split into Dask tasks: ``solve --method proof --workers N`` and friends.

The single-process search (:class:`~harness.solver.proof.ProofSearch`) deepens one table
from the root. Split, the root is one *job*: a task searches its position with a fresh
table and a node budget (``task_nodes``) and returns *proven in r plies*, *no win within the
plies left* or *open* (its budget ran out). An open job is split here, in the coordinator:
its children (the canonical positions after each action) become jobs with one ply less,
submitted at once; an answer travels up the job tree by the AND-OR rules the search itself
uses:

* the attacker's node: an action that wins at once proves it in 1; otherwise it is proven
  in 1 + the least rank of its proven children once every child is decided, and has no win
  when none of them has;
* the defender's node: a reply that wins or draws at once, or leaves the attacker without
  an action (not certifiable, as in the search), means no win; otherwise it is proven in the
  largest of 1 + its children's ranks (1 for a reply that loses at once) once all are
  proven, and has no win as soon as one child has none (its other jobs are cancelled);
* a node with fewer than 2 plies left and no immediate win has no win.

The bound deepens as in the single-process search (1, 2, 3, … plies, x's wins on odd
plies and o's on even ones when x moves first), a fresh job tree per bound, so the first
bound proven is the least: the value and plies are those of the single-process search, and
they never depend on the cluster, on the order tasks finish, or on a worker lost and rerun
(a task is a pure function of its inputs, its budget counted in nodes, not seconds). Only
the total of nodes varies (cancelled tasks). A bound the root's own task settles costs one
task, so the shallow bounds are cheap.

What it does not do: tasks share no table (a position two tasks meet is searched twice),
and the certificate builder still needs a single-process search's table, so ``certify``
does not use this split (:mod:`harness.cert.split` splits its building instead).

>>> from harness.rules import Ruleset
>>> rs = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
>>> found = split_prove(rs, 9, task_nodes=200)        # no session: the tasks run here
>>> found.winner, found.plies, found.tasks > 1
('x', 7, True)
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.cluster.tasks import TaskQueue
from harness.rules.position import PLAYERS
from harness.rules.ruleset import Ruleset
from harness.solver.proof import BudgetExhausted, ProofSearch, State

TASK_NODES = 200_000  # a task's node budget: ~20 s of the scalar search
PROVEN, NO_WIN, OPEN = "proven", "no win", "open"


def prove_task(ruleset: str, attacker: int, state: State, plies: int, max_nodes: int):
    """One task: ``(outcome, rank, nodes)`` for ``attacker`` from canonical ``state`` within
    ``plies`` (``rank`` the least plies of the win when proven), by a fresh search."""
    search = ProofSearch(Ruleset.from_id(ruleset), max_nodes=max_nodes)
    try:
        rank = search.least_win(state, attacker, plies)
    except BudgetExhausted:
        return OPEN, None, search.nodes
    return (NO_WIN, None, search.nodes) if rank is None else (PROVEN, rank, search.nodes)


@dataclass
class Job:
    state: State
    plies: int
    parent: int | None
    status: str | None = None  # PROVEN or NO_WIN once decided
    rank: int | None = None
    kids: list[int] = field(default_factory=list)
    floor: int = 0  # a defender's node: the rank its immediately losing replies give


@dataclass
class SplitResult:
    """What :func:`split_prove` found: ``winner`` None when neither player wins within
    ``max_plies``."""

    ruleset: str
    winner: str | None
    plies: int | None
    nodes: int
    tasks: int
    splits: int
    seconds: float


class _Tree:
    """The job tree of one attacker, and the rules that decide its nodes."""

    def __init__(self, search: ProofSearch, attacker: int, root: State, plies: int, key: str):
        self.search, self.a = search, attacker
        self.jobs = [Job(root, plies, None)]
        self.key = key  # unique to this tree: Dask would hand back a live task of the same key

    def split(self, i: int) -> list[int]:
        """Expand open job ``i`` into child jobs (returned); may decide ``i`` at once."""
        job, a, rules, canon = self.jobs[i], self.a, self.search.rules, self.search.canon
        attacker_moves = job.state[4] == a
        children: dict[State, None] = {}
        for act in rules.actions(job.state):
            res, nxt = rules.play(job.state, act)
            if res is not None:
                if res == a and attacker_moves:
                    return self.decide(i, PROVEN, 1)
                if res != a and not attacker_moves:
                    return self.decide(i, NO_WIN)
                if res == a:
                    job.floor = 1
                continue
            c = canon.image(nxt)[0]
            if not attacker_moves and c[4] != a:
                return self.decide(i, NO_WIN)  # the attacker would have no action
            children[c] = None
        if job.plies < 2:
            return self.decide(i, NO_WIN)
        if not children:
            return self.decide(i, NO_WIN) if attacker_moves else self.decide(i, PROVEN, job.floor)
        for c in children:
            job.kids.append(len(self.jobs))
            self.jobs.append(Job(c, job.plies - 1, i))
        return list(job.kids)

    def decide(self, i: int, status: str, rank: int | None = None) -> list[int]:
        """Record job ``i``'s answer and carry it up as far as it decides ancestors."""
        while True:
            job = self.jobs[i]
            job.status, job.rank = status, rank
            if job.parent is None:
                return []
            i = job.parent
            parent = self.jobs[i]
            if parent.status is not None:
                return []
            kids = [self.jobs[k] for k in parent.kids]
            if parent.state[4] == self.a:  # the attacker's: wait for every child
                if any(k.status is None for k in kids):
                    return []
                ranks = [k.rank for k in kids if k.status == PROVEN]
                status, rank = (PROVEN, 1 + min(ranks)) if ranks else (NO_WIN, None)
            else:
                if job.status == NO_WIN:
                    status, rank = NO_WIN, None
                elif all(k.status == PROVEN for k in kids):
                    status, rank = PROVEN, max([parent.floor] + [1 + k.rank for k in kids])
                else:
                    return []

    def live(self, i: int) -> bool:
        """Whether job ``i``'s answer still matters (no ancestor is decided)."""
        while i is not None:
            if self.jobs[i].status is not None:
                return False
            i = self.jobs[i].parent
        return True


def split_prove(
    rs: Ruleset,
    max_plies: int,
    session=None,
    *,
    attackers: tuple[int, ...] = (0, 1),
    task_nodes: int = TASK_NODES,
    max_seconds: float | None = None,
    max_nodes: int | None = None,
    progress: bool | None = None,
    say: Callable[[str], None] | None = None,
) -> SplitResult:
    """The least win within ``max_plies`` for the first of ``attackers`` that has one, with
    the search split into tasks of ``task_nodes`` nodes on ``session`` (a
    :class:`harness.cluster.Session`; None: the same tasks one after another here).

    Raises :class:`BudgetExhausted` when ``max_seconds`` or ``max_nodes`` (the nodes of the
    tasks finished so far) runs out, saying how far it got."""
    t0 = time.monotonic()
    search = ProofSearch(rs)
    root = search.root()
    totals = {"nodes": 0, "tasks": 0, "splits": 0}
    limits = (t0, max_seconds, max_nodes)
    run = uuid.uuid4().hex[:12]
    for d in range(1, max_plies + 1):
        for a in attackers:
            if (d % 2 == 1) != (root[4] == a):
                continue  # a win for a ends on a's own action
            tree = _Tree(search, a, root, d, f"proof-{rs.id}-{run}-{PLAYERS[a]}{d}")
            _run(tree, rs.id, session, task_nodes, limits, totals, progress, say)
            top = tree.jobs[0]
            if top.status == PROVEN:
                seconds = time.monotonic() - t0
                return SplitResult(rs.id, PLAYERS[a], top.rank, seconds=seconds, **totals)
    return SplitResult(rs.id, None, None, seconds=time.monotonic() - t0, **totals)


def _run(tree, ruleset, session, task_nodes, limits, totals, progress, say):
    """Run one attacker's job tree to its root's answer."""
    a = tree.a
    t0, max_seconds, max_nodes = limits

    def over_budget() -> str | None:
        if max_seconds is not None and time.monotonic() - t0 >= max_seconds:
            return f"time budget of {max_seconds:g} s spent"
        if max_nodes is not None and totals["nodes"] >= max_nodes:
            return f"node budget of {max_nodes:,} spent"
        return None

    def spent(why: str) -> BudgetExhausted:
        decided = sum(1 for j in tree.jobs if j.status is not None)
        return BudgetExhausted(
            f"{why} ({PLAYERS[a]} within {tree.jobs[0].plies} plies: {totals['tasks']:,} "
            f"tasks, {decided:,} of {len(tree.jobs):,} jobs decided, {totals['nodes']:,} nodes)"
        )

    def settle(i: int, outcome: tuple) -> list[int]:
        status, rank, nodes = outcome
        totals["nodes"] += nodes
        totals["tasks"] += 1
        if not tree.live(i):
            return []
        if status == OPEN:
            totals["splits"] += 1
            return tree.split(i)
        return tree.decide(i, status, rank)

    if session is None:
        todo = [0]
        while todo and tree.jobs[0].status is None:
            i = todo.pop(0)
            if not tree.live(i):
                continue
            why = over_budget()
            if why:
                raise spent(why)
            job = tree.jobs[i]
            todo.extend(settle(i, prove_task(ruleset, a, job.state, job.plies, task_nodes)))
        return

    def submit(i: int) -> None:
        job = tree.jobs[i]
        queue.submit(
            i, prove_task, ruleset, a, job.state, job.plies, task_nodes, key=f"{tree.key}-{i}"
        )

    with session.bar(1, f"proof {PLAYERS[a]}", unit="task", progress=progress) as bar:
        queue = TaskQueue(session, bar)
        submit(0)
        for end in queue:
            i = end.tag
            if not end.ok:
                if not tree.live(i):
                    continue
                exc = end.error
                raise RuntimeError(
                    f"the proof task for job {i} failed on the cluster: {type(exc).__name__}: {exc}"
                )
            new = settle(i, end.value)
            if tree.jobs[0].status is not None:
                break
            why = over_budget()
            if why:
                raise spent(why)
            # Jobs under a node decided meanwhile: cancel what is queued for them.
            queue.cancel(lambda j: not tree.live(j))
            bar.add(len(new))
            for k in new:
                submit(k)
            if say is not None:
                say(f"{PLAYERS[a]}: {totals['tasks']:,} tasks, {totals['nodes']:,} nodes")


__all__ = ["SplitResult", "TASK_NODES", "prove_task", "split_prove"]
