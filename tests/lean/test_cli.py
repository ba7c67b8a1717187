"""``python -m harness lean`` end to end against the stand-in: exit codes, output, result file."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.lean.cli import default_jobs, register_lean
from harness.lean.verdict import RESULT_FORMAT, load_result

from .standin.world import PIN, LeanWorld, world_fixture  # noqa: F401

REPO = Path(__file__).resolve().parents[2]


def cli(world: LeanWorld, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    run_env = {**(env or world.env), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "harness", "lean", *args],
        cwd=world.root,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_success_writes_the_result_and_exits_0(world: LeanWorld) -> None:
    world.scenario({"Generated.Corpus": {"guard_hits": "land=4"}})
    proc = cli(world, "--project", "lean", "--jobs", "2", "--memory", "2", "--timeout", "60")
    assert proc.returncode == 0, proc.stderr
    out = world.root / "out" / "lean" / "result.json"
    result = load_result(out)
    assert result["format"] == RESULT_FORMAT and result["ok"] is True
    assert result["limits"] == {
        "jobs": 2,
        "memory_bytes": 2 << 30,
        "memory_gib": 2.0,
        "memory_cap": "RLIMIT_AS",
        "timeout_seconds": 60.0,
    }
    assert result["guard_hits"] == {"land": 4}
    assert "passed          Generated.Shard0001" in proc.stdout
    assert "5 modules: 5 passed (0 from cache)" in proc.stdout
    assert (world.root / "out" / "lean" / "cache.json").is_file()
    assert (world.root / "out" / "lean" / "logs" / "Generated.Main.log").is_file()
    # Second run: everything from the cache.
    again = cli(world, "--project", "lean")
    assert again.returncode == 0
    assert "5 modules: 5 passed (5 from cache)" in again.stdout


def test_a_failing_module_exits_1_and_says_why(world: LeanWorld) -> None:
    world.scenario(
        {
            "Generated.Corpus": {"guard_hits": "a=1"},
            "Generated.Shard0003": {"axioms": {"shard0003_forceWin": ["sorryAx"]}},
        }
    )
    proc = cli(world, "--project", "lean", "--out", "r/result.json", "--no-cache")
    assert proc.returncode == 1
    assert "sorry           Generated.Shard0003" in proc.stdout
    assert "uses sorry: Pop.Generated.shard0003_forceWin" in proc.stdout
    assert "1 sorry" in proc.stdout and "1 skipped" in proc.stdout
    result = json.loads((world.root / "r" / "result.json").read_text())
    assert result["ok"] is False
    assert not (world.root / "r" / "cache.json").exists()


def test_no_toolchain_exits_4_with_one_line(world: LeanWorld, tmp_path: Path) -> None:
    env = {**world.env, "PATH": "/usr/bin:/bin", "ELAN_HOME": str(tmp_path / "no-elan")}
    proc = cli(world, "--project", "lean", env=env)
    assert proc.returncode == 4
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: no Lean toolchain")
    assert f"elan toolchain install {PIN}" in lines[0]
    assert not (world.root / "out").exists(), "nothing is written when nothing ran"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--project", "nowhere"], "no Lean project at nowhere"),
        (["--project", "lean", "--generated", "Rendered"], "render"),
    ],
)
def test_unusable_input_exits_2(world: LeanWorld, args: list[str], expected: str) -> None:
    proc = cli(world, *args)
    assert proc.returncode == 2
    assert expected in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_input_errors_come_before_the_toolchain_check(world: LeanWorld, tmp_path: Path) -> None:
    env = {**world.env, "PATH": "/usr/bin:/bin", "ELAN_HOME": str(tmp_path / "no-elan")}
    proc = cli(world, "--project", "lean", "--generated", "Rendered", env=env)
    assert proc.returncode == 2 and "render" in proc.stderr


def test_project_without_lakefile(world: LeanWorld) -> None:
    (world.project / "lakefile.toml").unlink()
    proc = cli(world, "--project", "lean")
    assert proc.returncode == 2 and "lakefile" in proc.stderr


@pytest.mark.parametrize(
    "args", [["--jobs", "0"], ["--memory", "-1"], ["--timeout", "nan"], ["--memory", "x"]]
)
def test_bad_options_exit_2(world: LeanWorld, args: list[str]) -> None:
    proc = cli(world, "--project", "lean", *args)
    assert proc.returncode == 2
    assert "error: argument" in proc.stderr


def test_help_documents_the_exit_codes() -> None:
    parser = argparse.ArgumentParser(prog="python -m harness")
    register_lean(parser.add_subparsers(dest="command"))
    sub = parser._subparsers._group_actions[0].choices["lean"]  # type: ignore[union-attr]
    text = sub.format_help()
    for needle in ("--jobs", "--memory", "--timeout", "--project", "exit codes", "\n  4  no Lean"):
        assert needle in text
    args = parser.parse_args(["lean", "--jobs", "3", "--memory", "1.5"])
    assert (args.jobs, args.memory, args.timeout) == (3, 1.5, 1800.0)
    assert args.project == Path("lean") and callable(args.func)


def test_default_jobs_is_bounded_by_memory() -> None:
    assert default_jobs(1e9) == 1
    assert 1 <= default_jobs(0.5) <= (os.cpu_count() or 1)
