"""The kernel cost model, the declaration splitter, and the renderer's option allow-list."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.lean import certdata as lean_certdata
from harness.lean import model as M
from harness.lean import readback, sizing
from harness.lean import render as R
from harness.lean import templating as lean_templating
from harness.lean.codec import Cfg
from harness.rules import Ruleset

sys.path.insert(0, str(Path(__file__).parent))
import tinycert  # noqa: E402

UNITS = sorted(M.UNIT_COSTS)


def _meter(counts: dict[str, int], lookups: dict[str, int] | None = None) -> M.Meter:
    m = M.Meter()
    for u, n in counts.items():
        m.add(u, n)
    for u, n in (lookups or {}).items():
        for v in M.VARIANTS:
            m.add_lookup(v, u, n)
    return m


counts = st.dictionaries(st.sampled_from(UNITS), st.integers(0, 10**6), max_size=len(UNITS))


@settings(max_examples=200, deadline=None)
@given(a=counts, b=counts, unit=st.sampled_from(UNITS), extra=st.integers(1, 1000))
def test_estimates_are_monotone_in_the_work_counted(a, b, unit, extra):
    for v in M.VARIANTS:
        base = M.estimate(_meter(a), v)
        more = _meter(a)
        more.add(unit, extra)
        assert M.estimate(more, v) >= base
        if M.UNIT_COSTS[unit][M.VARIANTS.index(v)] > 0:
            assert M.estimate(more, v) > base
        both = _meter(a)
        both.merge(_meter(b))
        assert M.estimate(both, v) >= max(base, M.estimate(_meter(b), v))


def test_unit_costs_are_counts_of_kernel_steps():
    for unit, costs in M.UNIT_COSTS.items():
        assert all(isinstance(c, int) and c >= 0 for c in costs), unit
    assert M.SCALE > 0


def test_an_entry_with_more_replies_is_estimated_heavier():
    """On a real ruleset: the work counted grows with the replies expanded."""
    cfg = Cfg(4, 4, 8)
    s = M.initial(cfg)
    few, many = M.Meter(), M.Meter()
    M.node_ok(cfg, 0, lambda _: True, M.fuel_of(cfg), M.step(cfg, s, 0).next, few)
    for a in (0, 5):
        M.node_ok(cfg, 0, lambda _: True, M.fuel_of(cfg), M.step(cfg, s, a).next, many)
    assert many.work["reply"] > few.work["reply"]
    for v in M.VARIANTS:
        assert M.estimate(many, v) > M.estimate(few, v)


@settings(max_examples=300, deadline=None)
@given(
    weights=st.lists(st.integers(0, 50), max_size=40),
    budget=st.integers(1, 120),
    cap=st.one_of(st.none(), st.integers(1, 8)),
    overhead=st.integers(0, 5),
)
def test_pack_covers_in_order_under_budget_with_fewest_runs(weights, budget, cap, overhead):
    runs = sizing.pack(weights, budget, cap, overhead)
    assert [i for r in runs for i in r] == list(range(len(weights)))
    for r, w in zip(runs, sizing.run_weights(weights, runs, overhead), strict=True):
        assert len(r) >= 1
        assert w <= budget or len(r) == 1
        assert cap is None or len(r) <= cap
    # Fewest runs: a dynamic programme over all contiguous cuttings agrees.
    best = [0] + [10**9] * len(weights)
    for j in range(1, len(weights) + 1):
        for i in range(j):
            ok = overhead + sum(weights[i:j]) <= budget or j - i == 1
            if ok and (cap is None or j - i <= cap):
                best[j] = min(best[j], best[i] + 1)
    assert len(runs) == best[len(weights)]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    cfg = Cfg.of(Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"))
    winner, chosen = tinycert.solve(cfg)
    out = tmp_path_factory.mktemp("tiny")
    tinycert.write(cfg, out / "cert", winner, chosen, per_shard=25, canonical_images=True)
    return out / "cert"


@pytest.mark.parametrize("budget", [40_000, 200_000, sizing.BUDGET])
def test_declarations_stay_under_the_budget_and_still_check(tmp_path, tiny, budget):
    summary = R.render(tiny, tmp_path / "Generated", check=True, budget=budget)
    parts = [d for d in summary["declarations"] if ".Shard" in d["module"]]
    assert parts and all(d["estimated_steps"] <= budget for d in parts)
    if budget == 40_000:
        assert len(parts) > len(summary["modules"])  # the budget really split shards
    cert = readback.read_back(tmp_path / "Generated")
    assert cert.canonical() == lean_certdata.read_certificate(tiny).canonical()
    # The mirror of the rendered layout (blocks and separators) accepts, and it is the tree
    # the modules hold: every rendered entry is found in it.
    cert = lean_certdata.read_certificate(tiny)
    lean_certdata.expand(cert)
    R.weigh(cert, budget, progress=False)
    assert R.mirror_check(cert) == (True, "accepted")
    for shard, tree in zip(cert.shards, R.shard_trees(cert), strict=True):
        keys = [e.key for e in M.tree_entries(tree)]
        assert keys == sorted(k for k, _, _ in shard.rendered())


def test_lookups_cost_less_with_the_lower_shards_first(tiny):
    cert = lean_certdata.read_certificate(tiny)
    lean_certdata.expand(cert)
    R.weigh(cert, progress=False)
    v1 = sum(sum(s.weights_v1) for s in cert.shards)
    v2 = sum(sum(s.weights) for s in cert.shards)
    assert v2 * 2 < v1


def test_render_refuses_options_outside_the_allow_list(tmp_path, tiny, monkeypatch):
    R.check_options("set_option maxRecDepth 100000 in\nset_option maxHeartbeats 0 in\n", "x")
    with pytest.raises(lean_certdata.RenderError, match="line 2: set_option debug.skipKernelTC"):
        R.check_options("-- ok\nset_option debug.skipKernelTC true\n", "Shard0000.lean")
    templates = tmp_path / "templates"
    shutil.copytree(lean_templating.TEMPLATES, templates)
    shard = templates / "shard.lean.jinja"
    shard.write_text(
        shard.read_text().replace("open Pop\n", "open Pop\nset_option debug.skipKernelTC true\n", 1)
    )
    monkeypatch.setattr(lean_templating, "TEMPLATES", templates)
    with pytest.raises(lean_certdata.RenderError, match="Shard0000.lean line .*debug.skipKernelTC"):
        R.render(tiny, tmp_path / "Generated")
    assert not (tmp_path / "Generated").exists()
