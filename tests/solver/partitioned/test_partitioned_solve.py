"""The partitioned solver gives the compact solver's solution, class by class, for any
partition count; it goes on from its last step after a stop, a killed driver or a move to
another folder; a damaged, foreign or missing file is a one-line error, never a value."""

from __future__ import annotations

import errno
import json
import os
import shutil

import numpy as np
import pytest

from harness.cli import main
from harness.rules import Ruleset
from harness.solver.budget import BudgetExceeded
from harness.solver.partitioned import PartitionError, assemble, solve
from harness.solver.partitioned.files import Run, file_hash, owner_of
from harness.solver.partitioned.steps import ENUM, PLY, enumerate_step
from tests.conftest import assert_same_classes

RULESETS = [
    "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump",
    "pop1-3x4-c4-torus-draw-always-queen-zero-jump",
    "pop1-4x4-c3-klein-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-ringout-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-blocked-continue-nomove-rook-nozero-nojump",
    "pop1-3x3-c8-reincarnation-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-reincarnation-continue-binempty-king-nozero-nojump",
]
KLEIN = RULESETS[2]


@pytest.mark.parametrize("rid", RULESETS)
@pytest.mark.parametrize("partitions", [1, 3, 8])
def test_same_solution_as_compact(rid, partitions, compact_solution, tmp_path):
    rs = Ruleset.from_id(rid)
    got = solve(rs, tmp_path / "w", partitions=partitions, progress=False)
    want = compact_solution(rid)
    assert (got.value, got.plies, got.classes, got.positions) == (
        want.value,
        want.plies,
        want.classes,
        want.positions,
    )
    assert got.canonical == want.canonical
    assert_same_classes(assemble(rs, tmp_path / "w"), want)
    # Only the enumeration's last step, the last ply and the final step stay on disk.
    kept = sorted(p.name for p in (tmp_path / "w").iterdir() if p.is_dir())
    last_ply = f"ply-{got.plies_steps - 1:04d}"
    assert kept == [f"enum-{got.enum_steps - 1:04d}", "final-0000", last_ply]


@pytest.mark.parametrize("rid", [RULESETS[3], RULESETS[6], KLEIN])
@pytest.mark.parametrize("share", [0.0, 1.0])
def test_open_filters_change_nothing(rid, share, compact_solution, tmp_path, monkeypatch):
    """Un-playing through the open filters at every step (share 1) or at none (0)."""
    from harness.solver.partitioned import driver

    monkeypatch.setattr(driver, "FILTER_OPEN", share)
    monkeypatch.setattr(driver, "UNPLAY_COST", 0)  # every ply un-played
    rs = Ruleset.from_id(rid)
    got = solve(rs, tmp_path, partitions=3)
    used = [s["filtered"] for s in got.steps if s["phase"] == PLY and s["step"] >= 1]
    assert all(used) if share else not all(used)
    assert_same_classes(assemble(rs, tmp_path), compact_solution(rid))


@pytest.mark.parametrize("rid", RULESETS)
@pytest.mark.parametrize("cost", [0, 10**9])
def test_sweeps_change_nothing(rid, cost, compact_solution, tmp_path, monkeypatch):
    """Every ply swept (a cost of un-playing that always loses) or none (0)."""
    from harness.solver.partitioned import driver

    monkeypatch.setattr(driver, "UNPLAY_COST", cost)
    rs = Ruleset.from_id(rid)
    lines: list[str] = []
    solve(rs, tmp_path, partitions=3, tick=lines.append)
    swept = [ln.endswith("swept") for ln in lines if ln.startswith("retrograde: step")]
    # with the cost of un-playing that high, ply 1 is swept if it decides anything
    if cost and (compact_solution(rid).result != 0).any():
        assert swept[1]
    assert cost or not any(swept)
    assert_same_classes(assemble(rs, tmp_path), compact_solution(rid))


def test_a_sweep_resumes_between_its_steps(compact_solution, tmp_path, monkeypatch):
    """A driver killed after a sweep's asking step and before its answers goes on."""
    from harness.solver.partitioned import driver

    monkeypatch.setattr(driver, "UNPLAY_COST", 10**9)
    rs = Ruleset.from_id(KLEIN)
    solve_until(rs, tmp_path, "retrograde: step 2")
    assert not (tmp_path / "ans-0002").exists()
    solve(rs, tmp_path, partitions=3)
    assert_same_classes(assemble(rs, tmp_path), compact_solution(KLEIN))


def test_a_capped_frontier_changes_nothing(compact_solution, tmp_path, monkeypatch):
    """A partition that expands at most 50 classes a step leaves the rest for the next."""
    from harness.solver.partitioned import steps

    monkeypatch.setattr(steps, "EXPAND_MAX", 50)
    rs = Ruleset.from_id(KLEIN)
    got = solve(rs, tmp_path, partitions=3)
    assert got.enum_steps > 12903 // 150  # at most 150 expansions a step
    assert_same_classes(assemble(rs, tmp_path), compact_solution(KLEIN))


def test_the_open_filter_holds_every_open_class(compact_solution):
    from harness.solver.partitioned.steps import OpenFilter

    keys = compact_solution(KLEIN).keys
    owner = owner_of(keys, 4)
    open_ = compact_solution(KLEIN).result == 0  # the draws: open to the end
    tables = [OpenFilter.table_of(keys[(owner == q) & open_]) for q in range(4)]
    held = OpenFilter(tables).may_hold(keys)
    assert held[open_].all()
    assert held[~open_].mean() < 0.1  # about one in 16 of the others gets through


def test_partitions_are_balanced(compact_solution):
    keys = compact_solution(KLEIN).keys  # 12,903 classes
    sizes = np.bincount(owner_of(keys, 8), minlength=8)
    assert sizes.max() < 1.1 * len(keys) / 8 and sizes.min() > 0.9 * len(keys) / 8
    # a stable function of the key: the same key, the same owner, in any batch
    assert np.array_equal(owner_of(keys[::-1], 8)[::-1], owner_of(keys, 8))


def test_a_stopped_solve_goes_on_from_its_last_step(compact_solution, tmp_path):
    rs = Ruleset.from_id(KLEIN)
    with pytest.raises(BudgetExceeded, match="enumeration step 0"):
        solve(rs, tmp_path, partitions=3, max_seconds=1e-9)
    state = json.loads((tmp_path / "state.json").read_text())
    assert (state["phase"], state["step"]) == (ENUM, 0)
    # stop again in the retrograde pass: a tick that raises stands for a killed driver
    lines: list[str] = []

    def tick(line: str) -> None:
        lines.append(line)
        if line.startswith("retrograde: step 3"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        solve(rs, tmp_path, partitions=3, tick=tick)
    assert lines[0].startswith("enumerate: step 1,")  # step 0 was not run again
    # the driver died after ply 3's tasks and before its save: ply 3 is on disk, unsaved
    assert json.loads((tmp_path / "state.json").read_text())["step"] == 2
    got = solve(rs, tmp_path, partitions=3)
    assert got.reused == 3  # ply 3 of every partition was found finished, not rerun
    assert_same_classes(assemble(rs, tmp_path), compact_solution(KLEIN))


def test_a_partition_finished_before_the_driver_died_is_kept(compact_solution, tmp_path):
    rs = Ruleset.from_id(KLEIN)
    with pytest.raises(BudgetExceeded):
        solve(rs, tmp_path, partitions=3, max_seconds=1e-9)
    run = _run(tmp_path)
    enumerate_step(run, 1, 2)  # partition 2 finished step 1; the others did not
    got = solve(rs, tmp_path, partitions=3)
    assert got.reused == 1
    assert_same_classes(assemble(rs, tmp_path), compact_solution(KLEIN))


def test_a_moved_work_folder_goes_on(compact_solution, tmp_path):
    rs = Ruleset.from_id(KLEIN)
    with pytest.raises(BudgetExceeded):
        solve(rs, tmp_path / "here", partitions=3, max_seconds=1e-9)
    solve_until(rs, tmp_path / "here", "retrograde: step 2")
    shutil.move(tmp_path / "here", tmp_path / "there")
    solve(rs, tmp_path / "there", partitions=3)
    assert_same_classes(assemble(rs, tmp_path / "there"), compact_solution(KLEIN))


def solve_until(rs, folder, prefix: str, **options) -> None:
    """Solve in 3 partitions until the driver says a line starting with ``prefix``: a tick
    that raises there stands for a killed driver."""

    def tick(line: str) -> None:
        if line.startswith(prefix):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        solve(rs, folder, partitions=3, tick=tick, **options)


def _run(folder):
    from harness.solver.partitioned.driver import open_run

    return open_run(folder, Ruleset.from_id(KLEIN), 3, fresh=False)


def stopped_in_retrograde(tmp_path):
    """A solve of KLEIN in 3 partitions whose driver died once every task of retrograde
    step 3 had finished, before it saved the step: going on takes step 3 as it is and
    runs step 4, which reads step 3's columns and what it sent."""
    rs = Ruleset.from_id(KLEIN)
    solve_until(rs, tmp_path, "retrograde: step 3")
    return rs


def test_a_damaged_column_is_an_error(tmp_path):
    rs = stopped_in_retrograde(tmp_path)
    path = tmp_path / "ply-0003" / "part-001" / "count.npy"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(PartitionError, match=r"ply-0003/part-001/count\.npy: damaged"):
        solve(rs, tmp_path, partitions=3)


def test_a_damaged_slice_sent_to_a_partition_is_an_error(tmp_path):
    rs = stopped_in_retrograde(tmp_path)
    path = tmp_path / "ply-0003" / "part-000" / "out-pay.npy"
    pay = np.load(path)
    assert len(pay)
    pay[0] ^= np.uint32(2)  # one bad edge more or less
    np.save(path, pay)
    damaged = r"ply-0003/part-000/out-keys\.npy, out-pay\.npy: damaged \(the slice for partition"
    with pytest.raises(PartitionError, match=damaged):
        solve(rs, tmp_path, partitions=3)


def test_a_foreign_step_is_an_error(tmp_path):
    rs = stopped_in_retrograde(tmp_path)
    # the enumeration's last step: every retrograde step reads its keys
    (classes,) = [p for p in tmp_path.iterdir() if p.name.startswith("enum-")]
    done = classes / "part-002" / "done.json"
    rec = json.loads(done.read_text())
    rec["token"] = "0" * 32
    done.write_text(json.dumps(rec))
    where = rf"{classes.name}/part-002/done\.json: written by another run"
    with pytest.raises(PartitionError, match=where):
        solve(rs, tmp_path, partitions=3)


def test_a_missing_file_is_an_error(tmp_path):
    rs = stopped_in_retrograde(tmp_path)
    (tmp_path / "ply-0003" / "part-000" / "value.npy").unlink()
    with pytest.raises(PartitionError, match=r"ply-0003/part-000/value\.npy: missing"):
        solve(rs, tmp_path, partitions=3)


def test_a_finished_step_removed_whole_is_an_error(tmp_path):
    """A finished step's task removed the columns it read: removing the step itself
    leaves nothing to redo it from, which is said (never a value made up)."""
    rs = stopped_in_retrograde(tmp_path)
    shutil.rmtree(tmp_path / "ply-0003" / "part-001")
    with pytest.raises(PartitionError, match=r"ply-0002/part-001/value\.npy: missing"):
        solve(rs, tmp_path, partitions=3)


def test_a_linked_column_is_refused(tmp_path):
    rs = stopped_in_retrograde(tmp_path)
    path = tmp_path / "ply-0003" / "part-000" / "value.npy"
    (tmp_path / "elsewhere.npy").write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere.npy")
    with pytest.raises(PartitionError, match="value.npy: a symbolic link"):
        solve(rs, tmp_path, partitions=3)


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda d: (d / "notes.txt").write_text("mine"), "holds files of no partitioned solve"),
        (lambda d: (d / "run.json").write_text("{"), "run.json is unreadable"),
    ],
)
def test_unusable_work_folders(setup, message, tmp_path):
    setup(tmp_path)
    with pytest.raises(PartitionError, match=message):
        solve(Ruleset.from_id(KLEIN), tmp_path, partitions=2)


def test_another_solve_is_refused_then_fresh_starts_over(compact_solution, tmp_path):
    rs = Ruleset.from_id(KLEIN)
    with pytest.raises(BudgetExceeded):
        solve(rs, tmp_path, partitions=3, max_seconds=1e-9)
    with pytest.raises(PartitionError, match="in 3 partitions, not .* in 4"):
        solve(rs, tmp_path, partitions=4)
    other = Ruleset.from_id(RULESETS[0])
    with pytest.raises(PartitionError, match="holds a solve of " + KLEIN):
        solve(other, tmp_path, partitions=3)
    got = solve(rs, tmp_path, partitions=4, fresh=True)
    assert got.reused == 0
    assert_same_classes(assemble(rs, tmp_path), compact_solution(KLEIN))


def test_cli_solves_resumes_and_says_errors_in_one_line(compact_solution, tmp_path, capsys):
    work = tmp_path / "w"
    args = ["solve", KLEIN, "--method", "partitioned", "--workdir", str(work), "--partitions", "2"]
    assert main([*args, "--time-limit", "0.000001"]) == 3
    err = capsys.readouterr().err
    assert "time budget" in err and "goes on from there" in err
    assert main([*args, "--json", "--out", str(tmp_path / "s.npz")]) == 0
    report = json.loads(capsys.readouterr().out)
    want = compact_solution(KLEIN)
    assert (report["value"], report["classes"], report["positions"]) == (
        want.value,
        want.classes,
        want.positions,
    )
    assert report["method"] == "partitioned" and report["partitions"] == 2
    from harness.solver.solution import Solution

    assert_same_classes(Solution.load(tmp_path / "s.npz"), want)
    (work / f"enum-{report['enumeration_steps'] - 1:04d}" / "part-000" / "keys.npy").write_bytes(
        b"x"
    )
    (work / "final-0000" / "part-000" / "done.json").unlink()
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "keys.npy: damaged" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "needs --workdir"),
        (["--workdir", "W", "--threads", "2"], "--threads 2 runs the compact solver's batches"),
        (["--workdir", "W", "--memory-limit", "2"], "--memory-limit is not an option"),
    ],
)
def test_cli_refuses_options_it_does_not_take(extra, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["solve", KLEIN, "--method", "partitioned", *extra]) == 2
    assert message in capsys.readouterr().err


def test_cli_partitions_need_the_partitioned_method(capsys):
    assert main(["solve", KLEIN, "--method", "compact", "--partitions", "2"]) == 2
    assert "--partitions needs --method partitioned" in capsys.readouterr().err


@pytest.mark.parametrize("rid", [RULESETS[0], RULESETS[3], RULESETS[6]])
def test_keys_of_two_words(rid, compact_solution, tmp_path, monkeypatch):
    """6x6 boards need two-word keys: the same small rulesets solved with their keys made
    two words wide (the high word holds the bins and one board) give the same solution."""
    from harness.solver.batch import engine

    rs = Ruleset.from_id(rid)
    want = compact_solution(rid)  # solved with one-word keys
    totals = (want.value, want.positions)
    eng = engine(rs)
    monkeypatch.setattr(eng, "key_words", 2)
    got = solve(rs, tmp_path, partitions=3)
    sol = assemble(rs, tmp_path)
    assert sol.keys.dtype.names == ("hi", "lo")
    n = np.uint64(eng.n)
    one = ((sol.keys["hi"] >> n) << (n + n)) | ((sol.keys["hi"] & eng.full) << n) | sol.keys["lo"]
    assert np.array_equal(one, want.keys)
    assert np.array_equal(sol.result, want.result)
    assert np.array_equal(sol.ply_table.astype(np.int64), want.ply_table.astype(np.int64))
    assert np.array_equal(sol.sides, want.sides) and np.array_equal(sol.orbit, want.orbit)
    assert (got.value, got.positions) == totals
    # The checksum reads the two-word records (of other keys, so another checksum).
    from harness.solver.checksum import class_checksum
    from harness.solver.partitioned.reader import PartitionedSolution

    assert PartitionedSolution(rs, tmp_path).checksum() == class_checksum(
        sol.keys, sol.result, sol.ply_table
    )


def test_plies_of_every_partition_are_kept_apart(tmp_path):
    """Each partition's step holds its own classes only: no class is in two partitions."""
    rs = Ruleset.from_id(KLEIN)
    got = solve(rs, tmp_path, partitions=3)
    seen = []
    for part in range(3):
        step = tmp_path / f"enum-{got.enum_steps - 1:04d}"
        keys = np.load(step / f"part-{part:03d}" / "keys.npy")
        assert (owner_of(keys, 3) == part).all()
        assert (keys[1:] > keys[:-1]).all()
        seen.append(keys)
    assert sum(len(k) for k in seen) == got.classes
    assert (tmp_path / f"{PLY}-{got.plies_steps - 1:04d}").is_dir()


def test_python_api(compact_solution, tmp_path):
    import harness

    report = harness.solve(KLEIN, method="partitioned", workdir=tmp_path, partitions=2)
    assert (report["method"], report["value"], report["classes"]) == (
        "partitioned",
        compact_solution(KLEIN).value,
        compact_solution(KLEIN).classes,
    )


def test_cli_out_is_refused_for_two_word_keys(tmp_path, capsys):
    rid = "pop1-6x6-c3-reincarnation-continue-binempty-king-nozero-nojump"
    args = ["solve", rid, "--method", "partitioned", "--workdir", str(tmp_path / "w")]
    assert main([*args, "--out", str(tmp_path / "s.npz")]) == 2
    assert "two-word class keys" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


def test_progress_bars_in_a_terminal_only(tmp_path, capsys):
    rs = Ruleset.from_id(RULESETS[0])
    solve(rs, tmp_path / "a", partitions=2, progress=True)
    assert "enum-0000" in capsys.readouterr().err  # a bar per step, named by its folder
    solve(rs, tmp_path / "b", partitions=2, progress=False)
    assert capsys.readouterr().err == ""


def test_a_step_that_would_fill_the_disk_stops_the_solve_saved(
    compact_solution, tmp_path, monkeypatch
):
    """A task that would leave less than the reserve free stops the solve with one line, the
    folder holds nothing half-written, and the solve goes on once there is room."""
    from harness.solver.partitioned import files

    rid = RULESETS[0]
    rs = Ruleset.from_id(rid)
    monkeypatch.setattr(files, "DISK_RESERVE", 1 << 62)
    with pytest.raises(PartitionError, match=r"GiB to write with .* GiB free") as caught:
        solve(rs, tmp_path / "v", partitions=3, progress=False)
    assert "\n" not in str(caught.value)
    assert not [p for p in (tmp_path / "v").rglob(".part-*")]  # no temporary step folder left
    monkeypatch.undo()
    got = solve(rs, tmp_path / "v", partitions=3, progress=False)
    want = compact_solution(rid)
    assert (got.value, got.plies, got.classes) == (want.value, want.plies, want.classes)


def test_unchanged_keys_are_linked_not_written(compact_solution, tmp_path):
    """An enumeration step that found no class new to a partition links the partition's
    keys from the step before: the solve writes fewer column bytes, with the same answer."""
    rs = Ruleset.from_id(KLEIN)
    got = solve(rs, tmp_path / "w", partitions=8, progress=False)
    enum = [s for s in got.steps if s["phase"] == ENUM]
    assert sum(s["linked_bytes"] for s in enum) > 0
    assert all(s["linked_bytes"] == 0 for s in got.steps if s["phase"] != ENUM)
    assert_same_classes(assemble(rs, tmp_path / "w"), compact_solution(KLEIN))


def make_run(folder) -> Run:
    folder.mkdir()
    return Run(folder, "t" * 32, 2, KLEIN)


def test_a_column_named_same_as_an_earlier_one_is_a_hard_link(tmp_path):
    run = make_run(tmp_path / "w")
    keys = np.arange(1000, dtype=np.uint64)
    first = run.write(ENUM, 0, 1, {"keys": keys, "meta": keys.astype(np.uint8)}, {})
    second = run.write(ENUM, 1, 1, {"keys": keys}, {}, same_as={"keys": first})
    a, b = (tmp_path / "w" / f"enum-000{i}" / "part-001" / "keys.npy" for i in (0, 1))
    assert a.samefile(b) and b.stat().st_nlink == 2
    assert second["files"]["keys"] == first["files"]["keys"]
    assert second["summary"]["linked_bytes"] == a.stat().st_size
    assert second["summary"]["column_bytes"] == 0
    run.drop(ENUM, 0, 1, ["keys"])  # the earlier step's name goes; the bytes stay
    assert np.array_equal(run.load(second, "keys"), keys)


def test_where_the_disk_cannot_link_the_column_is_written(tmp_path, monkeypatch):
    run = make_run(tmp_path / "w")
    keys = np.arange(1000, dtype=np.uint64)
    first = run.write(ENUM, 0, 1, {"keys": keys}, {})

    def refuse(src, dst):
        raise OSError(errno.EXDEV, "no links here")

    monkeypatch.setattr(os, "link", refuse)
    second = run.write(ENUM, 1, 1, {"keys": keys}, {}, same_as={"keys": first})
    path = tmp_path / "w" / "enum-0001" / "part-001" / "keys.npy"
    assert path.stat().st_nlink == 1
    assert second["files"]["keys"] == [path.stat().st_size, file_hash(path)]
    assert second["summary"]["linked_bytes"] == 0
    assert np.array_equal(run.load(second, "keys"), keys)
