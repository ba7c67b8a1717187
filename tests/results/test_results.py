"""The results table: one cell at a time (run_cell), the matrix, the grid and the command."""

from __future__ import annotations

import json

import pytest
import yaml

import harness.results.cli as cli_module
from harness.cli import main
from harness.manifest.keys import generate
from harness.manifest.manifest import read_signed
from harness.results.cell import cell_text, run_cell
from harness.results.cli import grid
from harness.results.matrix import cells_of

DRAW_IN_MODEL = "pop1-3x4-c3-torus-continue-binempty-king-nozero-nojump"  # torus: full verify
DRAW_OUTSIDE = "pop1-3x3-c8-reincarnation-draw-binempty-king-nozero-nojump"  # Python only
X_WINS = "pop1-3x3-c8-torus-continue-binempty-king-nozero-nojump"


@pytest.fixture
def key(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("keys") / "signing-key.pem")


def test_a_draw_in_the_lean_model_runs_verify(tmp_path, key):
    record = run_cell(DRAW_IN_MODEL, 60, work=tmp_path / "out", manifests=tmp_path / "m", key=key)
    assert record["status"] == "certified", record["detail"]
    assert record["value"] == "draw" and record["plies"] is None
    assert record["verdict"] in ("PASS", "INCOMPLETE") and record["entries"] > 0
    assert record["bytes"] > 0 and record["certify_seconds"] is not None
    doc, _ = read_signed(tmp_path / "out" / "verify" / DRAW_IN_MODEL / "manifest.yaml", key.public)
    assert doc["result"]["value"] == "draw" and doc["certificate"]["hash"] == record["hash"]
    assert not (tmp_path / "m").exists()  # a run is not a publication


def test_a_ruleset_outside_the_lean_model_is_checked_in_python(tmp_path, key):
    record = run_cell(DRAW_OUTSIDE, 60, work=tmp_path / "out", manifests=tmp_path / "m", key=key)
    assert record["status"] == "certified", record["detail"]
    assert record["value"] == "draw" and record["verdict"] == "PYTHON-CHECKED"
    assert record["lean"].startswith("not run: field 'stuck' is draw")
    won = run_cell(X_WINS, 60, work=tmp_path / "out", manifests=tmp_path / "m", key=key)
    assert (won["status"], won["value"], won["plies"]) == ("certified", "x", 7)


def test_a_published_result_is_read_not_recomputed(tmp_path, key):
    m = tmp_path / "m"
    m.mkdir()
    doc = {
        "verdict": "INCOMPLETE",
        "result": {"value": "x", "plies": 9},
        "certificate": {"entries": 7499, "hash": "e16b", "shards": []},
        "steps": [{"step": "certify", "status": "passed", "seconds": 31.0}],
        "lean": {"status": "not run"},
    }
    (m / f"{X_WINS}.yaml").write_text(yaml.safe_dump(doc))
    record = run_cell(X_WINS, 1, work=tmp_path / "out", manifests=m, key=key)
    assert (record["status"], record["value"], record["plies"], record["entries"]) == (
        "published",
        "x",
        9,
        7499,
    )
    assert record["certify_seconds"] == 31.0
    assert not (tmp_path / "out").exists()


def test_a_spent_budget_is_an_open_record(tmp_path, key):
    rid = "pop1-6x6-c8-ringout-continue-binempty-king-nozero-nojump"
    record = run_cell(rid, 1, work=tmp_path / "out", manifests=tmp_path / "m", key=key)
    assert record["status"] == "open" and record["budget"] == 1
    assert record["value"] is None and "budget" in record["detail"]
    assert cell_text(record).startswith("open (1 s")


def test_a_bad_ruleset_is_a_failed_record():
    record = run_cell("pop1-4x4-c99-torus-continue-binempty-king-nozero-nojump", 1)
    assert record["status"] == "failed" and "c99" in record["detail"]


def test_matrix_and_grid():
    cells = cells_of("issue", ["4x4"])
    assert [c.edge for c in cells] == ["reincarnation", "ringout", "blocked", "klein", "torus"]
    with pytest.raises(ValueError, match="not one of"):
        cells_of("nope")
    records = [
        {"ruleset": cells[0].ruleset, "status": "certified", "value": "draw", "entries": 1711},
        {"ruleset": cells[1].ruleset, "status": "open", "budget": 300.0, "reached": {"x": 11}},
    ]
    text = grid(records)
    assert "| 4x4 c8 | draw (1,711) | open (300 s; no x win ≤ 11) |" in text


def test_command_writes_the_table(tmp_path, key, capsys):
    keyfile = tmp_path / "keys" / "signing-key.pem"
    generate(keyfile)
    code = main(
        [
            "results",
            "--matrix",
            "issue",
            "--only",
            "3x3-c8-torus",
            "--budget",
            "60",
            "--work",
            str(tmp_path / "out"),
            "--manifests",
            str(tmp_path / "m"),
            "--key",
            str(keyfile),
        ]
    )
    assert code == 0
    table = json.loads((tmp_path / "out" / "issue-3x3-c8-torus.json").read_text())
    assert [c["value"] for c in table["cells"]] == ["x"]
    assert "| 3x3 c8 |" in (tmp_path / "out" / "issue-3x3-c8-torus.md").read_text()
    assert "x in 7" in capsys.readouterr().out


def test_publish_signs_the_table(tmp_path):
    keyfile = tmp_path / "keys" / "signing-key.pem"
    key = generate(keyfile)
    manifests = tmp_path / "m"
    (manifests / "keys").mkdir(parents=True)
    (manifests / "keys" / f"{key.keyid[:16]}.pub").write_bytes(
        keyfile.with_name("signing-key.pem.pub").read_bytes()
    )
    args = ["results", "--matrix", "issue", "--only", "3x3-c8-reincarnation", "--budget", "60"]
    args += ["--work", str(tmp_path / "out"), "--manifests", str(manifests), "--key", str(keyfile)]
    assert main([*args, "--publish"]) == 0
    doc, _ = read_signed(manifests / "results" / "issue-3x3-c8-reincarnation.yaml", key.public)
    assert doc["kind"] == "results" and doc["cells"][0]["value"] == "draw"
    stranger = tmp_path / "other" / "k.pem"
    generate(stranger)
    args[args.index(str(keyfile))] = str(stranger)
    assert main([*args, "--publish"]) == 2  # only a project key publishes


def _open_table(manifests, ruleset, budget):
    (manifests / "results").mkdir(parents=True)
    cell = {"ruleset": ruleset, "status": "open", "budget": budget, "reached": {"x": 11}}
    (manifests / "results" / "issue-3x3-c8-torus.yaml").write_text(
        yaml.safe_dump({"kind": "results", "cells": [cell]})
    )


@pytest.mark.parametrize("spent, kept", [(600, True), (60, True), (30, False)])
def test_an_open_cell_is_kept_unless_the_budget_is_larger(tmp_path, spent, kept):
    manifests = tmp_path / "m"
    _open_table(manifests, X_WINS, spent)
    found = cli_module.kept_open_cells(manifests, "issue", ["3x3-c8-torus"], 60)
    assert (X_WINS in found) is kept
    if kept:
        assert found[X_WINS]["reached"] == {"x": 11}


def test_an_open_cell_published_since_is_not_kept(tmp_path):
    manifests = tmp_path / "m"
    _open_table(manifests, X_WINS, 600)
    (manifests / f"{X_WINS}.yaml").write_text("result: {value: x}\n")
    assert cli_module.kept_open_cells(manifests, "issue", ["3x3-c8-torus"], 60) == {}


def test_the_command_keeps_an_open_cell_and_rerun_recomputes_it(tmp_path, capsys):
    keyfile = tmp_path / "keys" / "signing-key.pem"
    generate(keyfile)
    manifests = tmp_path / "m"
    _open_table(manifests, X_WINS, 600)
    args = ["results", "--matrix", "issue", "--only", "3x3-c8-torus", "--budget", "60"]
    args += ["--work", str(tmp_path / "out"), "--manifests", str(manifests), "--key", str(keyfile)]
    assert main(args) == 0
    table = json.loads((tmp_path / "out" / "issue-3x3-c8-torus.json").read_text())
    assert [c["status"] for c in table["cells"]] == ["open"]
    assert main([*args, "--rerun"]) == 0
    table = json.loads((tmp_path / "out" / "issue-3x3-c8-torus.json").read_text())
    assert [c["value"] for c in table["cells"]] == ["x"]
