"""Fixtures: throw-away keys (never the user's), and a verified run made with the stand-in
(``tests/verify/runs.py``). ``tests/manifest/conftest.py`` lends them to the manifest tests."""

from __future__ import annotations

import pytest

from harness.manifest.keys import SigningKey, generate
from tests.verify.runs import Run, make_run


@pytest.fixture(autouse=True)
def no_user_keys(tmp_path_factory, monkeypatch):
    """Point the default key location at an empty temporary folder: no test may read or
    write the real ~/.config/pop-harness."""
    cfg = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    monkeypatch.delenv("POP_HARNESS_KEY", raising=False)


@pytest.fixture
def key(tmp_path_factory) -> SigningKey:
    return generate(tmp_path_factory.mktemp("keys") / "signing-key.pem")


@pytest.fixture
def other_key(tmp_path_factory) -> SigningKey:
    return generate(tmp_path_factory.mktemp("other") / "other-key.pem")


@pytest.fixture
def verified(tmp_path, key) -> Run:
    """A verify run (stand-in stages, Lean not run) in ``tmp_path``."""
    return make_run(tmp_path, key)


@pytest.fixture
def verified_lean(tmp_path, key) -> Run:
    """A verify run whose (stand-in) Lean step passed."""
    return make_run(tmp_path, key, lean="pass")
