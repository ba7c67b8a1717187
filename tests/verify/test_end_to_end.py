"""The real thing: verify -> seal -> audit with every stage's own command.

Skipped (naming what is missing) until every stage's command exists; from then on it is
the check that the stages and this one agree on their contracts.
"""

from __future__ import annotations

import hashlib

import pytest

from harness.manifest.audit import Auditor, Expectations
from harness.manifest.manifest import read_signed
from harness.manifest.seal import build_archive
from harness.rules.ruleset import DEFAULT_RULESET
from harness.verify.pipeline import NEEDED, Pipeline
from harness.verify.stages import HarnessRunner


@pytest.fixture(scope="module")
def runner() -> HarnessRunner:
    runner = HarnessRunner()
    missing = [c for c in NEEDED if c not in runner.commands()]
    if missing:
        pytest.fail(f"stages missing: python -m harness {', '.join(missing)}")
    return runner


def audit_bytes(data: bytes, archive, key, runner):
    """Audit the archive ``data`` written to ``archive``, into ``archive`` + ``.audit``."""
    archive.write_bytes(data)
    auditor = Auditor(
        archive,
        archive.with_suffix(".audit"),
        verify_key=key.public,
        sign_key=key,
        expect=Expectations(archive_sha256=hashlib.sha256(data).hexdigest()),
        runner=runner,
    )
    return auditor.run()


DRAW_3X4 = "pop1-3x4-c3-torus-continue-binempty-king-nozero-nojump"


@pytest.mark.parametrize("ruleset", [DEFAULT_RULESET.id, DRAW_3X4])
def test_verify_seal_audit(ruleset, runner, tmp_path, key):
    """A win (the default ruleset, x in 7) and a draw (3x4 torus: two non-win sets)."""
    pipe = Pipeline(
        ruleset,
        key,
        runner=runner,
        work_root=tmp_path / "out",
        manifests=tmp_path / "manifests",
        say=lambda line: None,
    )
    report = pipe.run()
    failed = [s for s in report.steps if s.status == "failed"]
    assert report.verdict in ("PASS", "INCOMPLETE"), failed
    # INCOMPLETE only because Lean could not run here.
    if report.verdict == "INCOMPLETE":
        assert [s.name for s in report.steps if s.status != "passed"] == ["lean"]
    assert report.published is None and not (tmp_path / "manifests").exists()
    doc, _ = read_signed(report.manifest, key.public)
    assert doc["certificate"]["hash"] and doc["result"]["value"] == doc["certificate"]["value"]
    assert doc["final_theorem"]["name"]
    if ruleset == DRAW_3X4:
        assert doc["result"]["value"] == "draw" and doc["certificate"]["format"] == 2
        assert doc["final_theorem"]["name"].endswith("initial_draw")
        statement = doc["final_theorem"]["statement"]
        assert "¬ ForceWin (Geo.of ⟨3, 4, 3, .torus⟩) Side.x" in statement
        assert "¬ ForceWin (Geo.of ⟨3, 4, 3, .torus⟩) Side.o" in statement
        assert set(doc["certificate"]["sets"]) == {"x", "o"}

    data, name, _ = build_archive(report.manifest, report.work, key)
    assert build_archive(report.manifest, report.work, key)[0] == data  # deterministic
    verdict, code, audit = audit_bytes(data, tmp_path / f"{name}.zip", key, runner)
    checks = {c["check"]: c["status"] for c in audit["checks"]}
    assert checks["python check"] == "passed" and checks["members"] == "passed"
    if verdict == "INCOMPLETE":
        assert [c for c, s in checks.items() if s != "passed"] == ["lean"], audit["checks"]
        assert code == 3
    else:
        assert (verdict, code) == ("PASS", 0), audit["differences"]

    # The same run sealed without its rendered Lean: the audit renders it again with the
    # real `render` and flattening, byte for byte the pinned files.
    data, name, sealed = build_archive(report.manifest, report.work, key, rerender_above=0)
    pins = sealed["rerendered"]["files"]
    assert "formal/Game.lean" in pins and "lean/Generated/Main.lean" in pins
    again, _, audit = audit_bytes(data, tmp_path / f"{name}-lean-left-out.zip", key, runner)
    checks = {c["check"]: c["status"] for c in audit["checks"]}
    assert checks["rerendered lean"] == "passed", audit["checks"]
    assert again == verdict
    model = tmp_path / f"{name}-lean-left-out.audit" / "work" / name / "formal" / "Game.lean"
    assert hashlib.sha256(model.read_bytes()).hexdigest() == pins["formal/Game.lean"]
