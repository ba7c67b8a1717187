"""Sessions for developing and verifying pop-harness (``nox -l`` lists them)."""

from __future__ import annotations

import shutil

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the whole test suite: pytest, then the JS engine's node tests."""
    session.install("-e", ".[test]")
    # Exit code 5 means pytest collected no test (e.g. a -k that matches nothing): not a failure.
    session.run("python", "-m", "pytest", *session.posargs, success_codes=[0, 5])
    if shutil.which("node") and any(_js_tests()):
        session.run("node", "--test", *_js_tests(), external=True)
    else:
        session.log("node or the JS tests are missing: skipping node --test")


def _js_tests() -> list[str]:
    from pathlib import Path

    return sorted(str(p) for p in Path("tests").rglob("*.test.mjs"))


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """Check style and common mistakes with ruff."""
    session.install("ruff")
    session.run("ruff", "check", "harness", "tests", "noxfile.py", *session.posargs)
