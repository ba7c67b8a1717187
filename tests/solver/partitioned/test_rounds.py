"""Plies un-played in rounds give the same solution, class by class, as un-played at once;
a driver stopped between rounds, or between a round's two steps, goes on; rounds shrink to
what the disk holds."""

from __future__ import annotations

import json
from collections import namedtuple

import pytest

from harness.cli import main
from harness.rules import Ruleset
from harness.solver.partitioned import assemble, solve
from harness.solver.partitioned.files import APPLY, DISK_RESERVE, PLY, ROUND
from tests.conftest import assert_same_classes
from tests.solver.partitioned.test_partitioned_solve import KLEIN, RULESETS, solve_until


def totals(solved) -> tuple:
    return solved.value, solved.plies, solved.classes, solved.positions


def phases(got) -> list[str]:
    return [s["phase"] for s in got.steps]


@pytest.mark.parametrize("rid", [RULESETS[0], RULESETS[3], RULESETS[5], RULESETS[6], KLEIN])
@pytest.mark.parametrize("partitions", [1, 3, 8])
def test_rounds_change_nothing(rid, partitions, compact_solution, tmp_path):
    rs = Ruleset.from_id(rid)
    got = solve(rs, tmp_path, partitions=partitions, round_classes=40, progress=False)
    want = compact_solution(rid)
    assert totals(got) == totals(want)
    assert_same_classes(assemble(rs, tmp_path), want)
    if (want.result != 0).any():
        rounds = phases(got).count(ROUND)
        assert rounds >= 1 and rounds == phases(got).count(APPLY)
        assert got.classes < 5000 or rounds > got.plies_steps  # plies of several rounds
    # No round's files stay behind.
    kept = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())
    assert kept == [
        f"enum-{got.enum_steps - 1:04d}",
        "final-0000",
        f"ply-{got.plies_steps - 1:04d}",
    ]


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_rounds_through_the_open_filters_change_nothing(
    share, compact_solution, tmp_path, monkeypatch
):
    from harness.solver.partitioned import driver

    monkeypatch.setattr(driver, "FILTER_OPEN", share)
    monkeypatch.setattr(driver, "UNPLAY_COST", 0)  # no sweep
    rs = Ruleset.from_id(KLEIN)
    got = solve(rs, tmp_path, partitions=3, round_classes=100)
    used = [s["filtered"] for s in got.steps if s["phase"] == ROUND]
    assert used and (all(used) if share else not any(used))
    assert_same_classes(assemble(rs, tmp_path), compact_solution(KLEIN))


def test_a_swept_ply_one_then_rounds(compact_solution, tmp_path, monkeypatch):
    from harness.solver.partitioned import driver

    monkeypatch.setattr(driver, "UNPLAY_COST", 10**9)  # ply 1 swept
    rs = Ruleset.from_id(KLEIN)
    lines: list[str] = []
    solve(rs, tmp_path, partitions=3, round_classes=100, tick=lines.append)
    assert any(ln.startswith("retrograde: step 1,") and ln.endswith("swept") for ln in lines)
    assert any(ln.startswith("retrograde: step 2, round 0") for ln in lines)
    assert_same_classes(assemble(rs, tmp_path), compact_solution(KLEIN))


def test_a_driver_stopped_between_rounds_goes_on(compact_solution, tmp_path):
    rs = Ruleset.from_id(KLEIN)
    solve_until(rs, tmp_path, "retrograde: step 2, round 1", round_classes=60)
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["deferred"] == 2 and state["round"]["next"] == 2
    again: list[str] = []
    got = solve(rs, tmp_path, partitions=3, round_classes=60, tick=again.append)
    assert again[0].startswith("retrograde: step 2, round 2")
    assert got.reused == 0
    assert_same_classes(assemble(rs, tmp_path), compact_solution(KLEIN))


def test_a_driver_killed_inside_a_round_reruns_the_same_rows(
    compact_solution, tmp_path, monkeypatch
):
    """Killed after a round's un-playing and before its applying: the round's plan (its
    rows) was saved, the finished un-playing is kept, and only the applying runs."""
    from harness.solver.partitioned import driver

    real = driver.apply_round
    calls = {"n": 0}

    def dies_once(*args):
        calls["n"] += 1
        if calls["n"] == 5:  # round 1 of the first rounds, partition 1
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(driver, "apply_round", dies_once)
    rs = Ruleset.from_id(KLEIN)
    with pytest.raises(KeyboardInterrupt):
        solve(rs, tmp_path, partitions=3, round_classes=60)
    state = json.loads((tmp_path / "state.json").read_text())
    plan = state["round"]["plan"]
    assert plan is not None and state["round"]["next"] == 1
    # A later call with another round size keeps the saved plan for the round in progress.
    got = solve(rs, tmp_path, partitions=3, round_classes=10**6)
    assert got.reused == 3 + 1  # the round's three un-playings and partition 0's applying
    assert_same_classes(assemble(rs, tmp_path), compact_solution(KLEIN))


def test_rounds_shrink_to_what_the_disk_holds(compact_solution, tmp_path, monkeypatch):
    from harness.solver.partitioned import driver

    rs = Ruleset.from_id(KLEIN)
    roomy = solve(rs, tmp_path / "a", partitions=3, round_classes=400)
    Usage = namedtuple("Usage", "total used free")
    real = driver.shutil.disk_usage

    def tight(path):
        # what the round sizing sees: room for about 2 KB of messages past twice the reserve
        return Usage(1, 0, 2 * DISK_RESERVE + 4096)

    monkeypatch.setattr(driver.shutil, "disk_usage", tight)
    monkeypatch.setattr(driver, "DISK_RESERVE", DISK_RESERVE)
    tight_run = solve(rs, tmp_path / "b", partitions=3, round_classes=400)
    monkeypatch.setattr(driver.shutil, "disk_usage", real)
    assert phases(tight_run).count(ROUND) > phases(roomy).count(ROUND)
    assert_same_classes(assemble(rs, tmp_path / "b"), compact_solution(KLEIN))


def test_the_round_size_follows_the_disk(tmp_path, monkeypatch):
    from harness.solver.partitioned import driver

    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(
        driver.shutil, "disk_usage", lambda p: Usage(1, 0, 2 * DISK_RESERVE + 2 * 50 * 100)
    )
    assert driver._round_size(None, 1000, None) == 1000  # nothing measured yet
    run = type("R", (), {"folder": tmp_path})()
    assert driver._round_size(run, 1000, 100.0) == 50
    assert driver._round_size(run, 10, 100.0) == 10
    monkeypatch.setattr(driver.shutil, "disk_usage", lambda p: Usage(1, 0, DISK_RESERVE))
    assert driver._round_size(run, 1000, 100.0) == 1


def test_big_solves_use_rounds_by_default(compact_solution, tmp_path, monkeypatch):
    from harness.solver.partitioned import driver

    monkeypatch.setattr(driver, "ROUNDS_ABOVE", 1000)  # KLEIN has 12,903 classes
    monkeypatch.setattr(driver, "ROUND_CLASSES", 500)
    rs = Ruleset.from_id(KLEIN)
    got = solve(rs, tmp_path, partitions=2)
    assert ROUND in phases(got)
    assert_same_classes(assemble(rs, tmp_path), compact_solution(KLEIN))
    small = solve(rs, tmp_path / "off", partitions=2, round_classes=0)
    assert ROUND not in phases(small) and PLY in phases(small)


def test_cli_round_classes(compact_solution, tmp_path, capsys):
    args = ["solve", KLEIN, "--method", "partitioned", "--workdir", str(tmp_path / "w")]
    assert main([*args, "--partitions", "2", "--round-classes", "100", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["positions"] == compact_solution(KLEIN).positions
    assert main(["solve", KLEIN, "--method", "compact", "--round-classes", "100"]) == 2
    assert "--round-classes needs --method partitioned" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main([*args, "--round-classes", "0"])
    assert stop.value.code == 2 and "must be positive" in capsys.readouterr().err
