"""A verify run made with the stand-in stages, for the tests of verify, seal, audit and the
site: the run, and listing a key as a project key of a published folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.manifest.keys import SigningKey
from harness.verify.pipeline import Pipeline, VerifyReport
from tests.verify.standin import RULESET, StandIn, tiny_lean_project


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
