"""``lean`` on Dask against the recorded lake/lean stand-in: order, faults, the CLI."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from harness.lean.cache import ResultCache
from harness.lean.child import GIB, Limits
from harness.lean.runner import run_project
from harness.lean.toolchain import discover
from tests.lean.standin.world import LeanWorld, world_fixture  # noqa: F401

from .conftest import ancestor_in, wait_for_file, worker_pids

ALL = {
    "Generated.Corpus",
    "Generated.Main",
    "Generated.Shard0001",
    "Generated.Shard0002",
    "Generated.Shard0003",
}


def run(world: LeanWorld, session, cache: ResultCache | None = None) -> dict:
    return run_project(
        world.project,
        discover(world.project, env=world.env),
        limits=Limits(jobs=2, memory_bytes=2 * GIB, timeout=60.0),
        cache=cache,
        log_dir=world.root / "logs",
        env=world.env,
        progress=False,
        session=session,
    )


def assert_valid_order(world: LeanWorld, result: dict) -> None:
    """Every module ran once, each after all of its imports had finished."""
    calls = [c for c in world.calls() if c["module"].startswith("Generated.")]
    runs = {c["module"]: c for c in calls}
    assert set(runs) == ALL
    for name, rec in result["shards"].items():
        for dep in rec["deps"]:
            assert runs[name]["start"] >= runs[dep]["end"], f"{name} started before {dep} ended"


@pytest.mark.parametrize("where", ["local_session", "manual_session"])
def test_every_module_runs_once_in_a_valid_order(world: LeanWorld, where, request) -> None:
    session = request.getfixturevalue(where)
    world.scenario(
        {
            "Generated.Corpus": {"guard_hits": "land=4,pop=9,line=2"},
            "Generated.Shard0001": {"sleep": 0.5},
            "Generated.Shard0003": {"sleep": 0.5},
        }
    )
    result = run(world, session)
    assert result["ok"], {n: r["messages"] for n, r in result["shards"].items()}
    assert result["summary"]["passed"] == 5
    assert result["guard_hits"] == {"land": 4, "line": 2, "pop": 9}
    assert result["prepare"]["status"] == "passed"
    assert_valid_order(world, result)
    calls = [c["module"] for c in world.calls()]
    assert calls.count("Pop.Rules") == 1, "the prepare build compiles the model once"
    assert len({r["worker"] for r in result["shards"].values()}) == 2, "both workers worked"
    for rec in result["shards"].values():
        assert rec["log"] and os.path.isfile(rec["log"])


def test_a_failing_module_is_reported_once_and_its_users_skipped(world, local_session) -> None:
    world.scenario(
        {
            "Generated.Shard0001": {"error": "unknown identifier 'oops'"},
            "Generated.Corpus": {"guard_hits": "a=1"},
        }
    )
    result = run(world, local_session)
    assert not result["ok"]
    status = {n: r["status"] for n, r in result["shards"].items()}
    assert status == {
        "Generated.Shard0001": "compile_error",
        "Generated.Shard0002": "skipped",
        "Generated.Main": "skipped",
        "Generated.Shard0003": "passed",
        "Generated.Corpus": "passed",
    }
    runs = [c["module"] for c in world.calls()]
    assert runs.count("Generated.Shard0001") == 1, "a real failure is not retried"
    assert "Generated.Shard0002" not in runs and "Generated.Main" not in runs
    text = result["shards"]["Generated.Shard0001"]["messages"][0]["text"]
    assert "unknown identifier 'oops'" in text
    skipped = result["shards"]["Generated.Shard0002"]["messages"][0]["text"]
    assert "Generated.Shard0001" in skipped


def test_the_memory_cap_is_the_workers_rlimit(world, local_session) -> None:
    world.scenario({"Generated.Shard0003": {"allocate_mib": 1024}, "Generated.Corpus": {}})
    result = run_project(
        world.project,
        discover(world.project, env=world.env),
        limits=Limits(jobs=2, memory_bytes=int(0.5 * GIB), timeout=60.0),
        env=world.env,
        progress=False,
        session=local_session,
    )
    assert result["shards"]["Generated.Shard0003"]["status"] == "memory_limit"
    assert [c["module"] for c in world.calls()].count("Generated.Shard0003") == 0


def test_a_worker_killed_mid_build_is_replaced_and_the_result_complete(
    world, manual_session
) -> None:
    pidfile = world.root / "shard1.pid"
    world.scenario(
        {
            "Generated.Shard0001": {"sleep": 2.0, "pidfile": str(pidfile)},
            "Generated.Corpus": {"guard_hits": "a=1"},
        }
    )
    workers = set(worker_pids(manual_session).values())
    killed: list[int] = []

    def kill_the_builder() -> None:
        lean_pid = int(wait_for_file(pidfile))
        worker = ancestor_in(lean_pid, workers)
        if worker is not None:
            killed.append(worker)
            os.kill(worker, signal.SIGKILL)

    killer = threading.Thread(target=kill_the_builder, daemon=True)
    killer.start()
    cache = ResultCache(world.root / "cache.json")
    result = run(world, manual_session, cache)
    killer.join(timeout=5)
    assert killed, "the build of Shard0001 was not found under a worker"
    assert result["ok"], {n: r["messages"] for n, r in result["shards"].items()}
    assert result["summary"]["passed"] == 5
    # The killed build never finished (the stand-in logs at the end); the rerun did, once.
    assert [c["module"] for c in world.calls()].count("Generated.Shard0001") == 1
    assert_valid_order(world, result)
    survivor = set(worker_pids(manual_session).values())
    assert killed[0] not in survivor
    assert len(cache) == 5
