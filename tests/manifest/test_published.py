"""Finding the signer's key (harness.manifest.published): ``manifest verify`` and ``audit``
without ``--key`` take the key the envelope names from the published folder's keys/, from
./manifests/keys, from this checkout's manifests/keys, then the user's own key, from any
working folder, and say which key they used."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.cli import main
from harness.manifest.keys import default_key_path, generate, public_path
from harness.manifest.manifest import envelope_path, write_manifest
from harness.manifest.published import (
    CHECKOUT_MANIFESTS,
    claimed_signer,
    key_folders,
    own_key,
    signer_key,
)
from tests.verify.runs import make_project_key

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"


def _record(folder: Path, key) -> Path:
    path = folder / "r.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    write_manifest(path, {"format": "pop-harness/manifest/1", "kind": "verify"}, key)
    return path


def test_the_published_records_verify_from_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    record = REPO / "manifests" / f"{PUBLISHED}.yaml"
    assert main(["manifest", "verify", str(record)]) == 0
    out = capsys.readouterr().out
    signer = claimed_signer(envelope_path(record))
    assert f"signed by {signer[:16]}" in out
    assert str(REPO / "manifests" / "keys" / f"{signer[:16]}.pub") in out


def test_the_key_beside_the_record_comes_first(tmp_path, key, other_key, monkeypatch, capsys):
    published = tmp_path / "pub"
    record = _record(published, key)
    make_project_key(published, key)
    monkeypatch.chdir(tmp_path)
    assert key_folders(record)[0] == (published / "keys").resolve()
    assert signer_key(key.keyid, record).path == (published / "keys" / f"{key.keyid[:16]}.pub")
    assert main(["manifest", "verify", str(record)]) == 0
    assert str(published / "keys") in capsys.readouterr().out


def test_an_archive_finds_the_keys_of_its_published_folder(tmp_path, key):
    archive = tmp_path / "pub" / "archives" / "x.zip"
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"")
    make_project_key(tmp_path / "pub", key)
    assert (tmp_path / "pub" / "keys").resolve() in key_folders(archive)
    assert signer_key(key.keyid, archive) is not None


def test_the_users_own_key_comes_last(tmp_path, monkeypatch, capsys):
    mine = generate(default_key_path())  # under the tests' temporary XDG_CONFIG_HOME
    record = _record(tmp_path / "elsewhere", mine)
    monkeypatch.chdir(tmp_path)
    assert own_key().keyid == mine.keyid
    assert main(["manifest", "verify", str(record)]) == 0
    assert str(default_key_path()) in capsys.readouterr().out


def test_a_signer_found_nowhere_is_named(tmp_path, key, monkeypatch, capsys):
    record = _record(tmp_path / "elsewhere", key)
    monkeypatch.chdir(tmp_path)
    assert signer_key(key.keyid, record) is None
    assert main(["manifest", "verify", str(record)]) == 2
    err = capsys.readouterr().err.strip()
    assert key.keyid[:16] in err and "--key" in err and len(err.splitlines()) == 1


def test_a_wrong_key_given_is_still_a_failed_signature(tmp_path, key, other_key, capsys):
    record = _record(tmp_path / "pub", key)
    pub = tmp_path / "other.pub"
    shutil.copy(public_path(other_key.path), pub)
    assert main(["manifest", "verify", str(record), "--key", str(pub)]) == 1


def test_audit_finds_the_publisher_key_from_any_folder(tmp_path, monkeypatch, capsys):
    (archive,) = (REPO / "manifests" / "archives").glob(f"{PUBLISHED}-*.zip")
    monkeypatch.chdir(tmp_path)
    code = main(["audit", str(archive), "--out", str(tmp_path / "audit")])
    out = capsys.readouterr().out
    assert code in (0, 3), out
    assert "passed   manifest signature" in out
    assert str(REPO / "manifests" / "keys") in out


def test_the_checkout_folder_is_this_repository():
    assert CHECKOUT_MANIFESTS == REPO / "manifests"
