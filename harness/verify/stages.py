"""Running the other stages of the harness: through their commands, in a child process.

The manifest stage never imports a solver, a checker or the Lean runner to call their
internals: it runs ``python -m harness COMMAND`` exactly as a user would, and reads what the
command prints or writes. The commands are the stable contract between stages; a child
process also keeps a crash or a memory blow-up in one stage from taking the pipeline down.

Which commands exist is read from the command line parser itself, so a stage that has not
landed yet is named as missing instead of failing halfway through a run.

>>> r = HarnessRunner()
>>> "corpus" in r.commands()
True
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import harness

REPO = Path(harness.__file__).resolve().parents[1]

# Which package provides each command, to name it when the command is missing.
COMMAND_STAGE = {
    "solve": "harness/solver",
    "certify": "harness/cert",
    "check": "harness/cert",
    "corpus": "harness/rules",
    "render": "harness/lean",
    "lean": "harness/lean",
}


@dataclass
class Completed:
    """How one command ended: exit code, captured stdout, the tail of stderr, wall time."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def last_error_line(self) -> str:
        """The most telling line of stderr (an ``error:`` line if any), for one-line reports."""
        lines = [ln.strip() for ln in self.stderr.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.lower().startswith("error")]
        if errors:
            return errors[-1]
        if lines:
            return lines[-1]
        out = [ln.strip() for ln in self.stdout.splitlines() if ln.strip()]
        return out[-1] if out else f"exit code {self.returncode}"


class HarnessRunner:
    """Runs ``python -m harness ARGS`` with this interpreter, from the repository root.

    The child's stderr is copied to ours as it arrives when ours is a terminal (so its
    progress bars show), and its last lines are kept for error messages either way.
    """

    def __init__(self, python: str = sys.executable, cwd: Path = REPO) -> None:
        self.python = python
        self.cwd = Path(cwd)
        self._commands: set[str] | None = None
        self._options: dict[str, set[str]] = {}

    def _parser_info(self) -> None:
        from harness.cli import build_parser

        parser = build_parser()
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        self._commands = set(sub.choices)
        for name, p in sub.choices.items():
            self._options[name] = set(p._option_string_actions)

    def commands(self) -> set[str]:
        """The subcommands ``python -m harness`` offers right now."""
        if self._commands is None:
            self._parser_info()
        assert self._commands is not None
        return set(self._commands)

    def options(self, command: str) -> set[str]:
        """The option strings of one subcommand (empty when it does not exist)."""
        if self._commands is None:
            self._parser_info()
        return set(self._options.get(command, ()))

    def run(self, args: list[str], *, timeout: float | None = None) -> Completed:
        env = dict(os.environ)
        # The package may be used from a checkout without being installed.
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        )
        start = time.monotonic()
        proc = subprocess.Popen(
            [self.python, "-m", "harness", *args],
            cwd=self.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        tail: deque[bytes] = deque(maxlen=200)
        live = sys.stderr.isatty()

        def pump() -> None:
            assert proc.stderr is not None
            for chunk in iter(lambda: proc.stderr.readline(), b""):
                tail.append(chunk)
                if live:
                    sys.stderr.buffer.write(chunk)
                    sys.stderr.flush()

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        assert proc.stdout is not None
        try:
            stdout = proc.stdout.read()
            proc.wait(timeout=timeout)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        reader.join()
        return Completed(
            args=list(args),
            returncode=proc.returncode,
            stdout=stdout.decode("utf-8", "replace"),
            stderr=b"".join(tail).decode("utf-8", "replace"),
            seconds=round(time.monotonic() - start, 3),
        )
