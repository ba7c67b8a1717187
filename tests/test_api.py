"""The Python API (harness.solve, certify, check, verify_ruleset): the commands' answers, in
process."""

from __future__ import annotations

import json

import pytest

import harness
from harness.errors import EXIT_USAGE, HarnessError
from tests.harness_cli import run_harness

SMALL = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"
DRAW = "pop1-3x3-c8-reincarnation-continue-binempty-king-nozero-nojump"
DEFAULT = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"


def test_solve_answers_as_the_command_does():
    report = harness.solve(SMALL, method="retrograde")
    done = run_harness("solve", SMALL, "--method", "retrograde", "--json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    for field in ("value", "plies", "positions", "classes", "method"):
        assert report[field] == printed[field], field


def test_solve_takes_the_commands_options():
    report = harness.solve(SMALL, method="proof", max_plies=9)
    assert report["method"] == "proof" and report["value"] == "x"


@pytest.mark.parametrize(
    ("options", "said"),
    [({"method": "fast"}, "invalid choice"), ({"colour": "red"}, "unrecognized arguments")],
)
def test_bad_options_are_one_harness_error(options, said):
    with pytest.raises(HarnessError, match=said) as caught:
        harness.solve(SMALL, **options)
    assert caught.value.exit_code == EXIT_USAGE


def test_certify_then_check_a_win_and_a_draw(tmp_path):
    win = harness.certify(SMALL, tmp_path / "win")
    assert win["winner"] == "x" and win["entries"] > 0
    report = harness.check(tmp_path / "win")
    assert report.ok and report.winner == "x" and report.hash == win["hash"]
    harness.certify(DRAW, tmp_path / "draw")
    report = harness.check(tmp_path / "draw", ruleset=DRAW)
    assert report.ok and report.value == "draw"


def test_check_rejects_a_damaged_certificate(tmp_path):
    harness.certify(SMALL, tmp_path / "c")
    shard = sorted((tmp_path / "c").glob("shard-*.jsonl.gz"))[0]
    shard.write_bytes(shard.read_bytes()[:-8])
    report = harness.check(tmp_path / "c")
    assert not report.ok and report.errors


def test_check_of_a_missing_folder_is_an_error(tmp_path):
    with pytest.raises(HarnessError, match="no such certificate directory"):
        harness.check(tmp_path / "nowhere")


def test_verify_returns_the_pipelines_report(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    import harness.verify.pipeline  # the package named verify: no clash with the function

    report = harness.verify_ruleset(DEFAULT, work=tmp_path / "out", manifests=tmp_path / "m")
    assert report.verdict in ("PASS", "INCOMPLETE")
    assert report.manifest.is_file()
    assert [s.name for s in report.steps][:3] == ["solve", "certify", "check"]
    assert "no published record" in report.comparison_line()


def test_import_harness_stays_light():
    done = run_harness_python("import sys, harness; print('harness.api' in sys.modules)")
    assert done == "False"


def run_harness_python(code: str) -> str:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return out.stdout.strip()


def test_no_api_name_is_a_module_of_the_package():
    """A function named like a subpackage would be replaced by it once that is imported."""
    import pkgutil

    modules = {m.name for m in pkgutil.iter_modules(harness.__path__)}
    assert not set(harness.API) & modules
    assert all(callable(getattr(harness, name)) for name in harness.API)
