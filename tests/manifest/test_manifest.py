"""Signed manifests on disk and ``python -m harness manifest verify``."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.manifest import dsse
from harness.manifest.fsutil import sha256_file
from harness.manifest.keys import public_path
from harness.manifest.manifest import (
    ManifestError,
    check_files,
    dump_yaml,
    envelope_path,
    read_signed,
    write_manifest,
)

DOC = {"kind": "verify", "verdict": "PASS", "ruleset": "pop1-4x4", "files": {}}


def test_written_manifest_verifies_and_is_not_reserialized(tmp_path, key):
    path = tmp_path / "m.yaml"
    data = write_manifest(path, DOC, key)
    assert path.read_bytes() == data
    doc, payload = read_signed(path, key.public)
    assert payload == data and doc["ruleset"] == "pop1-4x4"
    assert doc["signer"]["keyid"] == key.keyid
    # The envelope alone verifies too, and carries the same bytes.
    doc2, payload2 = read_signed(envelope_path(path), key.public)
    assert payload2 == data and doc2 == doc


def test_one_edited_byte_in_the_yaml_is_caught(tmp_path, key):
    path = tmp_path / "m.yaml"
    data = write_manifest(path, DOC, key)
    path.write_bytes(data.replace(b"PASS", b"FAIL"))
    with pytest.raises(dsse.SignatureError, match="differs from the payload"):
        read_signed(path, key.public)


def test_unsigned_yaml_is_refused(tmp_path, key):
    path = tmp_path / "m.yaml"
    write_manifest(path, DOC, key)
    envelope_path(path).unlink()
    with pytest.raises(ManifestError, match="unsigned"):
        read_signed(path, key.public)


def test_signed_payload_must_be_a_manifest(tmp_path, key):
    env = dsse.sign(b"just: yaml\n", dsse.MANIFEST_TYPE, key)
    path = tmp_path / "x.dsse.json"
    path.write_bytes(env)
    with pytest.raises(ManifestError, match="not a pop-harness/manifest/1"):
        read_signed(path, key.public)


def test_dump_yaml_is_deterministic_and_keeps_order():
    doc = {"z": 1, "a": {"list": ["propext", "Quot.sound"], "text": "two\nlines"}}
    assert dump_yaml(doc) == dump_yaml(json.loads(json.dumps(doc)))
    text = dump_yaml(doc).decode()
    assert text.index("z:") < text.index("a:")
    assert "[propext, Quot.sound]" in text and "text: |-" in text


def test_check_files_reports_missing_changed_and_escaping_paths(tmp_path):
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    files = {
        "a.txt": sha256_file(tmp_path / "a.txt"),
        "b.txt": "0" * 64,
        "c.txt": "0" * 64,
        "../etc/passwd": "0" * 64,
    }
    problems = check_files(files, tmp_path)
    assert problems == [
        "'../etc/passwd': not a relative path inside the folder",
        "b.txt: SHA-256 differs from the manifest",
        "c.txt: missing",
    ]


def _cli(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out + out.err


def test_cli_manifest_verify_exit_codes(tmp_path, key, other_key, capsys):
    path = tmp_path / "m.yaml"
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "f.txt").write_text("hello")
    doc = dict(DOC, files={"f.txt": sha256_file(tmp_path / "files" / "f.txt")})
    data = write_manifest(path, doc, key)
    pub = str(public_path(key.path))
    code, out = _cli(["manifest", "verify", str(path), "--key", pub], capsys)
    assert code == 0 and "signature OK" in out
    code, out = _cli(
        ["manifest", "verify", str(path), "--key", pub, "--files", str(tmp_path / "files")], capsys
    )
    assert code == 0 and "files OK: 1" in out
    # A wrong key: the check fails (1), one clear line.
    code, out = _cli(["manifest", "verify", str(path), "--key", str(other_key.path)], capsys)
    assert code == 1 and "no signature verifies" in out
    # A changed file: 1.
    (tmp_path / "files" / "f.txt").write_text("HELLO")
    code, out = _cli(
        ["manifest", "verify", str(path), "--key", pub, "--files", str(tmp_path / "files")], capsys
    )
    assert code == 1 and "f.txt: SHA-256 differs" in out
    # A truncated envelope cannot be read at all: 2.
    env = envelope_path(path)
    env.write_bytes(env.read_bytes()[:100])
    code, out = _cli(["manifest", "verify", str(env), "--key", pub], capsys)
    assert code == 2 and "not complete JSON" in out and out.count("\n") == 1
    assert path.read_bytes() == data  # nothing was rewritten
