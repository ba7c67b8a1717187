"""Run ``python -m harness`` in a child process, as a user would: the one helper the tests
that drive the command line share."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_harness(
    *args: str,
    cwd: Path = REPO,
    env: dict | None = None,
    timeout: float = 600,
    stdin: str | None = None,
    preexec_fn=None,
) -> subprocess.CompletedProcess:
    """``python -m harness ARGS`` in ``cwd`` with ``env`` (and ``stdin`` as its input, and
    ``preexec_fn`` run in the child before it starts, e.g. to set a resource limit); output
    captured as text, the exit code left for the caller to judge."""
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec_fn,
        check=False,
    )
