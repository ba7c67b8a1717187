"""noxfile.py: the sessions run on whichever Python >= 3.11 there is, and nox fails instead
of skipping when there is none. Loaded with a stand-in ``nox`` module: the test environment
does not install nox itself."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

NOXFILE = Path(__file__).resolve().parents[2] / "noxfile.py"


@pytest.fixture
def noxfile(monkeypatch):
    options = types.SimpleNamespace()
    sessions: dict = {}

    def session(*args, **kwargs):
        def register(fn):
            sessions[fn.__name__] = kwargs
            return fn

        return register(args[0]) if args and callable(args[0]) else register

    fake = types.ModuleType("nox")
    fake.options, fake.session, fake.Session = options, session, object
    monkeypatch.setitem(sys.modules, "nox", fake)
    spec = importlib.util.spec_from_file_location("noxfile_under_test", NOXFILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, options, sessions


def test_a_missing_interpreter_fails_the_run(noxfile):
    _, options, _ = noxfile
    assert options.error_on_missing_interpreters is True


def test_every_python_session_runs_on_the_chosen_python(noxfile):
    module, _, sessions = noxfile
    assert module.PYTHON == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert {"tests", "lint"} <= set(sessions)
    assert all(kw.get("python") == module.PYTHON for kw in sessions.values())


@pytest.mark.parametrize(
    ("running", "on_path", "chosen"),
    [
        ((3, 13, 1), set(), "3.13"),  # the Python running nox, when new enough
        ((3, 11, 7), {"python3.12"}, "3.11"),
        ((3, 10, 4), {"python3.12", "python3.13"}, "3.13"),  # else the newest on PATH
        ((3, 10, 4), {"python3.10"}, "3.11"),  # none: nox reports 3.11 missing, and fails
    ],
)
def test_the_python_chosen(noxfile, running, on_path, chosen):
    module, _, _ = noxfile
    assert module.supported_python(running, lambda name: name if name in on_path else None) == (
        chosen
    )
