"""Fixtures: throw-away keys (never the user's), and a verified run made with the stand-in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.manifest.keys import SigningKey, generate
from harness.verify.pipeline import Pipeline, VerifyReport
from tests.manifest.standin import RULESET, StandIn, tiny_lean_project


@pytest.fixture(autouse=True)
def _no_user_keys(tmp_path_factory, monkeypatch):
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


@dataclass
class Run:
    root: Path
    work_root: Path
    manifests: Path
    report: VerifyReport
    runner: StandIn
    key: SigningKey

    @property
    def manifest(self) -> Path:
        """The run's own signed manifest (a run is not a publication)."""
        return self.work / "manifest.yaml"

    @property
    def published(self) -> Path:
        return self.manifests / f"{RULESET}.yaml"

    @property
    def work(self) -> Path:
        return self.work_root / RULESET


def make_project_key(manifests: Path, key: SigningKey) -> Path:
    """List ``key`` as a project key of ``manifests`` (its public half in keys/)."""
    from harness.manifest.keys import public_path
    from harness.manifest.published import key_file_name

    target = manifests / "keys" / key_file_name(key.keyid)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(public_path(key.path).read_bytes())
    return target


def make_run(root: Path, key: SigningKey, *, publish: bool = False, **standin) -> Run:
    project = tiny_lean_project(root / "lean-src")
    runner = StandIn(**standin)
    if publish:
        make_project_key(root / "manifests", key)
    pipe = Pipeline(
        RULESET,
        key,
        runner=runner,
        work_root=root / "out" / "verify",
        manifests=root / "manifests",
        lean_project=project,
        publish=publish,
        say=lambda line: None,
    )
    report = pipe.run()
    return Run(root, root / "out" / "verify", root / "manifests", report, runner, key)


@pytest.fixture
def verified(tmp_path, key) -> Run:
    """A verify run (stand-in stages, Lean not run) in ``tmp_path``."""
    return make_run(tmp_path, key)


@pytest.fixture
def verified_lean(tmp_path, key) -> Run:
    """A verify run whose (stand-in) Lean step passed."""
    return make_run(tmp_path, key, lean="pass")
