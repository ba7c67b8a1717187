"""Certify on a cluster: the strategy's subtrees built as Dask tasks, merged in a fixed order.

How the work is split. The proof search runs first, here (it is a small part of the work:
6 s of 40 on the 6x6 research ruleset). Then the strategy is walked from the root down to a
*frontier*: the entries of rank ``<= stop`` are not built here but collected, and ``stop``
is lowered by two plies (re-splitting every subtree one level deeper) until the frontier
holds at least :data:`FRONTIER` subtrees or the ranks left are too small to be worth a task.
Each frontier entry is one task, :func:`grow_subtree`: a fresh search loaded with this
process's table (one snapshot, the same bytes for every task) grows that entry's whole
strategy subtree and returns its entries.

Why the result never depends on the cluster. The frontier depends only on the ruleset and
the options (never on how many workers there are, or which finishes first); a task is a
pure function of its inputs (a killed worker's rerun returns the same bytes); and the merge
takes the subtrees in frontier order, the first one to contain a position giving its
entry. Ranks are least budgets, the same in every task, so a merged entry's successors are
entries of lower rank whichever task supplied them. Entries no longer reachable from the
root are dropped, then :meth:`~harness.cert.builder.Strategy.refine` and the layout run
as in a single-process certify. So ``--workers 1``, ``--workers 8``, a ``dask scheduler``
and a run that lost a worker give byte-identical certificates.

Which certificates are split. A search of fewer than ``split_above`` nodes (default
:data:`SPLIT_ABOVE`) is built the plain way, one walk with one table, here: it takes seconds,
and sharing one table finds more common positions (the 5x5 research certificate has 1,109
entries that way and 1,388 split). A bigger search is always split, with or without a
cluster (without one the tasks run one after another in this process). So which builder a
certificate gets depends on the ruleset and the options only, and ``certify`` run alone
writes byte for byte the certificate a cluster writes (:func:`build_strategy`).

Budgets. A task's fresh search gets the run's: its time limit as a wall-clock time, and
what is left of its node budget. In one process each task gets what the tasks before it
left; on a cluster, where they run at once, each gets all of it, and their sum is checked
when they are done. Either way the tasks' nodes are added to the run's search, and the
budget is spent where it would be in one search: :class:`BudgetExhausted`, exit 3.

>>> from harness.rules import Ruleset
>>> from harness.solver.proof import ProofSearch
>>> rs = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
>>> search = ProofSearch(rs)
>>> _ = search.prove(max_plies=9)
>>> plan = plan_split(search, 0)
>>> plan.stop, len(plan.frontier) > 0
(3, True)
>>> strategy = split_build(search, 0)     # no session: the same tasks, in this process
>>> len(strategy.entries)
123
"""

from __future__ import annotations

import copy
import io
import pickle
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.cert.builder import Strategy, StrategyError
from harness.cluster.store import digest_of, fetch, publish
from harness.cluster.tasks import TaskQueue
from harness.rules.ruleset import Ruleset
from harness.solver.proof import Act, BudgetExhausted, ProofSearch, State

FRONTIER = 32  # subtrees wanted; a constant, so the split never depends on the cluster
MIN_STOP = 3  # subtrees of rank 1 are single entries: never worth a task
# Searches of more nodes than this have their certificate split (6x6 research: 50,456 nodes,
# 34 s of building in one walk); the published smaller ones (all under 25,000) are not.
SPLIT_ABOVE = 40_000


@dataclass
class Plan:
    """The top of the strategy (built here) and the subtrees left for tasks, in order."""

    top: Strategy
    frontier: list[tuple[State, int]]
    stop: int
    starts: list[State]  # the root, or its successors when the defender moves first


def plan_split(
    search: ProofSearch,
    attacker: int,
    *,
    optimize: bool = True,
    full_rank: int = 5,
    frontier: int = FRONTIER,
) -> Plan:
    """Walk the strategy from the root, re-splitting one level deeper while the frontier
    has fewer than ``frontier`` subtrees."""
    top = Strategy.empty(search, attacker, optimize=optimize, full_rank=full_rank)
    cap = search.proven_budget(search.root(), attacker)
    if cap is None:
        raise StrategyError("the search has not proven the initial position")
    top.frontier = {}
    top._stop_rank = cap - 2
    top.enter_root()
    while len(top.frontier) < frontier and top._stop_rank - 2 >= MIN_STOP:
        top._stop_rank -= 2
        wave, top.frontier = top.frontier, {}
        for s, r in wave.items():
            top.grow(s, r)
    root = search.root()
    starts = [root] if root[4] == attacker else top._and_successors(root, cap)
    return Plan(top, list(top.frontier.items()), top._stop_rank, starts)


def snapshot(search: ProofSearch) -> bytes:
    """The search's table as bytes (the npz of :meth:`ProofSearch.save`)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table.npz"
        search.save(path)
        return path.read_bytes()


# One loaded table per worker process, copied into each task's search: a task never sees
# what another task added, so its result depends on its inputs alone.
_LOADED: dict[tuple[str, str], ProofSearch] = {}


def fresh_search(ruleset: str, table: bytes) -> ProofSearch:
    """A search of ``ruleset`` holding exactly the table ``table`` (and nothing learnt since)."""
    key = (ruleset, digest_of(table))
    template = _LOADED.get(key)
    if template is None:
        _LOADED.clear()
        template = ProofSearch(Ruleset.from_id(ruleset))
        template.load(io.BytesIO(table))
        _LOADED[key] = template
    search = copy.copy(template)  # shares the immutable turn generator and symmetry tables
    search.proven = [dict(t) for t in template.proven]
    search.failed = [dict(t) for t in template.failed]
    search.done_depth = list(template.done_depth)
    search.killers = {}
    return search


def grow_subtree(
    ruleset: str,
    table: bytes,
    attacker: int,
    state: State,
    rank: int,
    optimize: bool,
    full_rank: int,
    shared: str | None = None,
    deadline: tuple[float, float] | None = None,
    nodes: tuple[int, int] | None = None,
    progress: Callable[[int], None] | None = None,
):
    """One task: the whole strategy subtree of ``state`` (an entry of ``rank``), grown by a
    fresh search loaded from ``table``. Returns pickled ``(nodes, [(state, rank, action,
    successors), ...])``, the nodes it visited and its entries, through the scheduler or
    (``shared``) as a file by content hash.

    The certify run's budgets, which a fresh search does not have: ``deadline``, (wall-clock
    time, the budget in seconds), and ``nodes``, (nodes left, the budget); past either the
    task raises :class:`BudgetExhausted` as the run's own search would. ``progress`` (run
    here only, never shipped to a worker) is told the subtree's entries every thousand."""
    search = fresh_search(ruleset, fetch(table))
    if deadline is not None:
        search.keep_to(*deadline)
    if nodes is not None:
        search.keep_within(*nodes)
    start = search.nodes
    strategy = Strategy.empty(
        search, attacker, optimize=optimize, full_rank=full_rank, progress=progress
    )
    strategy.grow(state, rank)
    rows = [(s, r, act, strategy.successors[s]) for s, (r, act) in strategy.entries.items()]
    done = (search.nodes - start, rows)
    return publish(pickle.dumps(done, protocol=pickle.HIGHEST_PROTOCOL), shared)


def merge(plan: Plan, results: list[list[tuple[State, int, Act, list[State]]]]) -> Strategy:
    """The top plus each subtree in frontier order (first one wins), pruned to what the
    root reaches."""
    top = plan.top
    entries, successors = dict(top.entries), dict(top.successors)
    for rows in results:
        for s, r, act, succs in rows:
            if s not in entries:
                entries[s] = (r, act)
                successors[s] = succs
            elif entries[s][0] != r:
                raise StrategyError("two subtrees gave one position two ranks")
    search, attacker = top.search, top.attacker
    keep: dict[State, None] = {}
    stack = list(reversed(plan.starts))
    while stack:
        s = stack.pop()
        if s in keep:
            continue
        if s not in entries:
            raise StrategyError("a merged entry has a successor no subtree supplied")
        keep[s] = None
        stack.extend(reversed(successors[s]))
    merged = Strategy.empty(search, attacker, optimize=top._optimize, full_rank=top._full_rank)
    for s in sorted(keep, key=lambda s: (entries[s][0], s)):
        merged.entries[s] = entries[s]
        merged.successors[s] = successors[s]
    return merged


def split_build(
    search: ProofSearch,
    attacker: int,
    session=None,
    *,
    optimize: bool = True,
    full_rank: int = 5,
    frontier: int = FRONTIER,
    progress: bool | None = None,
    on_submit: Callable[[list], None] | None = None,
    say: Callable[[str], None] | None = None,
) -> Strategy:
    """The strategy of ``attacker``, its frontier subtrees grown as tasks of ``session``
    (a :class:`harness.cluster.Session`; None: one after another in this process).

    ``say`` is given a status line as the build goes (:func:`~harness.solver.proof.
    stderr_progress`: a terminal's status line, or one line a minute in a log): a big
    certificate's subtrees take more than an hour on 5x5 c8 ringout, which would otherwise
    pass in silence outside a terminal."""
    say = say or (lambda line: None)
    say("building: the top of the strategy, down to its subtrees")
    plan = plan_split(search, attacker, optimize=optimize, full_rank=full_rank, frontier=frontier)
    count = len(plan.frontier)
    say(f"building: {count} subtrees of rank <= {plan.stop} to grow")
    table = snapshot(search)
    rs = search.rs.id
    shared = None
    # The run's time budget goes to every task as a wall-clock time, and what is left of
    # its node budget too: here each task gets what the ones before it left; on a cluster,
    # where they run at once, each gets all of it, and their sum is checked at the end.
    at = search.wall_deadline()
    deadline = None if at is None else (at, search.max_seconds)
    left = search.nodes_left()
    if session is None:
        done = []
        used = 0  # nodes the tasks so far visited
        for i, (s, r) in enumerate(plan.frontier, 1):
            nodes = None if left is None else (left - used, search.max_nodes)

            def within(n: int, i: int = i) -> None:
                say(f"building: subtree {i} of {count}, {n:,} entries")

            blob = grow_subtree(
                rs, table, attacker, s, r, optimize, full_rank, None, deadline, nodes, within
            )
            done.append(pickle.loads(fetch(blob)))
            used += done[-1][0]
            say(f"building: {i} of {count} subtrees grown")
    else:
        store = session.store
        if store is not None:
            shared = str(store.root)
            table_arg = store.put(table)
        else:
            table_arg = session.client.scatter(table, broadcast=True)
        with session.bar(count, "certify", unit="subtree", progress=progress) as bar:
            queue = TaskQueue(session, bar)
            futures = [
                queue.submit(
                    i,
                    grow_subtree,
                    rs,
                    table_arg,
                    attacker,
                    s,
                    r,
                    optimize,
                    full_rank,
                    shared,
                    deadline,
                    None if left is None else (left, search.max_nodes),
                    key=f"certify-subtree-{i:04d}-{rs}",
                )
                for i, (s, r) in enumerate(plan.frontier)
            ]
            if on_submit is not None:
                on_submit(futures)
            ends, grown = {}, 0
            for end in queue:
                ends[end.tag] = end
                if end.ok:
                    grown += 1
                    say(f"building: {grown} of {count} subtrees grown")
        failed = [i for i in range(count) if not ends[i].ok]
        if failed:
            exc = ends[failed[0]].error
            if isinstance(exc, BudgetExhausted):
                raise exc
            s, r = plan.frontier[failed[0]]
            raise StrategyError(
                f"the subtree task {failed[0]} (an entry of rank {r}) failed on the cluster: "
                f"{type(exc).__name__}: {exc}"
            )
        done = [pickle.loads(fetch(ends[i].value)) for i in range(count)]
    spent = sum(n for n, _ in done)
    search.nodes += spent  # the run's count is every node visited for it
    # As here, where the task that reaches the limit raises: the budget is spent when the
    # node that reaches it is visited.
    if left is not None and spent and spent >= left:
        raise BudgetExhausted(f"node budget of {search.max_nodes} spent")
    say(f"building: merging {count} subtrees")
    strategy = merge(plan, [rows for _, rows in done])
    if optimize:
        strategy.refine()
    return strategy


def build_strategy(
    search: ProofSearch,
    attacker: int,
    session=None,
    *,
    split_above: int = SPLIT_ABOVE,
    optimize: bool = True,
    full_rank: int = 5,
    progress: bool | None = None,
    say: Callable[[str], None] | None = None,
    on_submit: Callable[[list], None] | None = None,
) -> Strategy:
    """The certificate's strategy, as ``certify`` builds it: split into subtree tasks (on
    ``session``, or here when it is None) when the search took more than ``split_above``
    nodes, else one plain walk here. The choice never depends on ``session``."""
    if search.nodes > split_above:
        return split_build(
            search,
            attacker,
            session,
            optimize=optimize,
            full_rank=full_rank,
            progress=progress,
            on_submit=on_submit,
            say=say,
        )
    strategy = Strategy.build(
        search,
        attacker,
        optimize=optimize,
        full_rank=full_rank,
        progress=None if say is None else (lambda n: say(f"building: {n:,} entries")),
    )
    if optimize:
        strategy.refine()
    return strategy
