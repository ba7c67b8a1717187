"""Fixtures shared by the test folders."""

from __future__ import annotations

import numpy as np
import pytest

from harness.solver.compact import store as compact_store


@pytest.fixture
def leaky_key_filters(monkeypatch):
    """Call it to have the compact solver's key filters made at every ply (not only once half
    the classes are decided) and let half of the keys outside their sets through at random
    besides, as a full filter would: a solve must not depend on which keys get through.
    The call gives the list of the sets of value codes each filter is made of."""
    made: list = []

    def leak() -> list:
        set_everywhere(monkeypatch, "FILTER_OPEN", 1.0)
        monkeypatch.setattr(compact_store.KeyFilter, "may_hold", leaky)
        monkeypatch.setattr(compact_store.KeyFilter, "of_store", classmethod(counted))
        return made

    rng = np.random.default_rng(0)
    real_hold = compact_store.KeyFilter.may_hold
    real_of_store = compact_store.KeyFilter.of_store.__func__

    def leaky(self, keys):
        return real_hold(self, keys) | (rng.random(len(keys)) < 0.5)

    def counted(cls, store, values, kinds, count):
        made.append(kinds)
        return real_of_store(cls, store, values, kinds, count)

    return leak


def set_everywhere(monkeypatch, name: str, value) -> None:
    """Set ``name`` to ``value`` in every module of the compact solver (and the class index
    it searches with) that binds it: a constant or function is imported by the modules that
    use it, so each binding is set."""
    import sys

    bound = [
        module
        for key, module in list(sys.modules.items())
        if (key.startswith("harness.solver.compact.") or key == "harness.solver.classindex")
        and hasattr(module, name)
    ]
    assert bound, f"no module of the compact solver has {name}"
    for module in bound:
        monkeypatch.setattr(module, name, value)


@pytest.fixture(scope="session")
def compact_solution():
    """The single-process compact solve of a ruleset id, solved once per test run: what the
    other strong solves are compared with."""
    from harness.rules import Ruleset
    from harness.solver import compact

    cache: dict = {}

    def get(rid: str):
        if rid not in cache:
            cache[rid] = compact.solve(Ruleset.from_id(rid), progress=False)
        return cache[rid]

    return get


def assert_same_classes(a, b) -> None:
    """Two solutions agree class by class: keys, values, plies, colourings, orbits, and
    the initial position's value, plies and the positions counted."""
    assert np.array_equal(a.keys, b.keys)
    assert np.array_equal(a.result, b.result)
    assert np.array_equal(a.ply_table.astype(np.int64), b.ply_table.astype(np.int64))
    assert np.array_equal(a.sides, b.sides)
    assert np.array_equal(a.orbit, b.orbit)
    assert (a.value, a.plies, a.positions) == (b.value, b.plies, b.positions)
