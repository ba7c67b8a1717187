"""The proof-number tree in arrays against a plain recursive reading of the same tree:
numbers and ranks after incremental updates, the most-proving leaf, wide selection, and
compaction."""

from __future__ import annotations

import random

import numpy as np
import pytest

from harness.solver.pntree import INF, Tree

A = 0  # the attacker moves at turn 0


def reference(t: Tree, i: int) -> tuple[int, int, int]:
    """(pn, dn, rank) of node ``i`` read recursively from its leaves."""
    if t.kid0[i] < 0:
        return int(t.pn[i]), int(t.dn[i]), int(t.rank[i])
    kids = [reference(t, int(t.kid0[i]) + j) for j in range(int(t.nk[i]))]
    if t.turn[i] == A:
        pn, dn = min(k[0] for k in kids), min(INF, sum(k[1] for k in kids))
        rank = 1 + min((k[2] for k in kids if k[0] == 0), default=0)
    else:
        pn, dn = min(INF, sum(k[0] for k in kids)), min(k[1] for k in kids)
        rank = 1 + max(k[2] for k in kids)
    if pn == 0:
        return 0, INF, rank
    if dn == 0:
        return INF, 0, 0
    return pn, dn, 0


def random_value(rng: random.Random, solved: float) -> tuple[int, int, int]:
    roll = rng.random()
    if roll < solved / 2:
        return 0, INF, rng.randint(1, 4)  # proven, with a rank
    if roll < solved:
        return INF, 0, 0
    return rng.randint(1, 5), rng.randint(1, 5), 0


def grow(seed: int, expansions: int = 60, solved: float = 0.3) -> Tree:
    """A tree grown as the search grows it: a selected leaf gets children, then update."""
    rng = random.Random(seed)
    t = Tree(A, capacity=4)
    t.add_root((0, 0, 0, 0, 0), rem=20, pn=1, dn=1)
    for _ in range(expansions):
        if t.pn[0] == 0 or t.dn[0] == 0:
            break
        leaf = int(t.select(1)[0])
        n = 0 if rng.random() < solved else rng.randint(1, 4)
        values = [random_value(rng, solved) for _ in range(n)]
        turn = 1 - int(t.turn[leaf])
        t.add_children(
            np.array([leaf]),
            np.array([n]),
            {
                "turn": np.full(n, turn, dtype=np.int8),
                "x": np.arange(n, dtype=np.uint64) + np.uint64(len(t)),
                "pn": np.array([v[0] for v in values], dtype=np.int64),
                "dn": np.array([v[1] for v in values], dtype=np.int64),
            },
        )
        kids = np.arange(len(t) - n, len(t))
        t.rank[kids] = [v[2] for v in values]
        if n == 0:  # no action: lost for the side to move at this leaf
            mover_attacks = t.turn[leaf] == A
            t.pn[leaf], t.dn[leaf] = (INF, 0) if mover_attacks else (0, INF)
            t.rank[leaf] = 0 if mover_attacks else 1
        t.update(np.array([leaf]))
    return t


def open_nodes(t: Tree, i: int = 0):
    """Every node reached from ``i`` without passing a solved node."""
    yield i
    if t.pn[i] and t.dn[i] and t.kid0[i] >= 0:
        for j in range(int(t.nk[i])):
            yield from open_nodes(t, int(t.kid0[i]) + j)


@pytest.mark.parametrize("seed", range(12))
def test_incremental_updates_match_the_recursive_numbers(seed):
    t = grow(seed)
    for i in open_nodes(t):
        if t.kid0[i] >= 0:
            want = reference(t, i)
            assert (int(t.pn[i]), int(t.dn[i])) == want[:2], i
            if want[0] == 0:
                assert int(t.rank[i]) == want[2], i


def most_proving(t: Tree) -> int:
    i = 0
    while t.kid0[i] >= 0:
        kids = [int(t.kid0[i]) + j for j in range(int(t.nk[i]))]
        key = t.pn if t.turn[i] == A else t.dn
        i = min(kids, key=lambda k: int(key[k]))  # the first on ties
    return i


# Trees whose root is still open, with solved nodes in them: the selection has to pass them.
OPEN_SEEDS = [s for s in range(200) if (lambda t: t.pn[0] and t.dn[0])(grow(s, 40, 0.05))][:12]


@pytest.mark.parametrize("seed", OPEN_SEEDS)
def test_one_leaf_is_the_most_proving_node_and_more_include_it(seed):
    t = grow(seed, 40, 0.05)
    assert len(OPEN_SEEDS) == 12
    assert ((t.pn[: len(t)] == 0) | (t.dn[: len(t)] == 0)).any()
    mpn = most_proving(t)
    assert t.select(1).tolist() == [mpn]
    wide = t.select(16)
    assert mpn in wide.tolist() and 1 <= len(wide) <= 16
    assert len(set(wide.tolist())) == len(wide)
    open_set = set(open_nodes(t))
    for leaf in wide.tolist():
        assert t.kid0[leaf] < 0 and t.pn[leaf] and t.dn[leaf] and leaf in open_set


@pytest.mark.parametrize("seed", OPEN_SEEDS)
def test_compaction_keeps_exactly_what_is_open(seed):
    t = grow(seed, 40, 0.05)
    before = len(t)
    kept = sorted(open_nodes(t))
    assert 1 < len(kept) < before  # something to keep and something to drop
    numbers = {t.state(i): (int(t.pn[i]), int(t.dn[i])) for i in kept}
    assert t.compact() == before - len(kept)
    assert len(t) == len(kept)
    # Every node left is reached from the root, once, and holds its old state and numbers.
    left = list(open_nodes(t))
    assert sorted(left) == list(range(len(t)))
    assert {t.state(i): (int(t.pn[i]), int(t.dn[i])) for i in left} == numbers
    for i in left:
        if t.kid0[i] >= 0:
            kids = range(int(t.kid0[i]), int(t.kid0[i]) + int(t.nk[i]))
            assert all(t.par[k] == i for k in kids)
    assert t.par[0] == -1


@pytest.mark.parametrize("seed", OPEN_SEEDS)
def test_shrinking_keeps_the_root_numbers_and_the_most_proving_leaf(seed):
    t = grow(seed, 40, 0.05)
    mpn = t.state(int(t.select(1)[0]))
    root = (int(t.pn[0]), int(t.dn[0]))
    numbers = {t.state(i): (int(t.pn[i]), int(t.dn[i])) for i in open_nodes(t)}
    target = max(2, len(numbers) // 3)
    # The children of the nodes the last selection passed always stay (and the root).
    t.compact()
    passed = t.seen[: len(t)] == t.clock
    must = 1 + int(passed[t.par[1 : len(t)]].sum())
    t.shrink(target)
    assert len(t) < len(numbers) and len(t) <= max(target, must)
    # What is left is a tree reached from the root, with the numbers it had.
    left = list(open_nodes(t))
    assert sorted(left) == list(range(len(t)))
    assert all(numbers[t.state(i)] == (int(t.pn[i]), int(t.dn[i])) for i in left)
    assert (int(t.pn[0]), int(t.dn[0])) == root
    assert t.state(int(t.select(1)[0])) == mpn


@pytest.mark.parametrize("seed", range(3))
def test_distinct_keeps_one_copy_of_each_node_in_order(seed):
    rng = random.Random(seed)
    t = Tree(A, capacity=64)
    nodes = [rng.randrange(64) for _ in range(200)]
    kept = t._distinct(np.array(nodes, dtype=np.int64)).tolist()
    assert len(kept) == len(set(kept)) == len(set(nodes))
    # A subsequence of the input: one of each node's copies, where it stood.
    rest = iter(nodes)
    assert all(any(v == w for w in rest) for v in kept)


@pytest.mark.parametrize("seed", OPEN_SEEDS[:6])
def test_update_reports_what_it_solved_deepest_first_in_row_order(seed):
    # The search records the nodes in this order, and its table evicts the oldest
    # disproofs first: another order is another search once the table is full.
    rng = random.Random(seed)
    t = grow(seed, 40, 0.05)
    leaves = t.select(64)
    for leaf in leaves.tolist():
        t.pn[leaf], t.dn[leaf] = (0, INF) if rng.random() < 0.5 else (INF, 0)
        t.rank[leaf] = 1
    proven, disproven, _ = t.update(leaves)
    for solved in (proven, disproven):
        order = sorted(solved.tolist(), key=lambda i: (-int(t.depth[i]), i))
        assert solved.tolist() == order
    assert len(proven) + len(disproven) > 0
