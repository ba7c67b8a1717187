"""One writer per output (harness.lock): a held lock names its holder, a dead one is taken
over, and verify and every staged folder use it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.atomic import staging_dir
from harness.cli import main
from harness.lock import LockedError, hold

RS = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"

HOLDER = """
import sys, time
from harness.lock import hold
with hold(sys.argv[1], "test"):
    print("held", flush=True)
    time.sleep(60)
"""


def _holder(lock: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1]))
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert child.stdout.readline().strip() == "held"
    return child


@pytest.fixture
def held(tmp_path):
    children = []

    def make(lock: Path) -> subprocess.Popen:
        child = _holder(lock)
        children.append(child)
        return child

    yield make
    for child in children:
        child.kill()
        child.wait()


def test_a_held_lock_names_its_holder(tmp_path, held):
    lock = tmp_path / ".out.lock"
    child = held(lock)
    with pytest.raises(LockedError) as err:
        with hold(lock, "out/x"):
            pass
    assert err.value.pid == child.pid
    assert f"out/x is being written by another run (pid {child.pid}" in str(err.value)
    assert "\n" not in str(err.value)


def test_the_lock_of_a_killed_run_is_taken_over(tmp_path, held):
    lock = tmp_path / ".out.lock"
    child = held(lock)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert lock.read_text().split()[0] == str(child.pid)  # the dead run's file is still there
    with hold(lock, "out/x") as previous:
        assert previous == child.pid
        assert lock.read_text().split()[0] == str(os.getpid())
    assert not lock.exists()


def test_a_second_verify_stops_at_once_and_leaves_the_first_alone(tmp_path, held, capsys):
    work = tmp_path / "out"
    partial = work / f"{RS}.partial"
    partial.mkdir(parents=True)
    (partial / "index.yaml").write_text("the first run's file\n")
    child = held(work / f".{RS}.lock")
    key = tmp_path / "key.pem"
    assert main(["keys", "generate", "--key", str(key)]) == 0
    capsys.readouterr()
    t0 = time.monotonic()
    code = main(["verify", RS, "--key", str(key), "--work", str(work)])
    err = capsys.readouterr().err
    assert code == 2 and time.monotonic() - t0 < 30
    assert err.count("\n") == 1 and f"pid {child.pid}" in err, err
    assert (partial / "index.yaml").read_text() == "the first run's file\n"


def test_a_staged_folder_is_locked_while_it_is_written(tmp_path, held):
    out = tmp_path / "site"
    with staging_dir(out) as tmp:
        (tmp / "a").write_text("old")
    held(tmp_path / ".site.lock")
    with pytest.raises(LockedError):
        with staging_dir(out) as tmp:
            (tmp / "a").write_text("new")
    assert (out / "a").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.lock", "site"]


@pytest.mark.parametrize("kind", ["link", "dangling link", "fifo", "folder"])
def test_a_lock_path_that_is_not_a_regular_file_is_refused_untouched(tmp_path, kind):
    lock = tmp_path / ".out.lock"
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    if kind == "link":
        lock.symlink_to(target)
    elif kind == "dangling link":
        lock.symlink_to(tmp_path / "nowhere")
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    with pytest.raises(OSError) as err:
        with hold(lock, "out"):
            pass
    assert err.value.filename == str(lock)
    assert target.read_text() == "keep me\n"
    assert not (tmp_path / "nowhere").exists()
    assert os.path.lexists(lock)  # not removed either: it was never ours


def test_the_pid_of_a_lock_that_is_a_link_is_not_read_through_it(tmp_path):
    from harness.lock import holder_pid

    (tmp_path / "pid").write_text("12345\n")
    (tmp_path / ".out.lock").symlink_to(tmp_path / "pid")
    assert holder_pid(tmp_path / ".out.lock") is None
