"""Signing keys: where they go, who may read them, and that they are never replaced."""

from __future__ import annotations

import stat
import subprocess

import pytest

from harness.cli import main
from harness.manifest.keys import (
    KeyFileError,
    default_key_path,
    generate,
    keyid,
    load_private,
    load_public,
    load_verifying_key,
    public_path,
)


def test_generate_writes_private_0600_and_public(tmp_path):
    path = tmp_path / "k" / "signing-key.pem"
    key = generate(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert b"PRIVATE KEY" in path.read_bytes()
    assert b"PUBLIC KEY" in public_path(path).read_bytes()
    assert load_public(public_path(path)) == key.public
    assert load_private(path).keyid == key.keyid == keyid(key.public)


def test_generate_never_replaces_a_key(tmp_path):
    path = tmp_path / "signing-key.pem"
    first = generate(path)
    with pytest.raises(KeyFileError, match="already exists"):
        generate(path)
    assert load_private(path).keyid == first.keyid


def test_generate_refuses_inside_a_git_work_tree(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    with pytest.raises(KeyFileError, match="inside the git work tree"):
        generate(tmp_path / "repo" / "keys" / "signing-key.pem")
    assert not (tmp_path / "repo" / "keys" / "signing-key.pem").exists()


def test_default_location_is_outside_the_repo(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert default_key_path() == tmp_path / "cfg" / "pop-harness" / "signing-key.pem"
    monkeypatch.setenv("POP_HARNESS_KEY", str(tmp_path / "elsewhere.pem"))
    assert default_key_path() == tmp_path / "elsewhere.pem"


def test_bad_key_files_are_one_line_errors(tmp_path):
    junk = tmp_path / "junk.pem"
    junk.write_text("-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n")
    with pytest.raises(KeyFileError, match="junk.pem"):
        load_public(junk)
    with pytest.raises(KeyFileError, match="no private key there"):
        load_private(tmp_path / "missing.pem")
    with pytest.raises(KeyFileError, match="pass --key"):
        load_verifying_key(None)  # no default key in this test's config folder


def test_cli_generate_show_and_exist_ok(tmp_path, capsys):
    path = tmp_path / "cli.pem"
    assert main(["keys", "generate", "--key", str(path)]) == 0
    kid = load_private(path).keyid
    assert main(["keys", "generate", "--key", str(path)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["keys", "generate", "--key", str(path), "--exist-ok"]) == 0
    assert main(["keys", "show", "--key", str(path)]) == 0
    out = capsys.readouterr().out
    assert "BEGIN PUBLIC KEY" in out and kid in out and "PRIVATE" not in out
    assert main(["keys", "show", "--key", str(public_path(path))]) == 0
    assert kid in capsys.readouterr().out
