"""Fixtures shared by the test folders."""

from __future__ import annotations

import numpy as np
import pytest

from harness.solver import lean


@pytest.fixture
def leaky_key_filters(monkeypatch):
    """Call it to have the lean solver's key filters made at every ply (not only once half
    the classes are decided) and let half of the keys outside their sets through at random
    besides, as a full filter would: a solve must not depend on which keys get through.
    The call gives the list of the sets of value codes each filter is made of."""
    made: list = []

    def leak() -> list:
        monkeypatch.setattr(lean, "FILTER_OPEN", 1.0)
        monkeypatch.setattr(lean.KeyFilter, "may_hold", leaky)
        monkeypatch.setattr(lean.KeyFilter, "of_store", classmethod(counted))
        return made

    rng = np.random.default_rng(0)
    real_hold = lean.KeyFilter.may_hold
    real_of_store = lean.KeyFilter.of_store.__func__

    def leaky(self, keys):
        return real_hold(self, keys) | (rng.random(len(keys)) < 0.5)

    def counted(cls, store, values, kinds, count):
        made.append(kinds)
        return real_of_store(cls, store, values, kinds, count)

    return leak
