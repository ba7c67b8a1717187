"""Clusters for the cluster tests: a LocalCluster of 2 workers, and a ``dask scheduler`` with
two ``dask worker`` processes started here. Everything listens on 127.0.0.1, on ports the
kernel picks; every process started is stopped again, whatever the test did."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.cluster import ClusterSpec, Session

REPO = Path(__file__).resolve().parents[2]


def worker_env() -> dict[str, str]:
    """This process's environment with the checkout first on PYTHONPATH, so workers import
    the same ``harness`` as the test."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    return env


@pytest.fixture(scope="module")
def local_session():
    with Session(ClusterSpec(workers=2), quiet=True) as session:
        session.client.wait_for_workers(2, timeout=60)
        yield session


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class HandCluster:
    """A ``dask scheduler`` and two ``dask worker`` processes (no nanny: a SIGKILLed worker
    stays dead until :meth:`ensure_workers` starts a new one)."""

    def __init__(self, root: Path):
        self.root = root
        self.env = worker_env()
        self.scheduler: subprocess.Popen | None = None
        self.workers: dict[str, subprocess.Popen] = {}
        self.address = ""

    def _popen(self, args: list[str], log: str) -> subprocess.Popen:
        with open(self.root / log, "a") as err:
            return subprocess.Popen(
                [sys.executable, "-m", *args],
                env=self.env,
                cwd=self.root,
                start_new_session=True,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )

    def start(self) -> None:
        info = self.root / "scheduler.json"
        self.scheduler = self._popen(
            [
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(info),
            ],
            "scheduler.log",
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                self.address = json.loads(info.read_text())["address"]
                break
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        assert self.address.startswith("tcp://127.0.0.1:"), (
            self.root / "scheduler.log"
        ).read_text()
        self.ensure_workers()

    def ensure_workers(self) -> None:
        for name in ("hand1", "hand2"):
            proc = self.workers.get(name)
            if proc is None or proc.poll() is not None:
                self.workers[name] = self._popen(
                    [
                        "distributed.cli.dask_worker",
                        self.address,
                        "--host",
                        "127.0.0.1",
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--no-dashboard",
                        "--name",
                        name,
                    ],
                    f"{name}.log",
                )

    def stop(self) -> None:
        for proc in [*self.workers.values(), self.scheduler]:
            if proc is not None:
                _stop(proc)


@pytest.fixture(scope="module")
def hand_cluster(tmp_path_factory):
    cluster = HandCluster(tmp_path_factory.mktemp("dask"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture()
def manual_session(hand_cluster):
    """A session on the hand-started scheduler with both of its workers up."""
    hand_cluster.ensure_workers()
    with Session(ClusterSpec(scheduler=hand_cluster.address), quiet=True) as session:
        session.client.wait_for_workers(2, timeout=60)
        yield session


def kill_first_busy_worker(session: Session, killed: list[int]) -> None:
    """In the background: SIGKILL the first worker seen running a task (its pid goes into
    ``killed``), within a minute."""
    pids = worker_pids(session)

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            busy = [w for w, keys in session.client.processing().items() if keys]
            if busy:
                killed.append(pids[busy[0]])
                os.kill(pids[busy[0]], signal.SIGKILL)
                return
            time.sleep(0.01)

    threading.Thread(target=watch, daemon=True).start()


def worker_pids(session: Session) -> dict[str, int]:
    """Worker address -> pid of the process that runs its tasks."""
    return dict(session.client.run(os.getpid))


def ancestor_in(pid: int, candidates: set[int]) -> int | None:
    """The first ancestor of ``pid`` (or itself) among ``candidates``."""
    while pid > 1:
        if pid in candidates:
            return pid
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return None


def wait_for_file(path: Path, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")
