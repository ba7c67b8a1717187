"""A finished partitioned solve read in place: the same look-ups and the same non-win sets
as the solution in memory; a folder that is not a finished solve of the ruleset is one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.cert.nonwin_builder import build_nonwin
from harness.cli import main
from harness.rules import Position, Ruleset
from harness.solver.partitioned import PartitionError, solve
from harness.solver.partitioned.reader import PartitionedSolution
from harness.solver.states import States

REINC = "pop1-4x4-c4-reincarnation-continue-binempty-king-nozero-nojump"  # a draw
TORUS = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"  # x wins in 7


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reader") / "w"
    solve(Ruleset.from_id(REINC), folder, partitions=3, progress=False)
    return folder


def test_the_same_answers_as_the_solution_in_memory(solved, compact_solution):
    rs = Ruleset.from_id(REINC)
    want = compact_solution(REINC)
    got = PartitionedSolution(rs, solved)
    assert (got.value, got.plies, got.classes) == (want.value, want.plies, want.classes)
    # Every position of a non-win set and every successor: values and plies agree.
    positions = build_nonwin(want, 0, rounds=1).positions
    states = States.from_positions(positions)
    for a, b in zip(got.rate_successors(states), want.rate_successors(states), strict=True):
        if isinstance(a, np.ndarray):
            assert np.array_equal(a, b)
    assert (got.lookup(states)[0] > 0).all()
    # A position no solve reaches (x to move with more checkers on the board than o + 1).
    assert got.lookup(States.from_positions([Position((0b111, 0), (1, 4), 0)]))[0].tolist() == [-1]


def test_the_same_non_win_sets(solved, compact_solution):
    rs = Ruleset.from_id(REINC)
    want, got = compact_solution(REINC), PartitionedSolution(rs, solved)
    for p in (0, 1):
        a, b = build_nonwin(got, p), build_nonwin(want, p)
        assert a.positions == b.positions and a.actions == b.actions


def test_certify_from_a_work_folder(solved, tmp_path, capsys):
    out = tmp_path / "cert"
    assert main(["certify", REINC, "--solution", str(solved), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (
        summary["value"] == "draw"
        and summary["classes"] == PartitionedSolution(Ruleset.from_id(REINC), solved).classes
    )
    assert main(["check", str(out)]) == 0


def test_a_folder_that_is_not_a_finished_solve(solved, tmp_path, capsys):
    with pytest.raises(PartitionError, match="no partitioned solve there"):
        PartitionedSolution(Ruleset.from_id(REINC), tmp_path)
    with pytest.raises(PartitionError, match=f"a solve of {REINC}, not of {TORUS}"):
        PartitionedSolution(Ruleset.from_id(TORUS), solved)
    code = main(["certify", TORUS, "--solution", str(tmp_path), "--out", str(tmp_path / "c")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "no partitioned solve there" in err


def test_a_damaged_column_is_named(solved, tmp_path):
    import shutil

    copy = tmp_path / "w"
    shutil.copytree(solved, copy)
    (victim,) = copy.glob("final-0000/part-001/result.npy")
    data = bytearray(victim.read_bytes())
    data[-1] ^= 1
    victim.write_bytes(bytes(data))
    with pytest.raises(PartitionError, match="final-0000/part-001/result.npy: damaged"):
        PartitionedSolution(Ruleset.from_id(REINC), copy)


def test_the_checksum_is_the_solution_s_whatever_the_partitions(solved, compact_solution, tmp_path):
    from harness.solver.checksum import class_checksum

    rs = Ruleset.from_id(REINC)
    want = compact_solution(REINC)
    three = PartitionedSolution(rs, solved)
    ran = solve(rs, tmp_path / "one", partitions=1, progress=False)
    one = PartitionedSolution(rs, tmp_path / "one")
    expected = class_checksum(want.keys, want.result, want.ply_table)
    assert three.checksum() == one.checksum() == expected
    # The solve sums what its final step found, without reading the columns again; a call
    # that finds the folder finished says so and gives the same sum.
    assert (ran.checksum, ran.finished_before) == (expected, False)
    again = solve(rs, tmp_path / "one", partitions=1, progress=False)
    assert (again.checksum, again.finished_before) == (expected, True)
    assert three.totals["classes"] == one.totals["classes"] == want.classes
    assert three.totals["positions"] == one.totals["positions"] > want.classes
    # The files differ with the partitions; the checksum does not.
    assert len(three.file_hashes) == 3 and len(one.file_hashes) == 1
    # A solution with one class's plies changed has another checksum.
    plies = np.array(want.ply_table)
    plies[np.flatnonzero(want.result != 0)[0]] += 1
    assert class_checksum(want.keys, want.result, plies) != expected


def test_a_final_step_without_its_checksum_is_read_from_the_columns(tmp_path, capsys):
    """A folder whose final step's records hold no checksum (written before they did): the
    report's checksum is read from the columns, and is the same."""
    from harness.solver.checksum import checksum_text
    from harness.solver.partitioned.files import DONE, FINAL, part_dir

    rs = Ruleset.from_id(TORUS)
    ran = solve(rs, tmp_path / "w", partitions=2, progress=False)
    for part in (0, 1):
        done = tmp_path / "w" / part_dir(FINAL, 0, part) / DONE
        rec = json.loads(done.read_text())
        del rec["summary"]["checksum"]
        done.write_text(json.dumps(rec))
    again = solve(rs, tmp_path / "w", partitions=2, progress=False)
    assert again.checksum is None and ran.checksum is not None
    args = ["solve", TORUS, "--method", "partitioned", "--partitions", "2"]
    assert main([*args, "--workdir", str(tmp_path / "w"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["checksum"] == checksum_text(ran.checksum)
