"""``verify``: the orchestration, against the recorded stand-in of the other stages."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.cluster.options import ClusterSpec
from harness.errors import HarnessError
from harness.manifest.fsutil import sha256_file
from harness.manifest.manifest import read_signed
from harness.verify.pipeline import Pipeline, StageMissingError
from harness.verify.stages import HarnessRunner
from tests.verify.runs import make_project_key, make_run
from tests.verify.standin import RULESET, StandIn, tiny_lean_project


def test_missing_stages_are_named_and_nothing_runs(tmp_path, key):
    runner = StandIn(missing={"render", "lean"})
    pipe = Pipeline(
        RULESET,
        key,
        runner=runner,
        work_root=tmp_path / "out",
        manifests=tmp_path / "manifests",
        say=lambda s: None,
    )
    with pytest.raises(StageMissingError) as err:
        pipe.run()
    assert "`render` (harness/lean), `lean` (harness/lean)" in str(err.value)
    assert runner.calls == []
    assert not (tmp_path / "out").exists() and not (tmp_path / "manifests").exists()


def test_lean_without_toolchain_is_incomplete_and_recorded_as_not_run(verified, key):
    report = verified.report
    assert (report.verdict, report.exit_code) == ("INCOMPLETE", 3)
    assert [s.name for s in report.steps] == [
        "solve",
        "certify",
        "check",
        "corpus",
        "render",
        "flatten",
        "lean",
    ]
    doc, _ = read_signed(verified.manifest, key.public)
    assert doc["kind"] == "verify" and doc["ruleset"] == RULESET
    # Everything issue 5 asks a manifest to record.
    assert len(doc["certificate"]["hash"]) == 64
    assert [s["file"] for s in doc["certificate"]["shards"]] == ["shard-0000-p16.jsonl.gz"]
    assert {"describe", "revision", "dirty"} <= set(doc["solver"])
    assert {"python", "numpy", "platform"} <= set(doc["environment"])
    assert doc["lean"]["status"] == "not run" and "no Lean toolchain" in doc["lean"]["reason"]
    assert [m["status"] for m in doc["lean"]["modules"]] == ["not run"] * 3
    assert "replay" not in doc["lean"]  # nothing built, nothing replayed
    assert doc["corpus"]["guard_hits"] == {"place": 3, "push": 2}
    assert doc["final_theorem"]["name"] == "Generated.Main.initial_force_win"
    assert doc["final_theorem"]["statement"].startswith("theorem initial_force_win")
    assert doc["final_theorem"]["axioms"] == "not run"
    assert doc["check"]["measured"] == "not measured here"
    kernel = doc["check"]["kernel"]  # from the render report's declarations
    assert (kernel["declarations"], kernel["steps"], kernel["largest_steps"]) == (
        2,
        2_700_000,
        2_520_000,
    )
    assert kernel["expected_seconds"] == round(2_700_000 / kernel["assumed_steps_per_second"])
    assert kernel["modules"] == {"cert": 1, "corpus": 1, "main": 1}
    # The file list is exact: every vouched file, with its real SHA-256, nothing else.
    work = verified.work
    on_disk = sorted(
        p.relative_to(work).as_posix()
        for top in ("certificate", "corpus", "lean", "formal")
        for p in (work / top).rglob("*")
        if p.is_file() and ".lake" not in p.parts
    )
    assert sorted(doc["files"]) == on_disk
    assert all(sha256_file(work / rel) == h for rel, h in doc["files"].items())
    assert "lean/.lake/junk.olean" not in doc["files"]
    assert doc["check"]["model_sha256"] == doc["files"]["formal/Game.lean"]


def test_the_manifest_holds_no_host_paths(tmp_path, key, monkeypatch):
    monkeypatch.setattr(
        "tests.verify.standin.NO_TOOLCHAIN",
        f"error: no Lean toolchain: lean not in {Path.home()}/.elan/bin",
    )
    run = make_run(tmp_path, key)
    text = run.manifest.read_text()
    assert str(tmp_path) not in text and str(Path.home()) not in text
    assert "~/.elan/bin" in text


def test_lean_passed_is_pass_with_measured_time_and_observed_axioms(verified_lean, key):
    assert (verified_lean.report.verdict, verified_lean.report.exit_code) == ("PASS", 0)
    doc, _ = read_signed(verified_lean.manifest, key.public)
    assert doc["lean"]["status"] == "passed"
    # The olean replay of the built modules is recorded, per module, without host paths.
    replay = doc["lean"]["replay"]
    assert replay["status"] == "passed" and replay["tool"] == "leanchecker"
    assert len(replay["modules"]) == 3
    assert all(
        r == {"status": "passed", "seconds": 1.0, "peak_mib": 64.0}
        for r in replay["modules"].values()
    )
    assert doc["final_theorem"]["axioms"] == ["propext"]
    assert doc["check"]["measured"]["seconds"] == 7.5
    assert doc["check"]["measured"]["peak_mib"] == 512.0
    assert (
        "'Generated.Main.initial_force_win' depends on axioms: [propext]"
        in (doc["check"]["expected_output"])
    )
    text = verified_lean.manifest.read_text()
    assert "/somewhere/on/the/host" not in text and "/home/someone" not in text


def test_guard_hits_that_disagree_with_the_corpus_fail(tmp_path, key):
    run = make_run(tmp_path, key, lean="guard")
    assert (run.report.verdict, run.report.exit_code) == ("FAIL", 1)
    assert "GUARD_HITS differ" in run.report.steps[-1].detail


def test_a_failed_step_stops_the_run_and_keeps_the_good_one(tmp_path, key):
    good = make_run(tmp_path, key)
    before = {p: p.read_bytes() for p in good.work.rglob("*") if p.is_file()}
    published = good.manifest.read_bytes()
    runner = StandIn(fail="check")
    pipe = Pipeline(
        RULESET,
        key,
        runner=runner,
        work_root=good.work_root,
        manifests=good.manifests,
        lean_project=tmp_path / "lean-src",
        say=lambda s: None,
    )
    report = pipe.run()
    assert (report.verdict, report.exit_code) == ("FAIL", 1)
    assert [c[0] for c in runner.calls] == ["solve", "certify", "check"]
    assert report.steps[-1].status == "failed" and "told to fail" in report.steps[-1].detail
    # The failed run's signed manifest stays in its own folder; nothing good was touched.
    assert report.manifest == good.work_root / f"{RULESET}.partial" / "manifest.yaml"
    doc, _ = read_signed(report.manifest, key.public)
    assert doc["verdict"] == "FAIL"
    assert good.manifest.read_bytes() == published
    assert {p: p.read_bytes() for p in good.work.rglob("*") if p.is_file()} == before


def test_a_certificate_for_the_other_player_fails(tmp_path, key):
    run = make_run(tmp_path, key, winner="o")
    assert run.report.verdict == "FAIL"
    assert "the certificate establishes o, solve says x" in run.report.steps[-1].detail


def test_cli_verify_names_missing_stages(monkeypatch, capsys):
    monkeypatch.setattr(HarnessRunner, "commands", lambda self: {"solve", "corpus"})
    from harness.manifest.keys import default_key_path, generate

    generate(default_key_path())
    assert main(["verify"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: verify cannot run") and "`certify` (harness/cert)" in err
    assert err.count("\n") == 1


def test_cli_verify_with_a_missing_key_file_says_how_to_make_one(tmp_path, capsys):
    assert main(["verify", "--key", str(tmp_path / "nowhere.pem")]) == 2
    assert "keys generate" in capsys.readouterr().err


def test_cli_verify_makes_the_default_key_on_a_fresh_machine(tmp_path, capsys):
    from harness.manifest.keys import default_key_path

    assert not default_key_path().exists()
    code = main(["verify", "--work", str(tmp_path / "work"), "--manifests", str(tmp_path / "m")])
    assert code in (0, 3)  # 3: Lean could not run here
    assert default_key_path().exists()
    assert "made a new signing key" in capsys.readouterr().out
    assert not (tmp_path / "m").exists()  # a run is not a publication


def test_cli_verify_says_each_fact_once(tmp_path, capsys, monkeypatch):
    """The real stages, no published record: each step's detail once, the missing record
    once, and only paths that exist after the run."""
    monkeypatch.chdir(tmp_path)
    code = main(["verify", "--manifests", str(tmp_path / "m")])
    assert code in (0, 3)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert ".partial" not in text
    assert text.count("no published record to compare with") == 1
    assert text.count("no Lean toolchain") <= 1  # once, where Lean is missing
    assert text.count("certificate accepted by the Python checker") == 1
    run = tmp_path / "out" / "verify" / "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
    assert f"--out {run.relative_to(tmp_path)}/certificate" in text
    assert (run / "certificate").is_dir()


def test_cli_verify_says_reproduced_once(tmp_path, capsys, monkeypatch):
    import shutil

    published = tmp_path / "manifests"
    shutil.copytree(Path(__file__).resolve().parents[2] / "manifests", published)
    monkeypatch.chdir(tmp_path)
    assert main(["verify"]) in (0, 3)
    captured = capsys.readouterr()
    assert (captured.out + captured.err).count("REPRODUCED") == 1


def test_lean_project_copy_skips_build_output(tmp_path):
    from harness.verify.sections import copy_lean_project

    src = tiny_lean_project(tmp_path / "src")
    (src / "Generated").mkdir()
    (src / "Generated" / "Old.lean").write_text("-- stale")
    copied = copy_lean_project(src, tmp_path / "dst")
    assert sorted(copied) == ["Pop.lean", "Pop/Rules.lean", "lakefile.toml", "lean-toolchain"]
    assert not (tmp_path / "dst" / ".lake").exists()


def _project(root):
    folder = root / "lean-src"
    return folder if folder.exists() else tiny_lean_project(folder)


def _pipe(root, key, runner, **kw):
    return Pipeline(
        RULESET,
        key,
        runner=runner,
        work_root=root / "out" / "verify",
        manifests=root / "manifests",
        lean_project=_project(root),
        say=lambda line: None,
        **kw,
    )


def _run(root, key, runner, budget=None):
    make_project_key(root / "manifests", key)
    return _pipe(root, key, runner, budget=budget, publish=True).run()


def test_a_spent_budget_is_published_as_an_open_signed_attempt(tmp_path, key):
    runner = StandIn(budget="certify")
    report = _run(tmp_path, key, runner, budget=600)
    assert (report.verdict, report.exit_code) == ("OPEN", 5)
    assert [(s.name, s.status) for s in report.steps] == [
        ("solve", "passed"),
        ("certify", "budget"),
    ]
    assert "budget exhausted after 3270000 nodes" in report.steps[-1].detail
    # The budget reached both searches.
    solve, certify = runner.calls
    assert solve[-2:] == ["--time-limit", "600"] and certify[-2:] == ["--time-limit", "600"]
    open_yaml = tmp_path / "manifests" / "open" / f"{RULESET}.yaml"
    assert report.published == open_yaml
    assert not (tmp_path / "manifests" / f"{RULESET}.yaml").exists()
    doc, _ = read_signed(open_yaml, key.public)
    assert doc["verdict"] == "OPEN" and doc["steps"][-1]["seconds"] == 600.0


def test_an_open_attempt_never_displaces_a_result_and_a_result_clears_it(tmp_path, key):
    _run(tmp_path, key, StandIn(budget="certify"), budget=5)
    open_yaml = tmp_path / "manifests" / "open" / f"{RULESET}.yaml"
    assert open_yaml.exists()
    done = _run(tmp_path, key, StandIn())
    assert done.verdict == "INCOMPLETE"
    assert not open_yaml.exists() and (tmp_path / "manifests" / f"{RULESET}.yaml").exists()
    again = _run(tmp_path, key, StandIn(budget="solve"), budget=5)
    assert (again.verdict, again.published) == ("OPEN", None)
    assert not open_yaml.exists()


# -- a run is not a publication -----------------------------------------------------------


def test_a_run_never_writes_the_published_records(tmp_path, key):
    run = make_run(tmp_path, key)
    assert run.report.published is None and run.report.comparison is None
    assert not run.manifests.exists()
    assert run.report.manifest == run.work / "manifest.yaml"


def test_a_run_of_a_published_ruleset_is_reproduced(tmp_path, key, other_key):
    first = make_run(tmp_path, key, publish=True)
    published = first.published.read_bytes()
    assert read_signed(first.published, key.public)[1] == published
    assert list((first.manifests / "archives").glob(f"{RULESET}-*.zip"))
    # A stranger's run, signed with their own key: compared, never written.
    again = make_run(tmp_path, other_key)
    assert again.report.comparison.status == "REPRODUCED", again.report.comparison.line()
    assert again.report.exit_code == 3  # INCOMPLETE, as the run itself
    assert first.published.read_bytes() == published


def test_a_run_that_differs_names_the_fields(tmp_path, key, other_key):
    make_run(tmp_path, key, publish=True)
    again = make_run(tmp_path, other_key, plies=5)
    c = again.report.comparison
    assert c.status == "DIFFERS" and again.report.exit_code == 1
    assert c.differences == ["result x in 5 plies, published x in 7 plies"]
    assert c.line().startswith("DIFFERS from ") and c.line().endswith(c.differences[0])


def test_a_published_record_signed_by_an_unlisted_key_differs(tmp_path, key, other_key):
    run = make_run(tmp_path, key, publish=True)
    for pub in (run.manifests / "keys").glob("*.pub"):
        pub.unlink()
    again = make_run(tmp_path, other_key)
    assert again.report.comparison.status == "DIFFERS"
    assert "is not a key in keys/" in again.report.comparison.differences[0]


def test_publish_needs_a_project_key_and_refuses_before_running(tmp_path, key):
    runner = StandIn()
    pipe = Pipeline(
        RULESET,
        key,
        runner=runner,
        work_root=tmp_path / "out",
        manifests=tmp_path / "manifests",
        publish=True,
        say=lambda s: None,
    )
    with pytest.raises(Exception, match="is not a project key") as err:
        pipe.run()
    assert "\n" not in str(err.value) and runner.calls == []


@pytest.mark.parametrize(
    ("ruleset", "field"),
    [
        ("pop1-4x4-c8-klein-draw-binempty-king-nozero-nojump", "'stuck' is draw"),
        ("pop1-4x4-c8-torus-continue-always-king-nozero-nojump", "'movement' is always"),
        ("pop1-4x4-c8-torus-continue-binempty-king-zero-nojump", "'zero move' is zero"),
    ],
)
def test_verify_refuses_a_ruleset_outside_the_lean_model_at_once(ruleset, field, capsys):
    assert main(["verify", ruleset]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and field in err and "nothing was run" in err


def test_a_win_deeper_than_certifys_default_is_looked_for_that_deep(tmp_path, key):
    # The solve finds x in 18 (5x5 c8 ringout is o in 18); certify's default looks 15 deep.
    deep = StandIn(plies=18)
    _run(tmp_path / "deep", key, deep)
    certify = next(c for c in deep.calls if c[0] == "certify")
    assert certify[certify.index("--max-plies") + 1] == "18"
    assert certify[certify.index("--winner") + 1] == "x"
    assert "--no-optimize" in certify
    # A shallower win keeps certify's defaults (so published certificates stay the same).
    shallow = StandIn(plies=7)
    _run(tmp_path / "shallow", key, shallow)
    certify = next(c for c in shallow.calls if c[0] == "certify")
    assert "--max-plies" not in certify and "--winner" not in certify


def _given_certificate(root, winner="x", ruleset=RULESET):
    """A certificate made by the stand-in's certify, as a user's own certify run leaves it."""
    out = root / "made-by-hand"
    StandIn(winner=winner)._certify(["certify", ruleset, "--out", str(out), "--json"])
    return out


def test_a_given_certificate_is_checked_instead_of_certify_running(tmp_path, key):
    given = _given_certificate(tmp_path)
    runner = StandIn()
    report = _pipe(tmp_path, key, runner, certificate=given).run()
    assert report.verdict == "INCOMPLETE"
    assert [c[0] for c in runner.calls] == ["solve", "check", "corpus", "render", "lean"]
    certify = next(s for s in report.steps if s.name == "certify")
    assert certify.status == "passed" and certify.detail.startswith("given (--certificate")
    doc, _ = read_signed(report.manifest, key.public)
    index = (given / "index.yaml").read_text()
    assert f"hash: {doc['certificate']['hash']}" in index
    # The run holds its own copy: the given folder can go, the run stays whole.
    assert (report.work / "certificate" / "index.yaml").read_text() == index


@pytest.mark.parametrize(
    "winner, ruleset, says",
    [
        ("o", RULESET, "the certificate establishes o, solve says x"),
        ("x", RULESET.replace("torus", "klein"), "index.yaml is not for this ruleset"),
    ],
)
def test_a_given_certificate_of_another_value_or_ruleset_fails(
    tmp_path, key, winner, ruleset, says
):
    given = _given_certificate(tmp_path, winner=winner, ruleset=ruleset)
    runner = StandIn()
    report = _pipe(tmp_path, key, runner, certificate=given).run()
    assert (report.verdict, report.exit_code) == ("FAIL", 1)
    assert report.steps[-1].name == "certify" and says in report.steps[-1].detail
    assert [c[0] for c in runner.calls] == ["solve"]


def test_a_link_in_a_given_certificate_fails_and_is_not_followed(tmp_path, key):
    given = _given_certificate(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("not a certificate's\n")
    (given / "notes.txt").symlink_to(secret)
    report = _pipe(tmp_path, key, StandIn(), certificate=given).run()
    assert report.verdict == "FAIL"
    assert "notes.txt: a link" in report.steps[-1].detail
    assert not any(p.read_bytes() == secret.read_bytes() for p in report.work.rglob("*.txt"))


def test_a_given_folder_without_a_certificate_is_refused_before_anything_runs(tmp_path, key):
    runner = StandIn()
    (tmp_path / "empty").mkdir()
    with pytest.raises(HarnessError, match=r"--certificate .*empty: no certificate there"):
        _pipe(tmp_path, key, runner, certificate=tmp_path / "empty").run()
    inside = tmp_path / "out" / "verify" / f"{RULESET}.partial" / "certificate"
    inside.mkdir(parents=True)
    (inside / "index.yaml").write_text("format: 1\n")
    with pytest.raises(HarnessError, match="lies in the run's own folder"):
        _pipe(tmp_path, key, runner, certificate=inside).run()
    # Named through "..", or a folder that holds the run's: the same.
    roundabout = inside.parent.parent / ".." / "verify" / inside.parent.name / "certificate"
    with pytest.raises(HarnessError, match="lies in the run's own folder"):
        _pipe(tmp_path, key, runner, certificate=roundabout).run()
    (tmp_path / "out" / "index.yaml").write_text("format: 1\n")
    with pytest.raises(HarnessError, match="holds or lies in the run's own folder"):
        _pipe(tmp_path, key, runner, certificate=tmp_path / "out").run()
    assert runner.calls == [] and (inside / "index.yaml").is_file()


def test_a_fifo_in_a_given_certificate_fails_the_step(tmp_path, key):
    import os

    given = _given_certificate(tmp_path)
    os.mkfifo(given / "pipe")
    report = _pipe(tmp_path, key, StandIn(), certificate=given).run()
    assert report.verdict == "FAIL"
    assert "pipe: not a plain file" in report.steps[-1].detail


def test_cluster_options_go_to_the_stages_that_run_tasks(tmp_path, key):
    runner = StandIn()
    _pipe(tmp_path, key, runner, cluster=ClusterSpec(workers=2)).run()
    calls = {c[0]: c for c in runner.calls}
    # certify builds on the workers; the strong solve of 4x4 c8 torus runs there too.
    for stage in ("solve", "certify"):
        assert calls[stage][calls[stage].index("--workers") + 1] == "2"
    # A win certificate (format 1) is checked in one walk: check takes no cluster option.
    assert "--workers" not in calls["check"]
    assert all("--workers" not in c for c in runner.calls if c[0] in ("corpus", "render", "lean"))


def test_cli_verify_with_no_certificate_at_the_given_folder_is_one_line(tmp_path, capsys):
    code = main(
        ["verify", "--certificate", str(tmp_path / "nowhere"), "--work", str(tmp_path / "w")]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "nowhere: no certificate there" in err and not (tmp_path / "w").exists()


def test_a_published_draw_is_built_again_the_way_it_was(tmp_path, key):
    """Non-win sets published before consolidation existed are built without it, so that a
    run reproduces them; a new draw, or one published consolidated, is consolidated."""
    pipe = _pipe(tmp_path, key, StandIn())
    pipe.work.mkdir(parents=True)
    (pipe.work / "solution.npz").write_bytes(b"")
    pipe.facts["solve"] = {"value": "draw"}
    assert "--no-consolidate" not in pipe.certify_args()  # nothing published
    record = tmp_path / "manifests" / f"{RULESET}.yaml"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text("certificate:\n  format: 2\n")
    assert "--no-consolidate" in pipe.certify_args()
    record.write_text("certificate:\n  format: 2\n  consolidated: true\n")
    assert "--no-consolidate" not in pipe.certify_args()
    record.write_text("certificate:\n  format: 1\n")  # a win: no sets to build
    assert "--no-consolidate" not in pipe.certify_args()
    # The project's own published draws were built without it.
    reinc = "pop1-4x4-c8-reincarnation-continue-binempty-king-nozero-nojump"
    real = Pipeline(reinc, key, runner=StandIn(), work_root=tmp_path / "w", say=lambda s: None)
    real.manifests = Path(__file__).resolve().parents[2] / "manifests"
    assert real.published_unconsolidated()
