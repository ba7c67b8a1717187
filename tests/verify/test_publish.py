"""What is published in ``manifests/``, checked as a stranger would: with the keys the
repository publishes, never with the reader's own key."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from harness.cli import main
from harness.manifest.manifest import read_signed
from harness.manifest.published import claimed_signer, key_file_name, publisher_keys
from harness.manifest.seal import build_archive

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "manifests"
RECORDS = [
    *sorted(MANIFESTS.glob("*.yaml")),
    *sorted((MANIFESTS / "open").glob("*.yaml")),
    *sorted((MANIFESTS / "solved").glob("*.yaml")),
]
ARCHIVES = sorted((MANIFESTS / "archives").glob("*.zip"))


def leaves_lean_out(archive: Path) -> bool:
    """Whether a published archive leaves its rendered Lean out (harness.manifest.rerender):
    its audit renders it again, 5x5 c5 reincarnation's for about an hour."""
    with zipfile.ZipFile(archive) as zf:
        return not any(n.endswith("/formal/Game.lean") for n in zf.namelist())


def audited(archive: Path):
    """An archive as a test parameter: marked slow where its audit renders the Lean again."""
    marks = [pytest.mark.slow] if leaves_lean_out(archive) else []
    return pytest.param(archive, marks=marks, id=archive.name[:20])


def test_the_published_keys_are_named_by_their_id():
    keys = publisher_keys(MANIFESTS / "keys")
    assert keys, "no publisher key in manifests/keys"
    for kid, key in keys.items():
        assert key.path.name == key_file_name(kid)


@pytest.mark.parametrize("record", RECORDS, ids=lambda p: p.name)
def test_every_published_manifest_verifies_with_the_key_it_names(record, capsys):
    signer = claimed_signer(record.with_name(record.name.replace(".yaml", ".dsse.json")))
    key = publisher_keys(MANIFESTS / "keys")[signer]
    read_signed(record, key.public)
    assert main(["manifest", "verify", str(record), "--key", str(key.path)]) == 0
    assert "signature OK" in capsys.readouterr().out


@pytest.mark.parametrize("archive", [audited(a) for a in ARCHIVES])
def test_every_committed_archive_audits_without_a_key(archive, tmp_path, monkeypatch, capsys):
    """A stranger's audit: no --key, their own fresh signing key; the publisher key comes from
    manifests/keys. Lean cannot run here, so INCOMPLETE; anything failed would be FAIL."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.chdir(REPO)
    code = main(["audit", str(archive), "--out", str(tmp_path / "audit")])
    out = capsys.readouterr().out
    assert code in (0, 3), out
    assert "passed   manifest signature   signed by publisher key" in out
    assert "manifests/keys/" in out and "failed" not in out


def test_an_audit_without_any_published_key_is_incomplete_never_fail(tmp_path, capsys):
    alone = tmp_path / "elsewhere" / "x.zip"
    alone.parent.mkdir()
    shutil.copyfile(ARCHIVES[0], alone)
    empty = tmp_path / "nokeys"
    empty.mkdir()
    code = main(["audit", str(alone), "--keys", str(empty), "--out", str(tmp_path / "a")])
    out = capsys.readouterr().out
    assert code == 3, out
    assert "not run  manifest signature   the archive names signer" in out
    assert "failed" not in out


def test_audit_folders_are_named_by_the_archive_sha256(tmp_path, monkeypatch, capsys):
    import hashlib

    monkeypatch.chdir(tmp_path)
    for archive in ARCHIVES[:1]:
        main(["audit", str(archive), "--keys", str(MANIFESTS / "keys")])
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        assert (tmp_path / "out" / "audit" / digest / "audit.yaml").is_file()
    capsys.readouterr()


def test_publish_writes_manifest_and_archive_with_a_project_key(verified, tmp_path, capsys):
    from tests.verify.runs import make_project_key

    manifests = tmp_path / "published"
    args = [
        "publish",
        "--work",
        str(verified.work_root),
        "--manifests",
        str(manifests),
        "--key",
        str(verified.key.path),
    ]
    from tests.verify.standin import RULESET

    args.insert(1, RULESET)
    assert main(args) == 2  # not a project key yet
    assert "is not a project key" in capsys.readouterr().err and not manifests.exists()
    make_project_key(manifests, verified.key)
    # A solve record of the ruleset (no certificate) is superseded by the certified result.
    import yaml

    result = yaml.safe_load(verified.manifest.read_text())["result"]
    solved = manifests / "solved" / f"{RULESET}.yaml"
    solved.parent.mkdir()
    other = {"value": "draw" if result["value"] != "draw" else "x", "plies": 3}
    solved.write_text(yaml.safe_dump({"kind": "solve", "result": other}))
    assert main(args) == 2  # the two solvers disagree: nothing is published
    assert "find which solver is wrong" in capsys.readouterr().err
    assert not (manifests / f"{RULESET}.yaml").exists()
    solved.write_text(yaml.safe_dump({"kind": "solve", "result": result}))
    solved.with_name(f"{RULESET}.dsse.json").write_text("{}")
    assert main(args) == 0
    assert not solved.exists() and not solved.with_name(f"{RULESET}.dsse.json").exists()
    assert f"removed   {solved}" in capsys.readouterr().out
    data, name, _ = build_archive(verified.manifest, verified.work, verified.key)
    assert (manifests / "archives" / f"{name}.zip").read_bytes() == data
    assert (manifests / f"{RULESET}.yaml").read_bytes() == verified.manifest.read_bytes()
