"""The compact solver against today's retrograde solver, class by class, and its work folder."""

from __future__ import annotations

import errno
import json
import os
import random
import sys
import threading
import time

import numpy as np
import pytest

from harness.rules import Position, Ruleset
from harness.solver import budget, classindex, compact, retrograde, solution
from harness.solver.batch import engine
from harness.solver.compact import backward as compact_backward
from harness.solver.compact import columns as compact_columns
from harness.solver.compact import constants as compact_constants
from harness.solver.compact import driver as compact_driver
from harness.solver.compact import runner as compact_runner
from harness.solver.compact import store as compact_store
from harness.solver.compact import unplay as compact_unplay
from harness.solver.compact import workdir as compact_workdir
from harness.solver.sample import every_field_rulesets, random_position
from harness.solver.states import NONE, States
from tests.conftest import set_everywhere

# Every edge, both stuck rules, every movement and several patterns, zero and jump moves.
RULESETS = [
    "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-reincarnation-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-ringout-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-blocked-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-klein-continue-binempty-king-nozero-nojump",
    "pop1-3x3-c3-ringout-continue-binempty-king-nozero-nojump",
    "pop1-3x4-c3-klein-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-torus-draw-always-rook-zero-jump",
    "pop1-3x4-c4-reincarnation-draw-binempty-bishop-zero-nojump",
    "pop1-4x3-c4-blocked-continue-always-anywhere-nozero-nojump",
    "pop1-3x4-c3-ringout-continue-always-queen-nozero-nojump",
    "pop1-4x4-c3-klein-continue-nomove-king-nozero-nojump",
]


def assert_same(a: solution.Solution, b: solution.CompactSolution) -> None:
    order = np.argsort(a.keys)
    assert np.array_equal(a.keys[order], b.keys)
    assert np.array_equal(a.result[order], b.result)
    assert np.array_equal(a.ply_table[order].astype(np.int64), b.ply_table.astype(np.int64))
    assert np.array_equal(a.sides[order], b.sides)
    assert np.array_equal(a.orbit[order], b.orbit)
    assert (a.value, a.plies, a.positions, a.canonical) == (
        b.value,
        b.plies,
        b.positions,
        b.canonical,
    )


@pytest.mark.parametrize("rid", RULESETS)
def test_every_class_as_today(rid):
    rs = Ruleset.from_id(rid)
    assert_same(retrograde.solve(rs), compact.solve(rs, progress=False))


@pytest.mark.parametrize("rid", [RULESETS[2], RULESETS[9], RULESETS[8]])
def test_frontier_in_small_pieces_as_today(rid, monkeypatch):
    # Tiny gathers, scans and merge thresholds: a level is taken in many pieces and the
    # store grows by many merges while it is being read. The answer must not change.
    rs = Ruleset.from_id(rid)
    merges = []
    real_merge = compact_store.KeyStore.merge

    def counting_merge(self, new, values):
        merges.append(len(new))
        return real_merge(self, new, values)

    monkeypatch.setattr(compact_store.KeyStore, "merge", counting_merge)
    compact.solve(rs, progress=False)
    levels = len(merges)  # one merge a level with the defaults, at these sizes
    merges.clear()
    set_everywhere(monkeypatch, "PIECE", 7)
    set_everywhere(monkeypatch, "SCAN", 5)
    set_everywhere(monkeypatch, "PENDING_MIN", 3)
    small = compact.solve(rs, progress=False)
    assert len(merges) > 2 * levels  # several merges inside a level
    assert_same(retrograde.solve(rs), small)


@pytest.mark.parametrize("rid", [RULESETS[1], RULESETS[5], RULESETS[9]])
def test_a_class_reached_again_at_its_own_level_is_expanded_once(rid):
    # In pieces smaller than a level, a class given its other colouring by a class taken
    # before it is still to be taken, and is expanded once with both: fewer expansions than
    # with the whole level in one piece, and the same solution.
    rs = Ruleset.from_id(rid)
    whole = compact.solve(rs, progress=False, runner=compact_runner.InlineRunner(piece=1 << 40))
    pieces = compact.solve(rs, progress=False, runner=compact_runner.InlineRunner(piece=64))
    assert len(pieces.keys) <= pieces.expansions < whole.expansions
    today = retrograde.solve(rs)
    assert_same(today, whole)
    assert_same(today, pieces)


@pytest.mark.parametrize("rid", [RULESETS[2], RULESETS[9], RULESETS[10]])
def test_batches_on_threads_give_the_same_classes(rid, monkeypatch):
    # Small ranges, so that every piece, ply and sweep goes out as many batches at once.
    set_everywhere(monkeypatch, "EXPAND_RANGE", 16)
    set_everywhere(monkeypatch, "UNPLAY_BATCH", 8)
    set_everywhere(monkeypatch, "SWEEP_BATCH", 8)
    ran_on = set()
    real = compact_runner.expand_range

    def noting_thread(*args):
        ran_on.add(threading.get_ident())
        return real(*args)

    set_everywhere(monkeypatch, "expand_range", noting_thread)
    rs = Ruleset.from_id(rid)
    runner = compact_runner.InlineRunner(piece=256, threads=3)
    try:
        sol = compact.solve(rs, progress=False, runner=runner)
    finally:
        runner.close()
    assert threading.get_ident() not in ran_on and len(ran_on) > 1
    assert_same(retrograde.solve(rs), sol)


def test_threaded_batches_come_back_in_range_order_a_few_ahead():
    threads, n = 2, 12
    runner = compact_runner.InlineRunner(threads=threads)
    started = []

    def batch(lo, hi):
        started.append(lo)
        time.sleep(0.003 * (n - lo))  # later ranges finish first
        return lo

    try:
        for i, (lo, hi, got) in enumerate(
            runner._in_order(compact_runner.index_ranges(n, 1), batch)
        ):
            assert (lo, hi, got) == (i, i + 1, i)
            # Never more than two ranges a thread submitted past the one handed out.
            assert len(started) <= i + 1 + 2 * threads
    finally:
        runner.close()
    assert sorted(started) == list(range(n))


@pytest.mark.parametrize("seed", range(5))
def test_a_range_of_2_bit_values_as_single_lookups(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    packed = np.zeros((n + 3) // 4, dtype=np.uint8)
    compact_columns.set2(packed, np.arange(n), rng.integers(0, 4, n))
    lo = int(rng.integers(0, n))
    hi = int(rng.integers(lo, n + 1))
    got = compact_columns.get2_range(packed, lo, hi)
    assert got.tolist() == compact_columns.get2(packed, np.arange(lo, hi)).tolist()
    assert len(got) == hi - lo


@pytest.mark.parametrize("cost", [0, 10**9], ids=["always-unplay", "always-sweep"])
@pytest.mark.parametrize("rid", [RULESETS[3], RULESETS[8], RULESETS[10], RULESETS[12]])
def test_sweep_and_unplay_agree_with_today(rid, cost, monkeypatch):
    # Every ply un-played, or every ply swept forwards: the same classes, values and plies.
    sweeps = []
    real_sweep = compact_backward.sweep

    def counted(*args):
        sweeps.append(args[3])
        return real_sweep(*args)

    set_everywhere(monkeypatch, "UNPLAY_COST", cost)
    set_everywhere(monkeypatch, "UNPLAY_COST_FILTERED", cost)
    set_everywhere(monkeypatch, "sweep", counted)
    rs = Ruleset.from_id(rid)
    sol = compact.solve(rs, progress=False)
    assert (len(sweeps) == 0) if cost == 0 else (len(sweeps) == sol.deepest)
    assert_same(retrograde.solve(rs), sol)


def test_solution_interface_as_today():
    rs = Ruleset.from_id(RULESETS[1])
    a, b = retrograde.solve(rs), compact.solve(rs, progress=False)
    root = Position.initial(rs)
    assert b.rated_actions(root) == a.rated_actions(root)
    assert b.best_action(root) == a.best_action(root)
    assert b.principal_line() == a.principal_line()
    unknown = Position((0b111, 0), (0, 3), 0)
    assert b.value_of(unknown) == a.value_of(unknown) == (None, None)


def test_saved_lean_solution_loads_as_today(tmp_path):
    rs = Ruleset.from_id(RULESETS[0])
    b = compact.solve(rs, progress=False)
    back = solution.Solution.load(b.save(tmp_path / "s.npz"))
    assert (back.value, back.plies, back.positions) == (b.value, b.plies, b.positions)


def test_unplay_finds_every_true_parent():
    """Play every action of random positions; un-playing each result must propose the
    position it came from (the proposals are a superset, the forward check exact)."""
    rng = random.Random(7)
    checked = 0
    for rs in every_field_rulesets(rng):
        rs = rs.with_(rows=min(rs.rows, 4), cols=min(rs.cols, 4), checkers=min(rs.checkers, 5))
        eng = engine(rs)
        un = compact_unplay.Unplayer(eng)
        positions = [random_position(rng, rs) for _ in range(12)]
        states = States.from_positions(positions)
        me, them, mb, tb = states.mover_view()
        ex = eng.expand(me, them, mb, tb)
        live = np.flatnonzero(ex.result == NONE)
        if not len(live):
            continue
        rows, PM, PO, PMb, POb = un.parents(
            ex.me[live], ex.them[live], ex.mb[live], ex.tb[live], passed=False
        )
        found = set(
            zip(rows.tolist(), PM.tolist(), PO.tolist(), PMb.tolist(), POb.tolist(), strict=True)
        )
        for j, i in enumerate(live.tolist()):
            if ex.passed[i]:
                continue  # un-played with passed=True, below
            p = int(ex.parent[i])
            want = (j, int(me[p]), int(them[p]), int(mb[p]), int(tb[p]))
            assert want in found, (rs.id, positions[p])
            checked += 1
    assert checked > 500


def test_parent_keys_are_the_class_keys_of_the_parents(monkeypatch):
    """The un-player checks the proposals of a few landing squares at a time; in flushes
    of a few rows, parents and parent_keys must give every (row, parent) of one flush,
    keyed, and parent_keys through a filter those the filter keeps."""
    rs = Ruleset.from_id("pop1-4x4-c5-reincarnation-continue-binempty-king-nozero-nojump")
    rng = random.Random(11)
    eng = engine(rs)
    un = compact_unplay.Unplayer(eng)
    states = States.from_positions([random_position(rng, rs) for _ in range(40)])
    ex = eng.expand(*states.mover_view())
    live = np.flatnonzero(ex.result == NONE)
    after = (ex.me[live], ex.them[live], ex.mb[live], ex.tb[live])
    # Checked in one flush; then square by square, and once with a remainder left.
    set_everywhere(monkeypatch, "VERIFY_SLICE", 1 << 40)
    rows, PM, PO, PMb, POb = un.parents(*after, passed=False)
    assert len(rows) > 100
    want = sorted(zip(rows.tolist(), eng.class_keys(PM, PO, PMb, POb).tolist(), strict=True))
    for held in (23, len(live) // 2 + 1):
        set_everywhere(monkeypatch, "VERIFY_SLICE", held)
        got_rows, *boards = un.parents(*after, passed=False)
        got = sorted(zip(got_rows.tolist(), eng.class_keys(*boards).tolist(), strict=True))
        assert got == want
        got_rows, got_keys = un.parent_keys(*after, passed=False)
        assert got_rows.dtype == np.int32
        assert sorted(zip(got_rows.tolist(), got_keys.tolist(), strict=True)) == want
        # Through a filter (here: odd keys), in flushes of their own size.
        set_everywhere(monkeypatch, "VERIFY_SLICE", 1 << 40)
        set_everywhere(monkeypatch, "VERIFY_SLICE_FILTERED", held)
        got_rows, got_keys = un.parent_keys(
            *after, passed=False, keep=lambda keys: (keys & np.uint64(1)) == 1
        )
        got = sorted(zip(got_rows.tolist(), got_keys.tolist(), strict=True))
        assert got == [(row, key) for row, key in want if key % 2]


def test_out_of_core_same_answers_and_markers(tmp_path):
    rs = Ruleset.from_id(RULESETS[1])
    work = tmp_path / "work"
    b = compact.solve(rs, workdir=work, progress=False)
    assert isinstance(b.keys, np.memmap)
    assert_same(retrograde.solve(rs), b)
    done = json.loads((work / "complete.json").read_text())
    assert done["classes"] == b.classes and done["value"] == b.value
    assert b.disk_bytes > 8 * b.classes


def test_killed_after_enumeration_resumes(tmp_path):
    rs = Ruleset.from_id(RULESETS[2])
    work = tmp_path / "work"
    first = compact.solve(rs, workdir=work, progress=False)
    want = (first.value, first.plies, first.positions)
    # A run killed during the retrograde pass: counters half rewritten, no completion.
    np.memmap(work / "count.bin", dtype=np.uint8, mode="r+")[:] = 7
    (work / "complete.json").unlink()
    again = compact.solve(rs, workdir=work, progress=False)
    assert again.timings["enumerate"] == 0.0  # resumed from the checkpoint
    assert (again.value, again.plies, again.positions) == want
    assert_same(retrograde.solve(rs), again)


def _killed_after_the_save_of_ply(rs, work, ply, monkeypatch, then=None) -> None:
    """Run a solve in ``work`` that saves at every ply end and is killed (after ``then``)
    once ply ``ply`` is saved; the saves work normally afterwards."""
    set_everywhere(monkeypatch, "CHECKPOINT_SECONDS", 0.0)
    real_save = compact_workdir.PlyCheckpoint.__call__

    def save_then_die(self, k):
        real_save(self, k)
        if k == ply:
            if then is not None:
                then()
            raise KeyboardInterrupt

    monkeypatch.setattr(compact_workdir.PlyCheckpoint, "__call__", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        compact.solve(rs, workdir=work, progress=False)
    monkeypatch.setattr(compact_workdir.PlyCheckpoint, "__call__", real_save)


def test_killed_during_the_retrograde_pass_resumes_from_its_last_ply(tmp_path, monkeypatch):
    rs = Ruleset.from_id(RULESETS[1])
    work = tmp_path / "work"

    def half_of_ply_5():
        # Killed after the save, with ply 5 half done: values and counters moved on.
        for name in ("count", "values"):
            np.memmap(work / f"{name}.bin", mode="r+")[:16] = 3

    _killed_after_the_save_of_ply(rs, work, 4, monkeypatch, then=half_of_ply_5)
    assert json.loads((work / "retrograde.json").read_text())["ply"] == 4
    assert sorted(p.name for p in work.glob("*.ply*")) == ["count.ply4", "meta.ply4", "values.ply4"]
    again = compact.solve(rs, workdir=work, progress=False)
    assert again.resumed_at_ply == 4
    assert_same(retrograde.solve(rs), again)
    # Done: the saves are gone, and a later run starts the pass from the enumeration.
    assert not list(work.glob("*.ply*")) and not (work / "retrograde.json").exists()
    assert compact.solve(rs, workdir=work, progress=False).resumed_at_ply == 0


def _noting_widen(monkeypatch) -> list[str]:
    """Make ``Column.widen`` note the function that called it."""
    callers: list[str] = []
    real = compact_columns.Column.widen

    def noted(self):
        callers.append(sys._getframe(1).f_code.co_name)
        real(self)

    monkeypatch.setattr(compact_columns.Column, "widen", noted)
    return callers


# 3x3 c3 torus: counters up to 7, plies up to 11.
@pytest.mark.parametrize("top, where", [(4, "enumerate_classes"), (8, "retrograde")])
@pytest.mark.parametrize("folder", [False, True])
def test_a_counter_or_ply_past_a_byte_widens_the_column(top, where, folder, tmp_path, monkeypatch):
    rs = Ruleset.from_id(RULESETS[0])
    set_everywhere(monkeypatch, "BYTE_TOP", top)
    callers = _noting_widen(monkeypatch)
    sol = compact.solve(rs, workdir=tmp_path / "work" if folder else None, progress=False)
    assert callers == [where]
    assert sol.ply_table.dtype == np.uint16
    assert_same(retrograde.solve(rs), sol)
    if folder:
        enumerated = json.loads((tmp_path / "work" / "enumerated.json").read_text())
        assert enumerated["count"] == ("uint16" if where == "enumerate_classes" else "uint8")


def test_a_save_after_widening_resumes_with_the_wider_counter(tmp_path, monkeypatch):
    rs = Ruleset.from_id(RULESETS[0])
    work = tmp_path / "work"
    set_everywhere(monkeypatch, "BYTE_TOP", 8)  # widened before ply 8's decisions
    _killed_after_the_save_of_ply(rs, work, 10, monkeypatch)
    assert json.loads((work / "retrograde.json").read_text())["count"] == "uint16"
    again = compact.solve(rs, workdir=work, progress=False)
    assert again.resumed_at_ply == 10
    assert_same(retrograde.solve(rs), again)


def test_a_checkpoint_naming_an_unknown_counter_type_is_refused(tmp_path):
    rs = Ruleset.from_id(RULESETS[0])
    work = tmp_path / "work"
    compact.solve(rs, workdir=work, progress=False)
    mark = json.loads((work / "enumerated.json").read_text())
    (work / "enumerated.json").write_text(json.dumps({**mark, "count": "float64"}))
    with pytest.raises(compact.CompactError, match="counter type 'float64'; pass --fresh"):
        compact.solve(rs, workdir=work, progress=False)


def test_a_broken_save_is_not_resumed(tmp_path, monkeypatch):
    rs = Ruleset.from_id(RULESETS[1])
    work = tmp_path / "work"
    set_everywhere(monkeypatch, "CHECKPOINT_SECONDS", 0.0)
    monkeypatch.setattr(compact_workdir.PlyCheckpoint, "discard", staticmethod(lambda folder: None))
    compact.solve(rs, workdir=work, progress=False)
    ply = json.loads((work / "retrograde.json").read_text())["ply"]
    (work / f"values.ply{ply}").unlink()  # the marker names a set that is not whole
    again = compact.solve(rs, workdir=work, progress=False)
    assert again.resumed_at_ply == 0
    assert_same(retrograde.solve(rs), again)


def test_killed_during_enumeration_is_not_read_as_done(tmp_path):
    rs = Ruleset.from_id(RULESETS[1])
    work = tmp_path / "work"
    with pytest.raises(budget.BudgetExceeded):
        compact.solve(rs, workdir=work, max_positions=500, progress=False)
    assert not (work / "enumerated.json").exists() and not (work / "complete.json").exists()
    assert_same(retrograde.solve(rs), compact.solve(rs, workdir=work, progress=False))


def test_foreign_or_stray_folder_is_refused(tmp_path):
    a, b = (Ruleset.from_id(r) for r in RULESETS[:2])
    work = tmp_path / "work"
    compact.solve(a, workdir=work, progress=False)
    with pytest.raises(compact.CompactError, match="holds a solve of"):
        compact.solve(b, workdir=work, progress=False)
    assert compact.solve(b, workdir=work, fresh=True, progress=False).value == "x"
    # A folder of the same ruleset written by an older format is not read either.
    run = json.loads((work / "run.json").read_text())
    (work / "run.json").write_text(json.dumps({**run, "format": compact_constants.FORMAT - 1}))
    with pytest.raises(compact.CompactError, match="older format"):
        compact.solve(b, workdir=work, progress=False)
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "keys.bin").write_bytes(b"\0" * 64)
    with pytest.raises(compact.CompactError, match="unknown run"):
        compact.solve(a, workdir=stray, progress=False)


def test_unusable_folder_is_one_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(compact.CompactError, match="work folder"):
        compact.solve(Ruleset.from_id(RULESETS[0]), workdir=blocker / "sub", progress=False)


def test_full_disk_is_one_error(tmp_path, monkeypatch):
    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "posix_fallocate", full)
    with pytest.raises(compact.CompactError, match="No space left"):
        compact.solve(Ruleset.from_id(RULESETS[0]), workdir=tmp_path / "w", progress=False)
    assert not (tmp_path / "w" / "complete.json").exists()


def test_two_bit_values_round_trip():
    rng = np.random.default_rng(3)
    packed = np.zeros(250, dtype=np.uint8)
    idx = rng.permutation(1000)[:600]
    vals = rng.integers(0, 4, size=600).astype(np.uint8)
    compact_columns.set2(packed, idx, vals)
    assert np.array_equal(compact_columns.get2(packed, idx), vals)
    rest = np.setdiff1d(np.arange(1000), idx)
    assert not compact_columns.get2(packed, rest).any()


@pytest.mark.parametrize("seed", range(4))
def test_find_gives_each_query_its_row_in_any_order(seed):
    # Queries out of order are sorted before the search and put back after: every query,
    # repeated or absent, must still get its own row.
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, 1 << 40, size=5000, dtype=np.uint64))
    present = keys[rng.integers(0, len(keys), size=3000)]
    absent = np.setdiff1d(rng.integers(0, 1 << 40, size=1000, dtype=np.uint64), keys)
    q = rng.permutation(np.concatenate([present, absent, present[:50]]))
    got = classindex.find_sorted(keys, q)
    rows = {int(k): i for i, k in enumerate(keys)}
    assert got.tolist() == [rows.get(int(k), -1) for k in q]
    qs = np.sort(q)
    assert classindex.find_sorted(keys, qs).tolist() == [rows.get(int(k), -1) for k in qs]
    assert classindex.find_sorted(keys[:0], q).tolist() == [-1] * len(q)


@pytest.mark.parametrize("seed", range(4))
def test_a_directory_gives_what_the_plain_search_gives(seed):
    # The directory narrows each query to a run of keys; queries below the first key,
    # above the last, on a run's first key and in the last, shorter run must all land
    # where np.searchsorted puts them.
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, 1 << 30, size=int(rng.integers(1, 9000)), dtype=np.uint64))
    directory = keys[:: classindex.DIRECTORY_STRIDE]
    edges = [keys[0], keys[-1], keys[-1] + np.uint64(1), *directory]
    q = np.concatenate(
        [np.array(edges, dtype=np.uint64), keys[rng.integers(0, len(keys), size=500)]]
    )
    q = np.sort(np.concatenate([q, q - np.uint64(1), rng.integers(0, 1 << 30, 500, np.uint64)]))
    want = np.searchsorted(keys, q)
    assert classindex.lower_bound(keys, q, directory).tolist() == want.tolist()
    shuffled = rng.permutation(q)
    assert (
        classindex.find_sorted(keys, shuffled, directory).tolist()
        == classindex.find_sorted(keys, shuffled).tolist()
    )


def test_a_store_searched_by_its_directory_gives_the_same_answers(monkeypatch):
    # Big stores look keys up through a directory that every merge drops: with one from
    # the first key on, the solve must still give the retrograde solver's answers.
    set_everywhere(monkeypatch, "DIRECTORY_MIN", 1)
    set_everywhere(monkeypatch, "DIRECTORY_STRIDE", 4)
    rs = Ruleset.from_id(RULESETS[2])
    assert_same(retrograde.solve(rs), compact.solve(rs, progress=False))


@pytest.mark.parametrize("seed", range(4))
def test_grouped_successors_keep_every_key_its_group_and_bits(seed):
    # The enumeration's counter is built from each successor's group: a wrong index or a
    # lost colouring would give a wrong count, hence a wrong value.
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 40, size=300).astype(np.uint64) << np.uint64(50)
    bits = rng.integers(1, 4, size=300).astype(np.uint8)
    uk, ub, inv = compact_store.group_keys(keys, bits)
    assert uk.tolist() == sorted(set(keys.tolist()))
    assert (uk[inv] == keys).all()
    for k, b in zip(uk.tolist(), ub.tolist(), strict=True):
        assert b == np.bitwise_or.reduce(bits[keys == k])
    empty = compact_store.group_keys(keys[:0], bits[:0])
    assert [len(a) for a in empty] == [0, 0, 0]


def test_without_a_terminal_long_phases_print_where_they_are(monkeypatch, capsys):
    # The status lines come at most once a minute; with no wait at all, every piece of a
    # level and of a ply says where the solve is, on stderr.
    real_init = compact_driver.Ticker.__init__

    def no_wait(self, quiet, every=60.0):
        real_init(self, quiet, every=0.0)

    monkeypatch.setattr(compact_driver.Ticker, "__init__", no_wait)
    set_everywhere(monkeypatch, "PIECE", 64)
    compact.solve(Ruleset.from_id(RULESETS[1]), progress=None)
    err = capsys.readouterr().err.splitlines()
    assert any(line.startswith("enumerate: level 3,") and "expansions" in line for line in err)
    assert any(line.startswith("retrograde: ply 1, sweeping row") for line in err)
    assert any("un-playing" in line for line in err)
    compact.solve(Ruleset.from_id(RULESETS[1]), progress=False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("seed", range(3))
def test_the_open_filter_never_calls_an_open_class_decided(seed):
    # Every key it was made with passes; of the others, about one in FILTER_BITS does (16
    # bits a key), so a filter that let everything through, or dropped a key it holds,
    # fails here.
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, 1 << 50, size=60_000, dtype=np.uint64))
    open_keys, others = keys[:10_000], keys[10_000:]
    f = compact_store.KeyFilter(count=len(open_keys))
    for lo in range(0, len(open_keys), 3_000):  # made a part at a time, as of_store does
        f.add(open_keys[lo : lo + 3_000])
    f.add(open_keys[:0])  # a part with no open class
    assert f.may_hold(open_keys).all()
    assert f.may_hold(others).mean() < 2 / compact_constants.FILTER_BITS


@pytest.mark.parametrize("cost", [0, 10**9], ids=["always-unplay", "always-sweep"])
@pytest.mark.parametrize("rid", RULESETS[:6])
def test_the_retrograde_pass_through_key_filters_gives_the_same_answers(
    monkeypatch, leaky_key_filters, rid, cost
):
    # The filters: of the open parents when un-playing, of the successors other than won
    # when sweeping. The values must still be the retrograde solver's.
    made = leaky_key_filters()
    set_everywhere(monkeypatch, "UNPLAY_COST", cost)
    set_everywhere(monkeypatch, "UNPLAY_COST_FILTERED", cost)
    rs = Ruleset.from_id(rid)
    assert_same(retrograde.solve(rs), compact.solve(rs, progress=False))
    assert made and all(len(kinds) == (2 if cost == 0 else 3) for kinds in made)


@pytest.mark.parametrize("rid", RULESETS[:6])
def test_an_open_filter_kept_from_ply_to_ply_gives_the_same_answers(
    monkeypatch, leaky_key_filters, rid
):
    # Classes only leave the open set, so the first ply's filter of the open classes still
    # holds every one open at the last ply. Never made again, the values must not change.
    made = leaky_key_filters()
    set_everywhere(monkeypatch, "UNPLAY_COST", 0)  # un-play every ply: no sweep resets it
    set_everywhere(monkeypatch, "UNPLAY_COST_FILTERED", 0)
    set_everywhere(monkeypatch, "FILTER_KEEP", 0.0)
    rs = Ruleset.from_id(rid)
    assert_same(retrograde.solve(rs), compact.solve(rs, progress=False))
    assert made == [(compact_constants.OPEN, compact_constants.AVOID)]
