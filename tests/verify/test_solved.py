"""``publish RULESET --solved WORKDIR``: a strong solve without a certificate, signed into
``MANIFESTS/solved/`` after every column of its work folder is checked."""

from __future__ import annotations

import json
import shutil

import pytest

from harness.cli import main
from harness.manifest.manifest import read_signed
from harness.rules import Ruleset
from harness.solver.checksum import checksum_text, class_checksum
from tests.verify.runs import make_project_key

REINC = "pop1-4x4-c4-reincarnation-continue-binempty-king-nozero-nojump"  # a draw


def _solve_args(work) -> list[str]:
    """``solve`` of REINC, partitioned in three, kept in ``work``."""
    return [
        "solve",
        REINC,
        "--method",
        "partitioned",
        "--partitions",
        "3",
        "--workdir",
        str(work),
        "--json",
    ]


@pytest.fixture(scope="module")
def solved_folder(tmp_path_factory):
    """A finished partitioned solve (3 partitions) and the report `solve --json` printed."""
    root = tmp_path_factory.mktemp("solved")
    work = root / "work"
    out = root / "report.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(_solve_args(work))
    assert code == 0
    out.write_text(buf.getvalue())
    return work, json.loads(buf.getvalue())


def publish(rs, work, manifests, key, *extra):
    return main(
        [
            "publish",
            rs,
            "--solved",
            str(work),
            "--manifests",
            str(manifests),
            "--key",
            str(key.path),
            *extra,
        ]
    )


def test_the_report_is_kept_in_the_folder_with_its_checksum(solved_folder, compact_solution):
    work, report = solved_folder
    kept = json.loads((work / "solved.json").read_text())
    assert {k: kept[k] for k in ("value", "classes", "checksum", "token")} == {
        k: report[k] for k in ("value", "classes", "checksum", "token")
    }
    want = compact_solution(REINC)
    assert report["checksum"] == checksum_text(
        class_checksum(want.keys, want.result, want.ply_table)
    )
    assert report["resumed_from"] is None and report["solver"]["revision"]


def test_a_solve_is_published_signed_with_what_it_found(solved_folder, key, tmp_path, capsys):
    work, report = solved_folder
    manifests = tmp_path / "m"
    assert publish(REINC, work, manifests, key) == 2  # not a project key yet
    assert "is not a project key" in capsys.readouterr().err
    make_project_key(manifests, key)
    assert publish(REINC, work, manifests, key) == 0
    target = manifests / "solved" / f"{REINC}.yaml"
    assert f"published {target}" in capsys.readouterr().out
    doc, _ = read_signed(target, key.public)
    assert doc["kind"] == "solve" and doc["certificate"] is None
    assert "nothing independent of the solver" in doc["trust"]
    assert doc["result"]["value"] == "draw" == report["value"]
    assert doc["result"]["classes"] == report["classes"]
    assert doc["result"]["positions"] == report["positions"]
    assert doc["solution"]["checksum"] == report["checksum"]
    assert doc["solution"]["partitions"] == 3 and len(doc["solution"]["columns"]) == 3
    assert doc["cost"]["wall_seconds"] == report["seconds"]
    assert doc["solver"] == report["solver"]
    # `manifest verify` accepts it with the published keys.
    assert main(["manifest", "verify", str(target)]) == 0
    # The results tables list it, apart from the certified results.
    from harness.results.published import read_published, read_solved, tables_markdown

    solved = read_solved(manifests)
    assert [s.ruleset for s in solved] == [REINC]
    assert REINC in tables_markdown(read_published(manifests), solved)


def test_a_report_that_disagrees_with_the_folder_is_refused(solved_folder, key, tmp_path, capsys):
    work, report = solved_folder
    manifests = tmp_path / "m"
    make_project_key(manifests, key)
    for change, says in (
        ({"classes": report["classes"] + 1}, "disagrees with the work folder: classes"),
        (
            {"ruleset": "pop1-4x4-c5-reincarnation-continue-binempty-king-nozero-nojump"},
            "not of a partitioned solve of",
        ),
        ({"token": "0" * 32}, "another run"),
        ({"checksum": "0" * 16}, "disagrees with the work folder: checksum"),
    ):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({**report, **change}))
        assert publish(REINC, work, manifests, key, "--report", str(bad)) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1
    assert not (manifests / "solved").exists()
    # --report alone, and a file that is no report.
    assert main(["publish", REINC, "--report", str(bad), "--manifests", str(manifests)]) == 2
    assert "--report needs --solved" in capsys.readouterr().err
    (tmp_path / "junk.json").write_text("[1, 2]")
    assert publish(REINC, work, manifests, key, "--report", str(tmp_path / "junk.json")) == 2
    assert "not a solve report" in capsys.readouterr().err


def test_a_damaged_column_or_a_certified_result_stops_it(solved_folder, key, tmp_path, capsys):
    work, _ = solved_folder
    manifests = tmp_path / "m"
    make_project_key(manifests, key)
    copy = tmp_path / "copy"
    shutil.copytree(work, copy)
    result = sorted(copy.glob("final-*/part-*/result.npy"))[1]
    data = bytearray(result.read_bytes())
    data[-1] ^= 1
    result.write_bytes(bytes(data))
    assert publish(REINC, copy, manifests, key) == 2
    assert "damaged" in capsys.readouterr().err
    (manifests / f"{REINC}.yaml").write_text("a certified result\n")
    assert publish(REINC, work, manifests, key) == 2
    assert "a certified result" in capsys.readouterr().err
    assert not (manifests / "solved").exists()


def test_an_unfinished_folder_is_refused(key, tmp_path, capsys):
    from harness.solver.partitioned import solve

    manifests = tmp_path / "m"
    make_project_key(manifests, key)
    with pytest.raises(Exception, match="budget"):
        solve(Ruleset.from_id(REINC), tmp_path / "w", partitions=2, max_seconds=0.0)
    assert publish(REINC, tmp_path / "w", manifests, key) == 2
    assert "has not finished" in capsys.readouterr().err


def test_solving_a_finished_folder_again_keeps_the_report_of_the_solve(solved_folder, capsys):
    work, report = solved_folder
    before = (work / "solved.json").read_bytes()
    assert main(_solve_args(work)) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["resumed_from"] == "the final step" and again["checksum"] == report["checksum"]
    assert (work / "solved.json").read_bytes() == before
