"""The harness from Python: solve, certify, check and verify a ruleset in a notebook or a
script, with the options and the answers of the commands ``solve``, ``certify``, ``check``
and ``verify``.

``solve`` and ``certify`` take the command's options as keyword arguments (``time_limit=60``
for ``--time-limit 60``) and run the function the command runs, in this process; they return
the report the command prints with ``--json``. ``check`` returns the checker's report and
``verify_ruleset`` the pipeline's (``harness.verify`` is the package that holds the
pipeline). Bad input raises :class:`harness.errors.HarnessError` (a ``ValueError`` from
:mod:`harness.rules` for a bad ruleset id), whose ``exit_code`` is the command's.

>>> import harness
>>> report = harness.solve("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump")
>>> report["value"], report["method"]
('x', 'retrograde')
>>> harness.solve("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump", method="fast")
Traceback (most recent call last):
...
harness.errors.HarnessError: solve: argument --method: invalid choice: 'fast' (choose from ...)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

from harness.errors import EXIT_OK, HarnessError
from harness.rules.ruleset import DEFAULT_RULESET


def _args(command: str, positional: list[str], options: dict) -> argparse.Namespace:
    """The namespace the command line ``command POSITIONAL --option value…`` parses to."""
    from harness.cli import build_parser

    argv = [command, *positional]
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        argv += [flag] if value is True else [flag, str(value)]
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            return build_parser(command).parse_args(argv)
    except SystemExit:
        lines = [ln for ln in said.getvalue().splitlines() if ln.strip()]
        why = lines[-1].split("error: ", 1)[-1] if lines else "bad options"
        raise HarnessError(f"{command}: {why}") from None


def solve(ruleset: str, **options) -> dict:
    """The value of ``ruleset``'s initial position: the report of ``solve RULESET --json``
    (``value``, ``plies``, ``positions``, ``method``, …). Options as ``solve``'s, e.g.
    ``method="compact"``, ``workdir="out/w"``, ``time_limit=600``, ``memory_limit=8``."""
    from harness.solver.cli import solve_report

    return solve_report(_args("solve", [ruleset], options))


def certify(ruleset: str, out: str | Path, **options) -> dict:
    """Prove ``ruleset``'s value and write its certificate to ``out`` (a win's strategy, or a
    draw's two non-win sets); the report of ``certify RULESET --out OUT --json``. Options as
    ``certify``'s, e.g. ``time_limit=60``, ``method="pns"``, ``solution="sol.npz"``."""
    from harness.cert.cli import run_certify

    args = _args("certify", [ruleset, "--out", str(out), "--json"], options)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = run_certify(args)
    lines = [ln for ln in printed.getvalue().splitlines() if ln.startswith("{")]
    if code != EXIT_OK or not lines:
        error = HarnessError(f"certify {ruleset}: no certificate (exit code {code})")
        error.exit_code = code
        raise error
    return json.loads(lines[-1])


def check(directory: str | Path, ruleset: str | None = None):
    """Check the certificate in ``directory`` with the independent checker (the reference
    engine only): a report whose ``ok`` says whether it was accepted and whose ``errors``
    say why not. A win certificate or a draw's non-win sets, by the index's format."""
    from harness.cert.checker import check_certificate
    from harness.cert.nonwin_checker import check_nonwin
    from harness.cert.nonwin_format import FORMAT as NONWIN_FORMAT
    from harness.cert.nonwin_format import index_format

    directory = Path(directory)
    if not directory.is_dir():
        raise HarnessError(f"{directory}: no such certificate directory")
    if index_format(directory) == NONWIN_FORMAT:
        return check_nonwin(directory, ruleset=ruleset)
    return check_certificate(directory, ruleset=ruleset)


def verify_ruleset(
    ruleset: str = DEFAULT_RULESET,
    *,
    key: str | Path | None = None,
    work: str | Path = "out/verify",
    manifests: str | Path = "manifests",
    budget: float | None = None,
    quiet: bool = True,
):
    """The whole pipeline (solve, certify, check, corpus, render, Lean, a signed manifest),
    compared with the published record: a report with ``verdict``, ``exit_code``, ``steps``,
    ``manifest`` and ``comparison_line()``. Signed with ``key`` (default: your own key, made
    on first use). ``quiet=False`` prints each step as it runs."""
    from harness.manifest.keys import signing_key_or_new
    from harness.verify.pipeline import Pipeline

    pipeline = Pipeline(
        ruleset,
        signing_key_or_new(None if key is None else Path(key)),
        work_root=Path(work),
        manifests=Path(manifests),
        budget=budget,
        say=(lambda line: None) if quiet else None,
    )
    return pipeline.run()


__all__ = ["certify", "check", "solve", "verify_ruleset"]
