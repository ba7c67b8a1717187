"""Archives that leave their rendered Lean out: what seal pins, and how audit renders it again."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from harness.manifest.manifest import read_signed
from harness.manifest.rerender import rerender
from harness.manifest.seal import build_archive
from tests.manifest.test_audit import audit, fake_lean, statuses
from tests.verify.standin import StandIn

RENDERED = ("formal/Game.lean", "lean/Generated/Cert.lean", "lean/Generated/Main.lean")


def sealed(run, tmp_path: Path, **options) -> tuple[Path, str, dict]:
    data, name, doc = build_archive(run.manifest, run.work, run.key, **options)
    path = tmp_path / f"sealed-{len(options)}.zip"
    path.write_bytes(data)
    return path, name, doc


def test_rendered_lean_past_the_threshold_is_left_out_and_pinned(verified, tmp_path):
    path, name, doc = sealed(verified, tmp_path, rerender_above=0)
    verify_doc, _ = read_signed(verified.manifest, verified.key.public)
    pins = doc["rerendered"]["files"]
    assert set(RENDERED) <= set(pins)
    assert all(pins[rel] == verify_doc["files"][rel] for rel in pins)
    assert doc["rerendered"]["bytes"] == sum((verified.work / rel).stat().st_size for rel in pins)
    with zipfile.ZipFile(path) as zf:
        names = {n.split("/", 1)[1] for n in zf.namelist()}
        check_md = zf.read(f"{name}/CHECK.md").decode()
    assert not names & set(pins)
    assert {"lean/Generated/render.json", "certificate/index.yaml", "lean/Pop.lean"} <= names
    assert not set(pins) & set(doc["files"])
    assert "leaves out the Lean that `render` made" in check_md
    # Under the threshold nothing is left out, and the archive says nothing about it.
    whole_path, _, whole = sealed(verified, tmp_path)
    assert "rerendered" not in whole and set(RENDERED) <= set(whole["files"])
    with zipfile.ZipFile(whole_path) as zf:
        assert "leaves out" not in zf.read(f"{name}/CHECK.md").decode()


def test_the_audit_renders_the_lean_again_and_lean_checks_it(verified_lean, tmp_path):
    path, name, doc = sealed(verified_lean, tmp_path, rerender_above=0)
    lean = fake_lean(doc["check"]["expected_output"])
    verdict, code, report = audit(path, tmp_path / "audit", verified_lean, lean=lean)
    assert (verdict, code) == ("PASS", 0), report["differences"]
    assert statuses(report)["rerendered lean"] == "passed"
    model = (verified_lean.work / "formal" / "Game.lean").read_text()
    assert lean.seen["check"].startswith(model)
    kept = tmp_path / "audit" / "work" / name
    assert (kept / "lean" / "Generated" / "Main.lean").is_file()
    assert not (tmp_path / "audit" / "work" / ".rerender").exists()


class OtherRender(StandIn):
    """A render that makes different Lean from the same certificate."""

    def _render(self, args):
        done = super()._render(args)
        out = Path(self._opt(args, "--out"))
        (out / "Main.lean").write_text("theorem initial_force_win : True := trivial\n")
        return done


def test_a_render_that_differs_from_the_pins_fails(verified, tmp_path):
    path, _, _ = sealed(verified, tmp_path, rerender_above=0)
    verdict, code, report = audit(path, tmp_path / "audit", verified, runner=OtherRender())
    assert (verdict, code) == ("FAIL", 1)
    s = statuses(report)
    assert s["rerendered lean"] == "failed" and s["lean"] == "failed"
    detail = next(c["detail"] for c in report["checks"] if c["check"] == "rerendered lean")
    assert detail == "lean/Generated/Main.lean: the render differs from the pinned SHA-256"


def test_without_render_the_audit_says_so(verified, tmp_path):
    path, _, _ = sealed(verified, tmp_path, rerender_above=0)
    verdict, _, report = audit(
        path, tmp_path / "audit", verified, runner=StandIn(missing={"render"})
    )
    assert verdict == "FAIL"
    detail = next(c["detail"] for c in report["checks"] if c["check"] == "rerendered lean")
    assert "render` is not available" in detail


def _base_without_lean(run, tmp_path: Path) -> tuple[Path, dict]:
    """A copy of the run's folder with its rendered Lean removed, and the pins."""
    base = tmp_path / "base"
    shutil.copytree(run.work, base)
    doc, _ = read_signed(run.manifest, run.key.public)
    pins = {
        rel: sha
        for rel, sha in doc["files"].items()
        if rel == "formal/Game.lean"
        or (rel.startswith("lean/Generated/") and rel.endswith(".lean"))
    }
    for rel in pins:
        (base / rel).unlink()
    return base, pins


def test_rerender_puts_back_exactly_the_pinned_files(verified, tmp_path):
    base, pins = _base_without_lean(verified, tmp_path)
    assert rerender(base, pins, runner=StandIn(), scratch=tmp_path / "scratch") == []
    for rel in pins:
        assert (base / rel).read_bytes() == (verified.work / rel).read_bytes()
    assert not (tmp_path / "scratch").exists()


def test_a_flattened_model_that_differs_is_not_kept(verified, tmp_path):
    base, pins = _base_without_lean(verified, tmp_path)
    pins["formal/Game.lean"] = "0" * 64
    problems = rerender(base, pins, runner=StandIn(), scratch=tmp_path / "scratch")
    assert problems == ["formal/Game.lean: the flattened project differs from the pinned SHA-256"]
    assert not (base / "formal" / "Game.lean").exists()


def test_pins_outside_the_rendered_lean_are_refused_before_rendering(verified, tmp_path):
    base, pins = _base_without_lean(verified, tmp_path)
    runner = StandIn()
    for odd in ("lean/Generated/../../x.lean", "lean/Pop.lean", "/etc/passwd"):
        problems = rerender(base, {**pins, odd: "0" * 64}, runner=runner, scratch=tmp_path / "s")
        assert problems == [f"{odd}: not a file that render or the flattening makes"]
    assert runner.calls == []


def test_a_failed_render_is_named(verified, tmp_path):
    base, pins = _base_without_lean(verified, tmp_path)
    problems = rerender(base, pins, runner=StandIn(fail="render"), scratch=tmp_path / "s")
    assert problems == ["render failed: error: render stand-in was told to fail"]
    assert not any((base / rel).exists() for rel in pins)


def test_a_render_with_an_unpinned_module_fails(verified, tmp_path):
    class Extra(StandIn):
        def _render(self, args):
            done = super()._render(args)
            (Path(self._opt(args, "--out")) / "Extra.lean").write_text("-- more\n")
            return done

    base, pins = _base_without_lean(verified, tmp_path)
    problems = rerender(base, pins, runner=Extra(), scratch=tmp_path / "s")
    assert problems == ["lean/Generated/Extra.lean: rendered, but not pinned in the manifest"]
