"""The shared exit-code taxonomy and the guard that keeps tracebacks from users."""

from __future__ import annotations

import errno
import subprocess
import sys

import pytest

import harness.cli as cli
from harness.cli import build_parser, main, run_guarded
from harness.errors import EXIT_CODES, EXIT_INTERNAL


def _commands(parser):
    for action in parser._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict):
            for name, sub in action.choices.items():
                yield name, sub
                yield from _commands(sub)


def test_every_command_help_gives_the_exit_codes():
    parser = build_parser()
    names = []
    for name, sub in _commands(parser):
        names.append(name)
        assert " ".join(EXIT_CODES.split()) in " ".join(sub.format_help().split()), name
    assert {"verify", "check", "certify", "solve", "actions", "step", "audit", "site"} <= set(names)


def test_every_help_lists_the_exit_codes_one_per_line_and_reads_as_plain_text():
    for name, sub in _commands(build_parser()):
        text = sub.format_help()
        assert "\n  0    success\n" in text and "\n  130  interrupted" in text, name
        assert "``" not in text and ":func:" not in text and ":mod:" not in text, name


def test_every_option_of_results_has_help():
    results = dict(_commands(build_parser()))["results"]
    for action in results._actions:
        assert action.help, action.option_strings


def test_readme_gives_the_same_exit_codes():
    from pathlib import Path

    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text().split())
    for code in ("| 0 | success", "| 3 | a budget ran out", "| 4 | no Lean", "| 5 | an open"):
        assert code in readme
    assert f"| {EXIT_INTERNAL} | internal error" in readme


def test_an_unexpected_exception_is_one_line_and_a_log(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(cli.LOG_DIR_ENV, str(tmp_path / "logs"))

    def bug():
        raise RuntimeError("something\nunexpected")

    assert run_guarded(bug) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "internal error: RuntimeError: something unexpected" in err
    (log,) = (tmp_path / "logs").iterdir()
    assert str(log) in err
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "def bug" not in err
    assert "raise RuntimeError" in text


def test_a_log_folder_that_cannot_be_written_falls_back_to_tmp(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(cli.LOG_DIR_ENV, str(blocker / "logs"))
    monkeypatch.setattr(cli.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    assert run_guarded(lambda: 1 / 0) == EXIT_INTERNAL
    assert "ZeroDivisionError" in capsys.readouterr().err
    assert len(list((tmp_path / "tmp").iterdir())) == 1


@pytest.mark.parametrize(
    "code, hint",
    [(errno.ENOSPC, "the disk is full"), (errno.EROFS, "read-only"), (errno.EACCES, "ermission")],
)
def test_file_system_errors_are_one_line_and_exit_2(code, hint, capsys):
    def write():
        raise OSError(code, __import__("os").strerror(code), "out/x/.y.tmp")

    assert run_guarded(write) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: out/x/.y.tmp: ") and hint in err and err.count("\n") == 1


def test_a_command_that_crashes_in_a_subprocess_shows_no_traceback(tmp_path):
    # A command whose function raises: run through the real entry point.
    code = (
        "import sys, harness.rules.service as s\n"
        "s.serve = lambda *a: (_ for _ in ()).throw(LookupError('boom'))\n"
        "from harness.cli import main\n"
        "sys.exit(main(['rules', 'actions']))\n"
    )
    env = {"POP_HARNESS_LOG_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    import os

    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    done = subprocess.run(
        [sys.executable, "-c", code], input="", capture_output=True, text=True, env=env
    )
    assert done.returncode == EXIT_INTERNAL, done.stderr
    assert "Traceback" not in done.stderr and "LookupError: boom" in done.stderr
    assert len(list(tmp_path.iterdir())) == 1


def test_usage_errors_still_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2


def test_a_command_loads_only_the_stages_up_to_its_own():
    # `solve` is the solver stage's: the later stages (cert, lean, manifest, site, results)
    # and what they import are not loaded, and the help is the command's own.
    code = (
        "import sys, contextlib, io\n"
        "from harness.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try: main(['solve', '--help'])\n"
        "    except SystemExit: pass\n"
        "assert 'usage: python -m harness solve' in out.getvalue()\n"
        "late = [m for m in sys.modules if m.split('.')[:2] in (['harness', 'cert'],\n"
        "        ['harness', 'manifest'], ['harness', 'site'], ['harness', 'results'])\n"
        "        or m in ('cryptography', 'jinja2')]\n"
        "print(sorted(late))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_a_misspelt_command_is_told_among_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["solv"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'solv'" in err and "'verify'" in err and "'solve'" in err
