"""The proof-number search: answers against the depth-first search and a naive minimax,
certificates built from it and accepted by the checker, budgets, table bound, resuming."""

from __future__ import annotations

import random

import numpy as np
import pytest

from harness.cert.builder import Strategy
from harness.cert.checker import check_certificate
from harness.cert.format import write_certificate
from harness.rules import Position, Ruleset
from harness.rules.geometry import geometry
from harness.solver import pns
from harness.solver.memory import hugepage_switch
from harness.solver.pns import (
    BatchCanon,
    LineThreats,
    PNSearch,
    first_rows,
    prove_either,
    prove_subtree,
)
from harness.solver.pntree import Tree
from harness.solver.proof import BudgetExhausted, Canon, ProofSearch, ProofStateError, state_of
from harness.solver.sample import random_position, random_ruleset
from harness.solver.states import States

DEFAULT = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
RINGOUT = Ruleset.from_id("pop1-3x4-c3-ringout-continue-binempty-king-nozero-nojump")


def test_batch_canon_is_the_scalar_canon():
    rng = random.Random(5)
    for _ in range(20):
        rs = random_ruleset(rng)
        positions = [random_position(rng, rs) for _ in range(30)]
        st = States.from_positions(positions)
        bx, bo = BatchCanon(rs).images(st.x, st.o)
        canon = Canon(rs)
        want = [canon.image(state_of(p))[0][:2] for p in positions]
        assert list(zip(bx.tolist(), bo.tolist(), strict=True)) == want


@pytest.mark.parametrize("seed", range(5))
def test_first_rows_keeps_the_first_of_each_distinct_row_per_group(seed):
    # Small value ranges make many repeats, within a group and across groups.
    rng = np.random.default_rng(seed)
    n, groups = 3000, 40
    group = np.sort(rng.integers(0, groups, n))
    cols = (
        rng.integers(0, 6, n).astype(np.uint64),
        rng.integers(0, 3, n).astype(np.uint64),
        rng.integers(0, 2, n).astype(np.int8),
    )
    seen, want = set(), []
    for i in range(n):
        row = (int(group[i]), *(int(c[i]) for c in cols))
        if row not in seen:
            seen.add(row)
            want.append(i)
    assert first_rows(group, groups, cols).tolist() == want


@pytest.mark.parametrize("windows", [True, False])
def test_line_threats_count_each_line_as_the_definition_does(windows):
    # The reference is the definition, line by line: two of one player's checkers in the
    # line and none of the other's. Random rulesets cover every edge and board shape; the
    # window tables where the board has them, and the families of lines without.
    rng = random.Random(11)
    tables = 0
    wide = [
        Ruleset.from_id(f"pop1-6x6-c8-{edge}-continue-binempty-king-nozero-nojump")
        for edge in ("torus", "klein", "ringout")
    ]
    for rs in [random_ruleset(rng) for _ in range(25)] + wide:
        lines = geometry(rs).lines
        st = States.from_positions([random_position(rng, rs) for _ in range(60)])
        threats = LineThreats(rs, windows=windows)
        tables += threats.windows is not None
        ta, td = threats.count(st.o, st.x)
        assert threats.count(st.o, st.x, defender=False)[0].tolist() == ta.tolist()
        for i, (x, o) in enumerate(zip(st.x.tolist(), st.o.tolist(), strict=True)):
            na = [bin(o & ln.mask).count("1") for ln in lines]
            nd = [bin(x & ln.mask).count("1") for ln in lines]
            want_a = sum(a == 2 and d == 0 for a, d in zip(na, nd, strict=True))
            want_d = sum(d == 2 and a == 0 for a, d in zip(na, nd, strict=True))
            assert (int(ta[i]), int(td[i])) == (want_a, want_d), (rs.id, x, o)
    assert tables == (28 if windows else 0)


@pytest.mark.parametrize(
    ("rs", "attacker", "plies", "winner"),
    [(DEFAULT, 0, 9, "x"), (RINGOUT, 1, 8, "o"), (DEFAULT, 0, 5, None), (RINGOUT, 1, 3, None)],
)
def test_same_winner_as_the_depth_first_search(rs, attacker, plies, winner):
    got = PNSearch(rs, attacker, max_plies=plies).prove()
    dfs = ProofSearch(rs).prove(max_plies=plies, attackers=(attacker,))
    assert got.winner == dfs.winner == winner
    if winner is not None:
        assert dfs.plies <= got.plies <= plies  # a proof, not always the shortest


@pytest.mark.parametrize("seed", range(6))
def test_shallow_bounds_agree_with_the_depth_first_search_position_by_position(seed):
    # Bounds of one to four plies reach the leaves decided without children: those with one
    # ply left and the defender's with two (every reply expanded in the same iteration).
    # The roots are chosen so that the defender moves with an even number of plies left,
    # where both searches read a bound the same way.
    rng = random.Random(seed)
    rs = random_ruleset(rng)
    dfs = ProofSearch(rs)
    lines = geometry(rs).lines
    seen = set()
    while len(seen) < 40:
        s = dfs.canon.image(state_of(random_position(rng, rs)))[0]
        if any(b & ln.mask == ln.mask for b in s[:2] for ln in lines) or s in seen:
            continue  # the game is over on this board, or it was asked already
        seen.add(s)
        a = rng.randrange(2)
        plies = rng.choice((1, 3) if s[4] == a else (2, 4))
        got = PNSearch(rs, a, max_plies=plies, root=s).prove(deepen=False)
        want = dfs.win(s, plies, a)
        assert (got.winner is not None) == want, (rs.id, s, a, plies)


def check_search_certificate(search: PNSearch, winner: str, out) -> None:
    """Build the certificate of a finished search on DEFAULT and have the checker accept it."""
    strategy = Strategy.build(search.as_proof_search(), 0)
    # Ranks strictly decrease along the strategy: every successor has a smaller rank.
    for s, succs in strategy.successors.items():
        assert all(strategy.entries[t][0] < strategy.entries[s][0] for t in succs)
    write_certificate(
        out,
        DEFAULT.id,
        winner,
        Position.initial(DEFAULT).text(DEFAULT),
        strategy.layout(max_entries=200),
    )
    report = check_certificate(out)
    assert report.ok, report


def test_certificate_from_the_search_is_accepted(tmp_path):
    search = PNSearch(DEFAULT, 0, max_plies=9)
    result = search.prove()
    check_search_certificate(search, result.winner, tmp_path / "cert")


def test_node_budget_raises_and_the_table_resumes(tmp_path):
    first = PNSearch(DEFAULT, 0, max_plies=9, max_nodes=40)
    with pytest.raises(BudgetExhausted, match="node budget"):
        first.prove()
    first.save(tmp_path / "s.npz")
    again = PNSearch(DEFAULT, 0, max_plies=9)
    again.load(tmp_path / "s.npz")
    assert again.proven == first.proven and again.nodes == first.nodes
    assert again.prove().winner == "x"
    with pytest.raises(ProofStateError):
        PNSearch(DEFAULT, 1, max_plies=9).load(tmp_path / "s.npz")
    (tmp_path / "bad.npz").write_bytes(b"not a table")
    with pytest.raises(ProofStateError):
        PNSearch(DEFAULT, 0).load(tmp_path / "bad.npz")


@pytest.mark.parametrize("budget", [1, 37, 500, 5000])
def test_the_node_budget_is_exact_with_the_settled_replies(budget):
    # The 5x5 proof takes about 9,000 nodes, many of them replies settled in batches.
    rs = Ruleset.from_id("pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump")
    search = PNSearch(rs, 0, max_plies=9, max_nodes=budget)
    with pytest.raises(BudgetExhausted, match="node budget"):
        search.prove()
    assert search.nodes == budget


def test_time_budget_raises():
    with pytest.raises(BudgetExhausted, match="time budget"):
        PNSearch(
            Ruleset.from_id("pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"),
            0,
            max_plies=11,
            max_seconds=0.2,
        ).prove()


def test_bounded_table_still_proves():
    search = PNSearch(DEFAULT, 0, max_plies=9, max_table=16)
    assert search.prove().winner == "x"
    assert len(search.disproven) <= 16


def test_a_tree_cut_back_to_a_small_bound_still_proves_a_checked_certificate(tmp_path):
    search = PNSearch(DEFAULT, 0, max_plies=9, max_tree=600)
    result = search.prove()
    assert result.winner == "x" and search.shrunk > 0
    check_search_certificate(search, result.winner, tmp_path / "cert")


def test_a_small_tree_bound_keeps_the_batches_small(monkeypatch):
    # 2**16 nodes: batches of at most 64 leaves, so a batch's children stay a small part
    # of the bounded tree (without the bound the 5x5 proof's batches go past 64).
    rs = Ruleset.from_id("pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump")
    widths = []
    select = Tree.select

    def recording(self, k):
        widths.append(k)
        return select(self, k)

    monkeypatch.setattr(Tree, "select", recording)
    search = PNSearch(rs, 0, max_plies=7, max_tree=1 << 16)
    assert search.prove().winner == "x"
    assert max(widths) == 64
    widths.clear()
    assert PNSearch(rs, 0, max_plies=7).prove().winner == "x"
    assert max(widths) > 64


def test_subtree_of_a_root_child():
    search = PNSearch(DEFAULT, 0, max_plies=9)
    search.prove()
    rank, act = search.proven[search.root_state]
    ps = ProofSearch(DEFAULT)
    child = next(c for a, _, c in ps.children(search.root_state) if a == act)
    result, proofs = prove_subtree(DEFAULT, child, 0, rank - 1)
    assert result is not None and result.winner == "x" and child in proofs
    spent, _ = prove_subtree(DEFAULT, child, 0, rank - 1, max_nodes=1)
    assert spent is None


def test_prove_either_tries_both():
    result, _ = prove_either(RINGOUT, 8)
    assert (result.winner, result.attacker) == ("o", "o")
    none, _ = prove_either(RINGOUT, 3)
    assert none.winner is None


def test_ranks_decrease_in_the_table():
    search = PNSearch(DEFAULT, 0, max_plies=9)
    search.prove()
    ps = ProofSearch(DEFAULT)
    for s, (rank, act) in search.proven.items():
        if s[4] != 0 or act is None or rank == 1:
            continue
        child = next(c for a, _, c in ps.children(s) if a == act)
        assert search.proven[child][0] < rank
    assert np.all([r >= 1 for r, _ in search.proven.values()])


def test_dropping_solved_subtrees_changes_nothing_else(monkeypatch):
    # Compaction drops only nodes below solved ones, which are never selected again: the
    # search must visit the same nodes and prove the same table with or without it.
    monkeypatch.setattr(pns, "COMPACT_AT", 1 << 40)
    whole = PNSearch(DEFAULT, 0, max_plies=9)
    whole.prove()
    monkeypatch.setattr(pns, "COMPACT_AT", 16)
    dropped = []
    real = Tree.compact

    def compact(tree):
        dropped.append(real(tree))
        return dropped[-1]

    monkeypatch.setattr(Tree, "compact", compact)
    small = PNSearch(DEFAULT, 0, max_plies=9)
    small.prove()
    assert sum(dropped) > 0
    assert (small.nodes, small.generated) == (whole.nodes, whole.generated)
    assert small.proven == whole.proven and small.disproven == whole.disproven


def test_leaves_the_table_holds_are_settled_from_it_after_a_load(tmp_path):
    """Leaves are looked up only where the table's filter has their hash: a table that is
    loaded, or recorded into, must set it, or its proofs would be searched again."""
    first = PNSearch(DEFAULT, 0, max_plies=9)
    first.prove()
    first.save(tmp_path / "s.npz")
    states = list(first.proven) + list(first.disproven)
    again = PNSearch(DEFAULT, 0, max_plies=9)
    again.load(tmp_path / "s.npz")
    tree = again.tree = Tree(0)
    tree.add_root(states[0], 9, 1, 1)
    tree.add_children(
        np.array([0]),
        np.array([len(states)]),
        {
            name: np.array([s[i] for s in states])
            for i, name in enumerate(("x", "o", "xb", "ob", "turn"))
        },
    )
    leaves = np.arange(1, len(states) + 1)
    tree.rem[leaves] = 9  # deep enough for every proof; the disproofs hold for rem 9 or not
    bound = np.array([first.disproven.get(s, -1) >= 9 for s in states])
    settled_by_proof = np.array([s in first.proven for s in states])
    left = again._from_table(leaves)
    assert set(left.tolist()) == set(leaves[~(settled_by_proof | bound)].tolist())
    again.filter[:] = False  # a filter that forgot the table settles nothing
    tree.pn[leaves], tree.dn[leaves] = 1, 1
    assert len(again._from_table(leaves)) == len(leaves)


def test_a_search_asks_numpy_for_small_pages():
    """The tree's fresh rows must not fault in huge pages (memory.small_pages): the
    switch numpy's NUMPY_MADVISE_HUGEPAGE sets is off once a search exists."""
    switch = hugepage_switch()
    before = switch(True)
    try:
        PNSearch(DEFAULT, 0, max_plies=3)
        assert switch(True) is False
    finally:
        switch(before)
