"""The README's quick start in a fresh clone, as a stranger runs it: a fresh signing key, the
embedded ruleset verified and REPRODUCED against the published record, every committed
manifest checked with the committed keys, the site built from what is published, and
``git status`` clean at the end (the installed wheel: ``tests/test_wheel.py``).

The clone is of the committed ``HEAD`` (what CI checks out). ``pip install -e .`` is left
out: it would re-point this machine's editable install; the clone's package is put first on
``PYTHONPATH`` instead, which is what the editable install does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.manifest.published import claimed_signer, publisher_keys
from tests.harness_cli import run_harness

REPO = Path(__file__).resolve().parents[1]


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


def _harness(clone: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return run_harness(*args, cwd=clone, env=env)


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, dict]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    root = tmp_path_factory.mktemp("fresh")
    target = root / "pop-harness"
    _git("clone", "--quiet", "--no-hardlinks", str(REPO), str(target), cwd=root)
    env = dict(os.environ, PYTHONPATH=str(target), XDG_CONFIG_HOME=str(root / "config"))
    env.pop("POP_HARNESS_KEY", None)
    return target, env


def _lean_sources_changed(target: Path, ruleset: str) -> list[str]:
    """The Lean files (the model's sources and the rendered modules) that differ between the
    published archive and the run the quick start just made."""
    import zipfile

    (archive,) = (target / "manifests" / "archives").glob(f"{ruleset}-*.zip")
    changed = []
    with zipfile.ZipFile(archive) as zf:
        for name in zf.namelist():
            rel = name.split("/", 1)[1]
            if rel.startswith("lean/") and rel.endswith(".lean"):
                here = target / "out" / "verify" / ruleset / rel
                if not here.is_file() or here.read_bytes() != zf.read(name):
                    changed.append(rel)
    return changed


def test_the_quick_start_reproduces_and_leaves_the_tree_clean(clone):
    """REPRODUCED, or DIFFERS in the model hash alone, and then only because the Lean model
    (its sources or the renderer's modules) changed since the record was published (a
    published record is never rewritten to match: a maintainer republishes on purpose)."""
    from harness.rules.ruleset import DEFAULT_RULESET

    target, env = clone
    done = _harness(target, env, "verify")
    out = done.stdout + done.stderr
    assert "made a new signing key" in done.stdout
    line = next(
        (ln for ln in done.stdout.splitlines() if ln.startswith(("REPRODUCED", "DIFFERS"))), ""
    )
    if line.startswith("REPRODUCED"):
        assert done.returncode in (0, 3), out  # 3: INCOMPLETE, Lean cannot run here
        assert "certificate hash, model hash and result agree" in line
    else:
        assert line.startswith("DIFFERS"), out[-2000:]
        assert done.returncode == 1
        differences = line.split(": ", 1)[1].split("; ")
        assert [d.split(" ", 2)[:2] for d in differences] == [["model", "hash"]], line
        assert _lean_sources_changed(target, DEFAULT_RULESET.id), line
    assert _git("status", "--porcelain", "--untracked-files=all", cwd=target) == ""


def test_every_committed_manifest_verifies_with_the_committed_keys(clone):
    target, env = clone
    keys = publisher_keys(target / "manifests" / "keys")
    records = sorted((target / "manifests").glob("*.yaml"))
    records += sorted((target / "manifests" / "open").glob("*.yaml"))
    assert records
    for record in records:
        signer = claimed_signer(record.with_name(record.name.replace(".yaml", ".dsse.json")))
        assert signer in keys, f"{record.name}: signed by a key not in manifests/keys"
        done = _harness(
            target, env, "manifest", "verify", str(record), "--key", str(keys[signer].path)
        )
        assert done.returncode == 0, done.stderr


def test_the_site_from_a_fresh_clone_shows_every_published_result(clone):
    target, env = clone
    done = _harness(target, env, "site", "--out", "out/site")
    assert done.returncode == 0, done.stderr
    site = target / "out" / "site"
    for record in sorted((target / "manifests").glob("*.yaml")):
        page = (site / f"replay-{record.stem}.html").read_text(encoding="utf-8")
        assert 'id="replay-data"' in page and "cannot be shown" not in page, record.stem
    assert list((site / "keys").glob("*.pub"))
    assert _git("status", "--porcelain", "--untracked-files=all", cwd=target) == ""
