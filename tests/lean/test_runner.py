"""The runner against the recorded stand-in of lake/lean (see standin/standin.py).

Each test gives the stand-in a scenario (what "Lean" does for which module) and checks the
verdicts, limits, order and caching of :func:`harness.lean.runner.run_project`.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.lean.cache import ResultCache
from harness.lean.child import GIB, ChildResult, Limits, run_limited
from harness.lean.modules import discover_modules
from harness.lean.runner import run_project
from harness.lean.toolchain import discover
from harness.lean.verdict import classify, load_result

from .standin.world import LeanWorld, world_fixture  # noqa: F401

SHARD2 = "Generated.Shard0002"
ALL = [
    "Generated.Corpus",
    "Generated.Main",
    "Generated.Shard0001",
    "Generated.Shard0002",
    "Generated.Shard0003",
]


def run(world: LeanWorld, *, cache: ResultCache | None = None, **limits) -> dict:
    toolchain = discover(world.project, env=world.env)
    return run_project(
        world.project,
        toolchain,
        limits=Limits(**{"jobs": 2, "memory_bytes": 2 * GIB, "timeout": 60.0, **limits}),
        cache=cache,
        log_dir=world.root / "logs",
        env=world.env,
        progress=False,
    )


def statuses(result: dict) -> dict[str, str]:
    return {name: rec["status"] for name, rec in result["shards"].items()}


def dead(pid: int) -> bool:
    """True when pid is gone or a zombie (an orphan nobody reaped is still dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


# --------------------------------------------------------------------------------------------
# success, order, parallelism


def test_everything_passes_with_axioms_and_guard_hits(world: LeanWorld) -> None:
    world.scenario({"Generated.Corpus": {"guard_hits": "land=4,pop=9,line=2"}})
    result = run(world)
    assert result["ok"] is True
    assert statuses(result) == dict.fromkeys(ALL, "passed")
    # Pinned by #guard_msgs (so silent in the output) and printed plainly (Main).
    assert result["axioms"]["Pop.Generated.shard0002_forceWin"] == ["propext"]
    assert result["axioms"]["Pop.initial_force_win"] == ["propext"]
    assert result["guard_hits"] == {"land": 4, "line": 2, "pop": 9}
    assert result["shards"]["Generated.Corpus"]["kind"] == "corpus"
    assert result["shards"][SHARD2]["kind"] == "shard"
    assert result["shards"][SHARD2]["deps"] == ["Generated.Shard0001"]
    assert result["prepare"]["status"] == "passed"
    assert result["prepare"]["targets"] == ["Pop.Check", "Pop.Rules"]
    for rec in result["shards"].values():
        assert rec["seconds"] > 0 and rec["peak_mib"] > 1
        assert Path(rec["log"]).is_file()
    assert result["toolchain"]["lean_version"] == "4.22.0"
    assert result["toolchain"]["matches_pin"] is True
    assert result["summary"] == {
        "modules": 5,
        "passed": 5,
        "failed": 0,
        "cached": 0,
        "by_status": {**dict.fromkeys(result["summary"]["by_status"], 0), "passed": 5},
    }


def test_modules_are_built_after_their_imports_and_in_parallel(world: LeanWorld) -> None:
    # Shard0001 and Shard0003 import no shard; each takes a while, so with two jobs they
    # overlap, and Shard0002 (which imports 0001) only starts after 0001 has finished.
    world.scenario(
        {
            "Generated.Shard0001": {"sleep": 0.8},
            "Generated.Shard0003": {"sleep": 0.8},
            "Generated.Corpus": {"guard_hits": "a=1"},
        }
    )
    result = run(world, jobs=2)
    assert result["ok"]
    calls = {c["module"]: c for c in world.calls()}
    # The prepare build compiles the model once; no shard build compiles it again.
    assert [c["module"] for c in world.calls()].count("Pop.Rules") == 1
    one, two, three = (calls[f"Generated.Shard000{i}"] for i in (1, 2, 3))
    main = calls["Generated.Main"]
    assert two["start"] >= one["end"]
    assert main["start"] >= max(two["end"], three["end"])
    assert one["start"] < three["end"] and three["start"] < one["end"], "no overlap with 2 jobs"


def test_one_job_runs_one_module_at_a_time(world: LeanWorld) -> None:
    world.scenario({"Generated.Corpus": {"guard_hits": "a=1"}})
    assert run(world, jobs=1)["ok"]
    spans = sorted((c["start"], c["end"]) for c in world.calls() if c["module"].startswith("Gen"))
    assert len(spans) == 5
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end


# --------------------------------------------------------------------------------------------
# failures


def test_compile_error_fails_the_module_and_skips_its_dependents(world: LeanWorld) -> None:
    world.scenario(
        {
            "Generated.Shard0001": {"error": "unknown identifier 'checkShard_sond'"},
            "Generated.Corpus": {"guard_hits": "a=1"},
        }
    )
    result = run(world)
    assert result["ok"] is False
    got = statuses(result)
    assert got["Generated.Shard0001"] == "compile_error"
    assert got[SHARD2] == "skipped" and got["Generated.Main"] == "skipped"
    assert got["Generated.Shard0003"] == "passed" and got["Generated.Corpus"] == "passed"
    texts = [m["text"] for m in result["shards"]["Generated.Shard0001"]["messages"]]
    assert any("unknown identifier 'checkShard_sond'" in t for t in texts)
    first = result["shards"]["Generated.Shard0001"]["messages"][0]
    assert first["file"] == "Generated/Shard0001.lean" and first["line"] == 8
    skipped = result["shards"][SHARD2]["messages"][0]["text"]
    assert "Generated.Shard0001" in skipped
    assert result["shards"][SHARD2]["seconds"] is None
    assert "Generated.Shard0002" not in {c["module"] for c in world.calls()}


def test_timeout_kills_the_whole_process_group(world: LeanWorld) -> None:
    pidfile = world.root / "lean.pid"
    world.scenario(
        {
            "Generated.Shard0003": {"sleep": 60, "pidfile": str(pidfile)},
            "Generated.Corpus": {"guard_hits": "a=1"},
        }
    )
    started = time.monotonic()
    result = run(world, timeout=3.0)
    assert time.monotonic() - started < 30
    rec = result["shards"]["Generated.Shard0003"]
    assert rec["status"] == "timeout"
    assert 2.5 <= rec["seconds"] < 10
    assert rec["signal"] == signal.SIGKILL
    assert "timeout" in rec["messages"][0]["text"]
    # The stand-in lean is lake's child, i.e. our grandchild: it must be gone too.
    lean_pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while not dead(lean_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert dead(lean_pid)
    assert statuses(result)["Generated.Main"] == "skipped"


def test_memory_cap_is_enforced_by_the_os(world: LeanWorld) -> None:
    # The stand-in lean really allocates (and writes) 1 GiB; under a 256 MiB address-space
    # cap the allocation fails and it reports out of memory as Lean's runtime does.
    world.scenario(
        {
            "Generated.Shard0003": {"allocate_mib": 1024},
            "Generated.Corpus": {"guard_hits": "a=1"},
        }
    )
    result = run(world, memory_bytes=GIB // 4)
    rec = result["shards"]["Generated.Shard0003"]
    assert rec["status"] == "memory_limit"
    assert "out of memory" in rec["messages"][0]["text"]
    assert "0.25 GiB" in rec["messages"][0]["text"]
    assert rec["peak_mib"] < 256
    assert statuses(result)["Generated.Shard0001"] == "passed"


def test_the_same_allocation_passes_under_a_larger_cap(world: LeanWorld) -> None:
    # The control for the test above: it is the cap, not the stand-in, that fails it.
    world.scenario(
        {
            "Generated.Shard0003": {"allocate_mib": 384},
            "Generated.Corpus": {"guard_hits": "a=1"},
        }
    )
    result = run(world, memory_bytes=2 * GIB, jobs=1)
    rec = result["shards"]["Generated.Shard0003"]
    assert rec["status"] == "passed"
    assert rec["peak_mib"] >= 384  # wait4 saw lean's peak through lake


def test_unexpected_axiom_fails_even_though_the_pin_caught_it(world: LeanWorld) -> None:
    world.scenario(
        {
            "Generated.Shard0003": {
                "axioms": {"shard0003_forceWin": ["propext", "Lean.ofReduceBool"]}
            },
            "Generated.Corpus": {"guard_hits": "a=1"},
        }
    )
    result = run(world)
    rec = result["shards"]["Generated.Shard0003"]
    assert rec["status"] == "forbidden_axiom"
    assert "Lean.ofReduceBool" in rec["messages"][0]["text"]
    assert rec["axioms"] == {"Pop.Generated.shard0003_forceWin": ["propext", "Lean.ofReduceBool"]}
    assert statuses(result)["Generated.Main"] == "skipped"


def test_unpinned_print_with_a_user_axiom_fails(world: LeanWorld) -> None:
    world.scenario(
        {
            "Generated.Main": {"axioms": {"initial_force_win": ["Pop.cheat", "propext"]}},
            "Generated.Corpus": {"guard_hits": "a=1"},
        }
    )
    result = run(world)
    assert statuses(result)["Generated.Main"] == "forbidden_axiom"
    assert result["axioms"]["Pop.initial_force_win"] == ["Pop.cheat", "propext"]


def test_sorry_fails_the_module(world: LeanWorld) -> None:
    world.scenario(
        {
            "Generated.Shard0001": {"axioms": {"shard0001_forceWin": ["propext", "sorryAx"]}},
            "Generated.Corpus": {"guard_hits": "a=1"},
        }
    )
    result = run(world)
    rec = result["shards"]["Generated.Shard0001"]
    assert rec["status"] == "sorry"
    assert "shard0001_forceWin" in rec["messages"][0]["text"]
    assert any("declaration uses 'sorry'" in m["text"] for m in rec["messages"])


def test_a_real_compile_error_wins_over_the_sorry_lean_adds_for_it(world: LeanWorld) -> None:
    # Lean adds a failed theorem with sorryAx; the verdict must name the real cause.
    world.scenario({"Generated.Main": {"error": "type mismatch"}})
    result = run(world)
    assert statuses(result)["Generated.Main"] == "compile_error"
    assert result["shards"]["Generated.Main"]["axioms"] == {"Pop.initial_force_win": ["sorryAx"]}


def test_garbled_guard_hits_is_bad_output(world: LeanWorld) -> None:
    world.scenario({"Generated.Corpus": {"guard_hits": "land=4,pop"}})
    result = run(world)
    rec = result["shards"]["Generated.Corpus"]
    assert rec["status"] == "bad_output"
    assert "pop" in rec["messages"][0]["text"]


def test_a_failing_model_skips_every_module(world: LeanWorld) -> None:
    world.scenario({"Pop.Check": {"error": "unsolved goals"}})
    result = run(world)
    assert result["ok"] is False
    assert result["prepare"]["status"] == "compile_error"
    assert set(statuses(result).values()) == {"skipped"}
    assert "unsolved goals" in result["shards"]["Generated.Main"]["messages"][0]["text"]


def test_a_sorry_in_the_model_is_caught_by_the_prepare_build(world: LeanWorld) -> None:
    world.scenario({"Pop.Check": {"axioms": {"checkShard_sound": ["sorryAx"]}}})
    result = run(world)
    assert result["prepare"]["status"] == "sorry"
    assert not result["ok"]


def test_warnings_replayed_from_a_dependency_are_not_blamed_on_the_module(
    world: LeanWorld,
) -> None:
    # Shard0001 prints a forbidden axiom but is fine otherwise; Lake replays that message
    # when it is up to date. Shard0002's own verdict must not pick it up.
    world.write(
        "Generated/Shard0001.lean",
        (world.project / "Generated/Shard0001.lean").read_text()
        + "\n#print axioms Pop.checkShard_sound\n",
    )
    world.scenario(
        {
            "Generated.Shard0001": {"axioms": {"checkShard_sound": ["Pop.cheat"]}},
            "Generated.Corpus": {"guard_hits": "a=1"},
        }
    )
    result = run(world)
    assert statuses(result)["Generated.Shard0001"] == "forbidden_axiom"
    # Build 0001 by hand so it is up to date, then check 0002 alone would replay it; the
    # runner never builds 0002 after a failed import, so check the verdict function directly.
    output = (
        "ℹ [3/4] Replayed Generated.Shard0001\n"
        "info: Generated/Shard0001.lean:20:0: 'Pop.checkShard_sound' depends on axioms: "
        "[Pop.cheat]\n✔ [4/4] Built Generated.Shard0002 (41ms)\nBuild completed successfully.\n"
    )
    source = (world.project / "Generated/Shard0002.lean").read_text()
    fake = ChildResult(["lake"], 0, None, False, 0.1, 0.1, 1 << 20, output)
    verdict = classify(fake, source=source, file="Generated/Shard0002.lean")
    assert verdict.status == "passed"
    assert verdict.axioms == {"Pop.Generated.shard0002_forceWin": ("propext",)}


def test_corpus_that_names_guard_hits_only_in_a_comment_must_print_it() -> None:
    # The renderer's corpus prints through a model function; its source names GUARD_HITS
    # only in a comment. A run that prints nothing is still caught.
    source = (
        "import Pop.Corpus\nnamespace Generated.Corpus\n"
        "-- Expected: GUARD_HITS land=3\n#eval IO.println (guardLine branchNames chunks)\n"
        "end Generated.Corpus\n"
    )
    silent = ChildResult(["lake"], 0, None, False, 0.1, 0.1, 1 << 20, "✔ [1/1] Built X (9ms)\n")
    v = classify(silent, source=source, file="Generated/Corpus.lean")
    assert v.status == "bad_output"
    assert "GUARD_HITS" in v.messages[0].text
    printed = ChildResult(
        ["lake"],
        0,
        None,
        False,
        0.1,
        0.1,
        1 << 20,
        "ℹ [1/1] Built X (9ms)\ninfo: Generated/Corpus.lean:4:0: GUARD_HITS land=3\n",
    )
    v = classify(printed, source=source, file="Generated/Corpus.lean")
    assert v.status == "passed" and v.guard_hits == {"land": 3}


# --------------------------------------------------------------------------------------------
# cache


def test_rerun_checks_only_what_changed(world: LeanWorld) -> None:
    world.scenario({"Generated.Corpus": {"guard_hits": "a=1"}})
    cache = ResultCache(world.root / "cache.json")
    first = run(world, cache=cache)
    assert first["summary"]["cached"] == 0 and first["ok"]

    world.calls_path.unlink()
    again = run(world, cache=ResultCache(world.root / "cache.json"))
    assert again["ok"] and again["summary"]["cached"] == 5
    assert all(rec["cached"] for rec in again["shards"].values())
    assert world.calls() == [], "a full cache hit must not start Lean at all"
    assert again["prepare"] is None

    # Change Shard0001: it and everything above it (0002, Main) are checked again.
    path = world.project / "Generated/Shard0001.lean"
    path.write_text(path.read_text().replace("[1, 3, 5, 3]", "[1, 3, 5, 7]"))
    third = run(world, cache=ResultCache(world.root / "cache.json"))
    rebuilt = {n for n, rec in third["shards"].items() if not rec["cached"]}
    assert rebuilt == {"Generated.Shard0001", SHARD2, "Generated.Main"}
    assert third["ok"]
    # Main imports the cached Shard0003, so the prepare build makes sure it is built.
    assert "Generated.Shard0003" in third["prepare"]["targets"]


def test_model_change_invalidates_every_module(world: LeanWorld) -> None:
    world.scenario({"Generated.Corpus": {"guard_hits": "a=1"}})
    run(world, cache=ResultCache(world.root / "cache.json"))
    path = world.project / "Pop/Rules.lean"
    path.write_text(path.read_text() + "\n-- a comment still changes the model hash\n")
    result = run(world, cache=ResultCache(world.root / "cache.json"))
    assert result["summary"]["cached"] == 0


def test_toolchain_change_invalidates_every_module(world: LeanWorld) -> None:
    world.scenario({"Generated.Corpus": {"guard_hits": "a=1"}})
    run(world, cache=ResultCache(world.root / "cache.json"))
    world.env["POP_STANDIN_VERSION"] = "4.23.0"
    result = run(world, cache=ResultCache(world.root / "cache.json"))
    assert result["summary"]["cached"] == 0
    assert result["toolchain"]["matches_pin"] is False


def test_failures_are_not_cached(world: LeanWorld) -> None:
    world.scenario({"Generated.Corpus": {"guard_hits": "a=1"}, "Generated.Main": {"error": "x"}})
    run(world, cache=ResultCache(world.root / "cache.json"))
    world.scenario({"Generated.Corpus": {"guard_hits": "a=1"}})
    result = run(world, cache=ResultCache(world.root / "cache.json"))
    assert statuses(result)["Generated.Main"] == "passed"
    assert not result["shards"]["Generated.Main"]["cached"]
    assert result["shards"]["Generated.Shard0001"]["cached"]


# --------------------------------------------------------------------------------------------
# discovery and single children


def test_cycle_is_rejected(world: LeanWorld) -> None:
    path = world.project / "Generated/Shard0001.lean"
    path.write_text("import Generated.Shard0002\n" + path.read_text())
    with pytest.raises(HarnessError, match="import cycle"):
        discover_modules(world.project)


def test_import_of_a_missing_rendered_module_is_rejected(world: LeanWorld) -> None:
    path = world.project / "Generated/Shard0003.lean"
    path.write_text("import Generated.Shard0009\n" + path.read_text())
    with pytest.raises(HarnessError, match="Generated.Shard0009"):
        discover_modules(world.project)


def test_no_rendered_modules(world: LeanWorld) -> None:
    shutil.rmtree(world.project / "Generated")
    with pytest.raises(HarnessError, match="render"):
        discover_modules(world.project)


def test_imports_are_read_from_the_header_only(world: LeanWorld) -> None:
    modules = discover_modules(world.project)
    assert modules["Generated.Main"].deps == ("Generated.Shard0002", "Generated.Shard0003")
    assert modules["Generated.Shard0002"].model_imports == ("Pop.Check",)
    assert modules["Generated.Corpus"].model_imports == ("Pop.Rules",)


def test_run_limited_reports_exit_status_and_signal(tmp_path: Path) -> None:
    ok = run_limited(["/bin/sh", "-c", "exit 3"], cwd=tmp_path, memory_bytes=GIB, timeout=10)
    assert (ok.exit_code, ok.signal, ok.timed_out) == (3, None, False)
    killed = run_limited(
        ["/bin/sh", "-c", "kill -9 $$"], cwd=tmp_path, memory_bytes=GIB, timeout=10
    )
    assert (killed.exit_code, killed.signal) == (None, signal.SIGKILL)
    v = classify(killed)
    assert v.status == "memory_limit", "an unexplained SIGKILL is the OOM killer's"
    segv = run_limited(["/bin/sh", "-c", "kill -11 $$"], cwd=tmp_path, memory_bytes=GIB, timeout=10)
    assert classify(segv).status == "crashed"


def test_run_limited_missing_program(tmp_path: Path) -> None:
    r = run_limited([str(tmp_path / "nope")], cwd=tmp_path, memory_bytes=GIB, timeout=10)
    assert r.exit_code == 127 and "cannot run" in r.output


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="jobs"):
        Limits(jobs=0)
    with pytest.raises(ValueError, match="timeout"):
        Limits(timeout=0)


def test_load_result_rejects_other_files(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="not a pop-harness/lean-result/1"):
        load_result(path)


# --------------------------------------------------------------------------------------------
# the real toolchain


def _real_lake() -> str | None:
    found = shutil.which("lake")
    if found:
        return found
    candidate = Path(os.environ.get("ELAN_HOME", Path.home() / ".elan")) / "bin" / "lake"
    return str(candidate) if candidate.is_file() else None


REPO_LEAN = Path(__file__).resolve().parents[2] / "lean"
needs_lake = pytest.mark.skipif(
    _real_lake() is None, reason="no Lean toolchain here: lake is not on PATH or in ~/.elan/bin"
)


@pytest.mark.lean
@needs_lake
def test_real_lean_starts_under_the_default_cap(tmp_path: Path) -> None:
    # RLIMIT_AS caps address space; Lean must still start under the default cap.
    (tmp_path / "lean-toolchain").write_text((REPO_LEAN / "lean-toolchain").read_text())
    toolchain = discover(tmp_path)
    r = run_limited(
        [str(toolchain.lean), "--version"], cwd=tmp_path, memory_bytes=8 * GIB, timeout=120
    )
    assert r.exit_code == 0, r.output


@pytest.mark.lean
@needs_lake
def test_real_toolchain_verdicts(tmp_path: Path) -> None:
    """The verdicts on a throwaway project, so real Lake/Lean output meets the parser."""
    project = tmp_path / "p"
    (project / "Generated").mkdir(parents=True)
    (project / "lean-toolchain").write_text((REPO_LEAN / "lean-toolchain").read_text())
    (project / "lakefile.toml").write_text(
        'name = "probe"\n\n[[lean_lib]]\nname = "Generated"\nglobs = ["Generated.+"]\n'
    )
    files = {
        "Good": "theorem good : True := trivial\n"
        "/-- info: 'good' does not depend on any axioms -/\n#guard_msgs in\n#print axioms good\n"
        '#eval IO.println "GUARD_HITS a=1,b=2"\n',
        "Sorry": "theorem bad : 1 = 2 := sorry\n#print axioms bad\n",
        "Axiom": "axiom cheat : False\ntheorem worse : 1 = 2 := cheat.elim\n#print axioms worse\n",
        "Broken": "theorem broken : 1 = 1 := by exact nope\n",
        "Above": "import Generated.Broken\ntheorem above : True := trivial\n",
    }
    for name, text in files.items():
        (project / "Generated" / f"{name}.lean").write_text(text)
    result = run_project(
        project,
        discover(project),
        limits=Limits(jobs=2, memory_bytes=8 * GIB, timeout=600),
        progress=False,
    )
    got = statuses(result)
    assert got == {
        "Generated.Above": "skipped",
        "Generated.Axiom": "forbidden_axiom",
        "Generated.Broken": "compile_error",
        "Generated.Good": "passed",
        "Generated.Sorry": "sorry",
    }, result
    assert result["shards"]["Generated.Good"]["axioms"] == {"good": []}
    assert result["guard_hits"] == {"a": 1, "b": 2}


@pytest.mark.lean
@needs_lake
def test_real_project_builds(tmp_path: Path) -> None:
    """The project's own Lean sources and rendered modules, as ``nox -s lean`` runs them."""
    if not any((REPO_LEAN / "Generated").glob("*.lean")):
        pytest.skip("no rendered modules in lean/Generated (run `python -m harness render`)")
    result = run_project(
        REPO_LEAN,
        discover(REPO_LEAN),
        limits=Limits(jobs=1, memory_bytes=16 * GIB, timeout=3600),
        progress=False,
    )
    assert result["ok"], {n: r["messages"][:3] for n, r in result["shards"].items()}
    assert any(name.endswith("initial_force_win") for name in result["axioms"])


def test_peak_memory_is_the_programs_not_the_harness(tmp_path) -> None:
    # A child's ru_maxrss starts at its parent's peak on Linux; the runner must report the
    # program's own peak however large the harness process has grown.
    from harness.lean.child import run_limited

    ballast = bytearray(512 * 1024 * 1024)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    result = run_limited(["/bin/sh", "-c", "exit 0"], cwd=tmp_path, memory_bytes=GIB, timeout=60)
    del ballast
    assert result.exit_code == 0
    assert result.peak_mib < 128


# --------------------------------------------------------------------------------------------
# replay of the final environment (leanchecker)


def test_without_a_checker_the_replay_is_recorded_as_not_available(world: LeanWorld) -> None:
    result = run(world)
    assert result["ok"] is True
    assert result["replay"] == {"status": "not available", "tool": None, "modules": {}}


def test_the_checker_replays_every_built_module(world: LeanWorld) -> None:
    from .standin.world import write_shim

    write_shim(world.bin, "leanchecker")
    world.scenario(log=str(world.calls_path))
    result = run(world)
    assert result["ok"] is True
    assert result["replay"]["status"] == "passed" and result["replay"]["tool"] == "leanchecker"
    assert sorted(result["replay"]["modules"]) == sorted(ALL)
    replayed = [c["module"] for c in world.calls() if c.get("tool") == "leanchecker"]
    assert replayed == result["order"]  # in dependency order, after the builds


def test_a_module_the_checker_rejects_fails_the_run(world: LeanWorld) -> None:
    from .standin.world import write_shim

    write_shim(world.bin, "leanchecker")
    world.scenario({SHARD2: {"replay_error": "declaration type mismatch"}})
    result = run(world)
    assert statuses(result) == dict.fromkeys(ALL, "passed")  # the builds themselves passed
    assert result["ok"] is False
    assert result["replay"]["status"] == "failed"
    bad = result["replay"]["modules"][SHARD2]
    assert bad["status"] != "passed"
    assert any("declaration type mismatch" in m["text"] for m in bad["messages"]), bad
    others = {n: r["status"] for n, r in result["replay"]["modules"].items() if n != SHARD2}
    assert set(others.values()) == {"passed"}
