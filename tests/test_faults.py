"""Writers under faults (issue 14): a full disk, a read-only file system, an output path that
is a file, a killed run's leftovers. Every case ends in the old result or the new one, a
one-line error and exit 2, never a partial folder or a traceback.

ENOSPC and EROFS are injected (monkeypatched system calls) everywhere, and also produced for
real on small tmpfs mounts where this machine allows mounting (root); those tests are
skipped with the reason otherwise.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import harness.atomic as atomic
from harness.atomic import (
    atomic_file,
    clean_leftovers,
    staging_dir,
    write_atomic,
    write_atomic_many,
)
from harness.cli import main

RS = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
ROOT = Path(__file__).parents[1]


def _raiser(code: int):
    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    return fail


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"/"
        for p in sorted(folder.rglob("*"))
    }


# --- fault injection ---------------------------------------------------------------------


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EIO])
@pytest.mark.parametrize("call", ["fsync", "replace"])  # a real write() fails on tmpfs below
def test_a_file_write_that_fails_keeps_the_old_file(tmp_path, monkeypatch, code, call):
    target = tmp_path / "result.json"
    write_atomic(target, b"old")
    monkeypatch.setattr(atomic.os, call, _raiser(code))
    with pytest.raises(OSError) as err:
        write_atomic(target, b"new" * 100_000)
    assert err.value.errno == code and err.value.filename == str(target)
    monkeypatch.undo()
    assert _tree(tmp_path) == {"result.json": b"old"}


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_folder_build_that_fails_keeps_the_old_folder(tmp_path, monkeypatch, code):
    out = tmp_path / "cert"
    with staging_dir(out) as tmp:
        (tmp / "index.yaml").write_text("old")
    before = _tree(tmp_path)
    with pytest.raises(OSError) as err:
        with staging_dir(out) as tmp:
            (tmp / "index.yaml").write_text("new")
            raise OSError(code, os.strerror(code))  # what a write() into tmp raises
    assert err.value.filename == str(out)
    assert _tree(tmp_path) == before


def test_a_failed_swap_puts_the_old_folder_back(tmp_path, monkeypatch):
    out = tmp_path / "site"
    with staging_dir(out) as tmp:
        (tmp / "a").write_text("old")
    real = os.replace
    calls = []

    def second_fails(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", second_fails)
    with pytest.raises(OSError):
        with staging_dir(out) as tmp:
            (tmp / "a").write_text("new")
    monkeypatch.undo()
    assert _tree(tmp_path) == {"site": b"/", "site/a": b"old"}


def test_several_files_are_all_old_or_all_new(tmp_path, monkeypatch):
    a, b = tmp_path / "corpus.jsonl", tmp_path / "summary.json"
    write_atomic_many({a: b"old a", b: b"old b"})
    real = os.fsync
    calls = []

    def second_fails(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)

    monkeypatch.setattr(atomic.os, "fsync", second_fails)
    with pytest.raises(OSError, match="No space left"):
        write_atomic_many({a: b"new a", b: b"new b"})
    monkeypatch.undo()
    assert _tree(tmp_path) == {"corpus.jsonl": b"old a", "summary.json": b"old b"}


def test_disk_full_in_a_command_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    out = tmp_path / "cert"
    assert main(["certify", RS, "--out", str(out)]) == 0
    before = _tree(tmp_path)
    monkeypatch.setattr(atomic, "replace_dir", _raiser(errno.ENOSPC))
    capsys.readouterr()
    assert main(["certify", RS, "--out", str(out), "--force"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device (the disk is full)" in err
    assert str(out) in err and "Traceback" not in err
    assert _tree(tmp_path) == before


# --- output paths that are files ---------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["corpus", "--out", "{f}"],
        ["solve", RS, "--out", "{f}/s.npz"],
        ["certify", RS, "--out", "{f}"],
        ["render", "{cert}", "--out", "{f}/Gen"],
        ["site", "--out", "{f}"],
        ["keys", "generate", "--key", "{f}/k.pem"],
    ],
    ids=lambda a: " ".join(a[:1] + a[-2:]),
)
def test_an_output_path_that_is_a_file_is_refused_and_kept(tmp_path, capsys, args, cert):
    afile = tmp_path / "afile"
    afile.write_text("precious\n")
    argv = [a.format(f=afile, cert=cert) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(afile) in err and "Traceback" not in err
    assert "File exists" not in err  # says what is wrong: a file where a folder must be
    assert afile.read_text() == "precious\n"


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    out = tmp_path_factory.mktemp("c") / "cert"
    assert main(["certify", RS, "--out", str(out)]) == 0
    return out


# --- leftovers of killed runs ------------------------------------------------------------

WRITER = """
import sys, time
from harness.atomic import atomic_file, staging_dir
target = sys.argv[1]
if sys.argv[2] == "file":
    with atomic_file(target) as fh:
        fh.write(b"half")
        print("writing", flush=True)
        time.sleep(60)
else:
    with staging_dir(target) as tmp:
        (tmp / "half").write_text("half")
        print("writing", flush=True)
        time.sleep(60)
"""


def _killed_writer(target: Path, kind: str) -> int:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target), kind], stdout=subprocess.PIPE, env=env
    )
    assert child.stdout.readline().strip() == b"writing"
    child.send_signal(signal.SIGKILL)
    child.wait()
    return child.pid


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_the_next_write_cleans_up_after_a_killed_run(tmp_path, kind):
    target = tmp_path / ("result.json" if kind == "file" else "site")
    pid = _killed_writer(target, kind)
    left = [p.name for p in tmp_path.iterdir()]
    assert any(f".{pid}." in name for name in left), left  # SIGKILL leaves its temporary
    if kind == "file":
        write_atomic(target, b"new")
    else:
        with staging_dir(target) as tmp:
            (tmp / "whole").write_text("new")
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_the_temporaries_of_a_live_run_are_kept(tmp_path):
    target = tmp_path / "result.json"
    with atomic_file(target) as fh:
        fh.write(b"mine, still being written")
        assert clean_leftovers(target) == []  # this process is alive
        assert len(list(tmp_path.iterdir())) == 1
    assert target.read_bytes() == b"mine, still being written"


# --- real file systems: small tmpfs mounts -----------------------------------------------


@pytest.fixture
def tmpfs(tmp_path):
    mounts = []

    def make(name: str, size: str) -> Path:
        where = tmp_path / name
        where.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or 'not root'}")
        mounts.append(where)
        return where

    yield make
    for where in reversed(mounts):
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(folder: Path) -> None:
    try:
        with open(folder / "filler", "wb") as fh:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
    except OSError as exc:
        assert exc.errno == errno.ENOSPC


@pytest.mark.parametrize("command", ["certify", "corpus", "solve"])
def test_a_full_disk_keeps_the_old_result(tmpfs, command, capsys):
    disk = tmpfs("disk", "64m")
    argv = {
        "certify": ["certify", RS, "--out", str(disk / "cert"), "--force"],
        "corpus": ["corpus", "--out", str(disk / "corpus")],
        "solve": ["solve", RS, "--out", str(disk / "s.npz")],
    }[command]
    assert main(argv) in (0, 1)  # corpus exits 1 if a branch went unhit: not the point
    before = _tree(disk)
    _fill(disk)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err, err
    (disk / "filler").unlink()
    assert _tree(disk) == before


def test_a_read_only_folder_is_one_line_and_nothing_changes(tmpfs, capsys):
    ro = tmpfs("ro", "1m")
    (ro / "old").mkdir()
    (ro / "old" / "keep").write_text("old\n")
    subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
    for argv in (
        ["corpus", "--out", str(ro / "c")],
        ["certify", RS, "--out", str(ro / "cert")],
        ["site", "--out", str(ro / "site")],
        ["keys", "generate", "--key", str(ro / "k.pem")],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "read-only" in err and str(ro) in err, err
    assert _tree(ro) == {"old": b"/", "old/keep": b"old\n"}


def test_verify_publish_into_a_read_only_folder_fails_before_any_work(tmpfs, tmp_path, capsys):
    ro = tmpfs("manifests", "1m")
    key = tmp_path / "key.pem"
    assert main(["keys", "generate", "--key", str(key)]) == 0
    pub = (tmp_path / "key.pem.pub").read_bytes()
    from harness.manifest.keys import keyid, load_verifying_key

    (ro / "keys").mkdir()
    (ro / "keys" / f"{keyid(load_verifying_key(tmp_path / 'key.pem.pub'))[:16]}.pub").write_bytes(
        pub
    )
    subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
    capsys.readouterr()
    work = tmp_path / "work"
    argv = ["verify", RS, "--key", str(key), "--work", str(work), "--manifests", str(ro)]
    assert main([*argv, "--publish"]) == 2
    err = capsys.readouterr().err
    assert "read-only" in err and err.count("\n") == 1, err
    assert not (work / RS).exists() and not (work / f"{RS}.partial").exists()


def test_a_full_disk_leaves_no_folder_a_new_output_would_have_made(tmpfs, capsys):
    """Each command below writes into folders that do not exist yet on a full disk: the
    error names the output asked for, and no folder (empty or partial) stays behind."""
    disk = tmpfs("disk", "4m")
    archive = next((ROOT / "manifests" / "archives").glob("pop1-3x3-c8-torus-*.zip"))
    _fill(disk)
    cases = {
        "audit": (["audit", str(archive), "--out", str(disk / "audit")], disk / "audit"),
        "corpus": (["corpus", "--out", str(disk / "corpus" / "sub")], disk / "corpus"),
        "verify": (
            ["verify", RS, "--work", str(disk / "w"), "--manifests", str(disk / "m")],
            disk / "w",
        ),
        "site": (["site", "--out", str(disk / "site")], disk / "site"),
    }
    for name, (argv, named) in cases.items():
        capsys.readouterr()
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "No space left on device" in errors[0], (name, err)
        assert name == "verify" or err.count("\n") == 1, (name, err)  # verify says its steps
        assert str(named) in errors[0], (name, err)
        assert sorted(p.name for p in disk.iterdir()) == ["filler"], name
