"""``python -m harness verify``: every stage, end to end, ending in a signed manifest.

Steps, each through its stage's command (:mod:`harness.verify.stages`)::

    solve     python -m harness solve RULESET --json
    certify   python -m harness certify RULESET --out WORK/certificate --json
    check     python -m harness check WORK/certificate --ruleset RULESET --json
    corpus    python -m harness corpus --out WORK/corpus
    render    python -m harness render WORK/certificate --out WORK/lean/Generated --corpus …
    flatten   WORK/formal/Game.lean: the Lean project as one sealed model file
    lean      python -m harness lean --project WORK/lean --out WORK/lean-result.json
    manifest  WORK/manifest.yaml (+ .dsse.json), signed with the user's key
    compare   with the published record manifests/RULESET.yaml, if any: REPRODUCED or DIFFERS

``WORK`` is ``out/verify/RULESET.partial`` while the run lasts; it replaces
``out/verify/RULESET`` only when the run did not fail, so a failed run never destroys the
output of a good one. The Lean project in ``WORK/lean`` is a copy of the repository's
``lean/`` (without build files), so the verified sources are a snapshot that later edits to
``lean/`` cannot change under the manifest.

Verdicts: ``PASS`` (everything ran and passed, exit 0), ``INCOMPLETE`` (everything that ran
passed, but Lean could not run here: no toolchain; exit 3), ``FAIL`` (exit 1; the signed
manifest stays in WORK for inspection).

A run is not a publication (:mod:`harness.verify.publish`): ``manifests/`` is read, to
compare the run with the published record (a run that DIFFERS exits 1), and written only
with ``publish=True`` (``verify --publish``) and a project key.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.atomic import name_error, probe_writable, remove_made, replace_dir
from harness.bounded import read_yaml
from harness.cluster.options import ClusterSpec
from harness.errors import EXIT_BUDGET, EXIT_FAILED, EXIT_NO_LEAN, EXIT_OK, EXIT_OPEN, HarnessError
from harness.lean.project import project_dir
from harness.lock import hold
from harness.manifest.fsutil import scrub_paths, sha256_file, write_atomic
from harness.manifest.keys import SigningKey
from harness.manifest.leanflat import MODEL_FILE, TOOLCHAIN_FILE, FlattenError, write_model
from harness.manifest.manifest import environment, git_state, now_utc, write_manifest
from harness.manifest.published import publisher_keys, record_path
from harness.verify.publish import (
    Comparison,
    compare,
    publish_open,
    publish_run,
    require_project_key,
)
from harness.verify.sections import (
    Step,
    axioms_line,
    certificate_shards,
    certified_value,
    copy_lean_project,
    expected_guard,
    lean_command,
    lean_section,
    observed_axioms,
    vouched_files,
)
from harness.verify.stages import COMMAND_STAGE, REPO, Completed, HarnessRunner

# The shared taxonomy (harness.cli) under the names of this stage's verdicts.
EXIT_PASS, EXIT_FAIL, EXIT_INCOMPLETE = EXIT_OK, EXIT_FAILED, EXIT_BUDGET


EXIT_NO_TOOLCHAIN = EXIT_NO_LEAN  # what `python -m harness lean` returns with no toolchain


NEEDED = ("solve", "certify", "check", "corpus", "render", "lean")


# Lean's -M is in megabytes; the seeds ran with -M60000. Ours follows the memory cap.
DEFAULT_LEAN_MEMORY_GIB = 8.0
# The kernel's pace assumed for the expected time of a check (no Lean toolchain here to
# measure it); a measured run's time is the record's ``measured`` instead.
ASSUMED_KERNEL_STEPS_PER_SECOND = 1_000_000


class StageMissingError(HarnessError):
    """A command verify needs is not there yet (its stage has not landed)."""

    exit_code = 1


@dataclass
class LeanOptions:
    memory_gib: float | None = None
    timeout: float | None = None
    jobs: int | None = None


@dataclass
class VerifyReport:
    verdict: str
    exit_code: int
    steps: list[Step]
    work: Path
    manifest: Path | None
    published: Path | None
    doc: dict = field(default_factory=dict)
    comparison: Comparison | None = None
    no_record: str | None = None  # why there was nothing to compare with

    def comparison_line(self) -> str | None:
        """REPRODUCED or DIFFERS with the fields, or why nothing was compared (a run that
        failed or stayed open is compared with nothing)."""
        return self.comparison.line() if self.comparison is not None else self.no_record


class _Failed(Exception):
    """Stops the pipeline after a step failed (already recorded in the steps)."""


def check_stages(runner: HarnessRunner) -> None:
    """Raise StageMissingError naming every command verify needs that does not exist."""
    have = runner.commands()
    missing = [c for c in NEEDED if c not in have]
    if missing:
        names = ", ".join(f"`{c}` ({COMMAND_STAGE[c]})" for c in missing)
        raise StageMissingError(
            f"verify cannot run: python -m harness has no {names} yet; "
            "those stages have not landed, and verify never fakes a stage's output"
        )


def _json_out(done: Completed) -> dict:
    """The JSON object a ``--json`` command printed (its last line that parses as one)."""
    for line in reversed(done.stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    try:
        value = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


class Pipeline:
    """One verify run. ``runner`` runs harness commands; ``say`` reports progress lines."""

    def __init__(
        self,
        ruleset: str,
        key: SigningKey,
        *,
        runner: HarnessRunner | None = None,
        work_root: Path = Path("out/verify"),
        manifests: Path = Path("manifests"),
        lean_project: Path | None = None,
        lean: LeanOptions | None = None,
        budget: float | None = None,
        publish: bool = False,
        cluster: ClusterSpec | None = None,
        certificate: Path | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.ruleset = ruleset
        self.publish = publish
        self.budget = budget
        # The stages run in the repository: the cluster's paths are made absolute here.
        spec = cluster or ClusterSpec()
        self.cluster = dataclasses.replace(
            spec,
            config=None if spec.config is None else Path(spec.config).absolute(),
            shared=None if spec.shared is None else Path(spec.shared).absolute(),
        )
        self.given = None if certificate is None else Path(certificate).absolute()
        self.key = key
        self.runner = runner or HarnessRunner()
        # Absolute: the stages run in the repository, whatever folder verify was started in.
        self.work_root = Path(work_root).absolute()
        self.manifests = Path(manifests)
        self.lean_project = Path(lean_project) if lean_project else project_dir()
        self.lean = lean or LeanOptions()
        self.say = say or (lambda line: print(line, file=sys.stderr))
        self.steps: list[Step] = []
        self.facts: dict = {}
        self.no_record: str | None = None
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", ruleset) or ruleset.startswith("."):
            raise HarnessError(f"ruleset {ruleset!r}: not a ruleset id")
        self.final = self.work_root / ruleset
        self.work = self.work_root / f"{ruleset}.partial"

    # -- running steps --------------------------------------------------------------------

    def _shown(self, text: str) -> str:
        """``text`` with the run's folder as it will be named when the run has finished (it
        is written as ``RULESET.partial`` and renamed at the end), relative when it can be."""
        final = self.final
        try:
            final = final.relative_to(Path.cwd())
        except ValueError:
            pass
        return text.replace(str(self.work), str(final))

    def _cmd(self, name: str, args: list[str]) -> Completed:
        shown = self._shown(" ".join(args))
        self.say(f"[{len(self.steps) + 1}] {name}: python -m harness {shown}")
        return self.runner.run(args)

    def _scrub(self, text: str) -> str:
        """Host paths out of text bound for the manifest (it travels inside the archive)."""
        labels = {
            str(self.work.resolve()): "WORK",
            str(self.work): "WORK",
            str(self.final.resolve()): "WORK",
            str(self.final): "WORK",
            str(REPO): ".",
        }
        text = scrub_paths(text, labels)
        return text[len("error: ") :] if text.startswith("error: ") else text

    def _record(self, name: str, status: str, seconds: float | None, detail: str) -> Step:
        detail = self._scrub(detail)
        seconds = None if seconds is None else round(seconds, 3)
        step = Step(name, status, seconds, detail)
        self.steps.append(step)
        self.say(f"    {status}: {detail}" if detail else f"    {status}")
        if status in ("failed", "budget"):
            raise _Failed(name)
        return step

    def _budget_args(self, flag: str) -> list[str]:
        return [] if self.budget is None else [flag, f"{self.budget:g}"]

    def _solution_file(self) -> Path | None:
        """Where solve keeps the strong solution when its ``auto`` pick is a strong solver
        (certify builds a draw's non-win sets from it); None when solve will run the proof
        search instead."""
        from harness.rules.ruleset import Ruleset
        from harness.solver.choice import pick_method

        try:
            strong = pick_method(Ruleset.from_id(self.ruleset)) != "proof"
        except ValueError:
            return None
        return self.work / "solution.npz" if strong else None

    def _solve(self) -> None:
        solution = self._solution_file()
        # The cluster options go to a strong solve only: a proof search split into tasks
        # shares no table between them and does more work than one process.
        keep = [] if solution is None else ["--out", str(solution), *self.cluster.arguments()]
        done = self._cmd(
            "solve", ["solve", self.ruleset, "--json", *keep, *self._budget_args("--time-limit")]
        )
        info = _json_out(done)
        if done.returncode == EXIT_BUDGET:
            self._record("solve", "budget", done.seconds, done.last_error_line())
        if done.returncode != 0 or "value" not in info:
            self._record("solve", "failed", done.seconds, done.last_error_line())
        self.facts["solve"] = info
        positions = info.get("positions")
        detail = (
            f"value {info['value']}"
            if info.get("plies") is None
            else f"value {info['value']} in {info.get('plies')} plies"
        ) + (f"; {positions} positions" if positions is not None else "")
        self._record("solve", "passed", done.seconds, detail)

    def _deeper_win_args(self) -> list[str]:
        """A win the solve found beyond certify's default bound: look that deep, for that
        player only, and keep the search's own actions (``--no-optimize``: choosing smaller
        ones searches again below every rank, untried at that depth). Shallower wins keep
        certify's defaults, so every certificate made before stays the same."""
        from harness.cert.builder import MAX_PLIES

        info = self.facts["solve"]
        plies = info.get("plies")
        if info.get("value") in ("x", "o") and isinstance(plies, int) and plies > MAX_PLIES:
            return ["--max-plies", str(plies), "--winner", info["value"], "--no-optimize"]
        return []

    def certify_args(self) -> list[str]:
        """The ``certify`` command this run makes its certificate with (after the solve). Run
        by hand with another ``--out`` (e.g. on a cluster), it makes a certificate for
        ``verify --certificate``."""
        args = ["certify", self.ruleset, "--out", str(self.work / "certificate"), "--json"]
        solution = self._solution_file()
        if solution is not None and solution.is_file():
            args += ["--solution", str(solution)]
            if self.published_unconsolidated():
                args.append("--no-consolidate")
        return args + self._deeper_win_args() + self.cluster.arguments()

    def published_unconsolidated(self) -> bool:
        """Whether the published record of this ruleset holds non-win sets built without
        consolidation (every one published before it existed, whose records do not say):
        they are built the same way again, so that the run can reproduce them. What the
        record says only picks how to build; the comparison at the end checks its signature."""
        try:
            doc = read_yaml(record_path(self.manifests, self.ruleset), what="published record")
            cert = doc["certificate"]
            return cert.get("format") == 2 and cert.get("consolidated") is not True
        except (OSError, ValueError, yaml.YAMLError, KeyError, TypeError, AttributeError):
            return False

    def _certify(self) -> None:
        out = self.work / "certificate"
        if self.given is not None:
            done = self._copy_given(out)
        else:
            done = self._cmd("certify", self.certify_args() + self._budget_args("--time-limit"))
        if done.returncode == EXIT_BUDGET:
            self._record("certify", "budget", done.seconds, done.last_error_line())
        if done.returncode != 0:
            self._record("certify", "failed", done.seconds, done.last_error_line())
        try:
            index = read_yaml(out / "index.yaml", what="certificate index")
        except (OSError, ValueError, yaml.YAMLError) as exc:
            self._record("certify", "failed", done.seconds, f"no readable index.yaml: {exc}")
        if not isinstance(index, dict) or index.get("ruleset") != self.ruleset:
            self._record("certify", "failed", done.seconds, "index.yaml is not for this ruleset")
        self.facts["index"] = index
        self.facts["certify"] = _json_out(done)
        solved = self.facts["solve"].get("value")
        certified = certified_value(index)
        if certified != solved:
            self._record(
                "certify",
                "failed",
                done.seconds,
                f"the certificate establishes {certified}, solve says {solved}",
            )
        given = "" if self.given is None else f"given (--certificate {self.given.name}): "
        self._record(
            "certify",
            "passed",
            done.seconds,
            f"{given}{certified}: {index.get('entries')} entries in "
            f"{len(certificate_shards(index))} shards; hash {str(index.get('hash'))[:16]}…",
        )

    def _copy_given(self, out: Path) -> Completed:
        """``--certificate DIR`` in place of running certify: DIR's plain files copied into
        the run. What made them is not trusted; the check and Lean stages check them as they
        check a certificate this run made. A link in DIR fails the step (nothing followed)."""
        start = time.monotonic()
        shown = ["--certificate", str(self.given)]
        self.say(f"[{len(self.steps) + 1}] certify: given, {' '.join(shown)}")

        def failed(why: str) -> Completed:
            return Completed(shown, EXIT_FAILED, "", f"error: {why}\n", time.monotonic() - start)

        odd = [
            p
            for p in [self.given, *self.given.rglob("*")]
            if p.is_symlink() or not (p.is_file() or p.is_dir())
        ]
        if odd:
            return failed(
                f"{odd[0]}: {'a link' if odd[0].is_symlink() else 'not a plain file'}; a "
                "certificate is plain files, and verify follows no link"
            )
        try:
            shutil.copytree(self.given, out)
        except (OSError, shutil.Error) as exc:
            return failed(f"--certificate {self.given}: cannot copy it ({exc})")
        return Completed(shown, EXIT_OK, '{"given": true}', "", time.monotonic() - start)

    def _check(self) -> None:
        args = ["check", str(self.work / "certificate"), "--ruleset", self.ruleset, "--json"]
        if self.facts["index"].get("format") == 2:
            # The checker runs a non-win certificate's shards as tasks; a win's in one walk.
            args += self.cluster.arguments()
        done = self._cmd("check", args)
        info = _json_out(done)
        self.facts["check"] = {
            "status": "passed" if done.returncode == 0 else "failed",
            "seconds": done.seconds,
            "turns": info.get("turns"),
        }
        if done.returncode != 0 or info.get("ok") is False:
            errors = info.get("errors") or []
            first = errors[0] if errors else done.last_error_line()
            self._record("check", "failed", done.seconds, f"rejected: {first}")
        if info.get("hash") not in (None, self.facts["index"].get("hash")):
            self._record("check", "failed", done.seconds, "checked hash differs from index.yaml")
        self._record("check", "passed", done.seconds, "certificate accepted by the Python checker")

    def _corpus(self) -> None:
        out = self.work / "corpus"
        done = self._cmd("corpus", ["corpus", "--out", str(out)])
        guard = next((ln for ln in done.stdout.splitlines() if ln.startswith("GUARD_HITS")), None)
        if done.returncode != 0 or guard is None:
            self._record("corpus", "failed", done.seconds, done.last_error_line())
        hits = {}
        for item in guard.split(None, 1)[1].split(",") if " " in guard else []:
            name, _, count = item.partition("=")
            hits[name] = int(count)
        try:
            summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            summary = {}
        self.facts["corpus"] = {
            "records": summary.get("records"),
            "rulesets": summary.get("rulesets"),
            "seed": summary.get("seed"),
            "guard_hits": hits,
        }
        self._record(
            "corpus",
            "passed",
            done.seconds,
            f"{summary.get('records')} transitions; {sum(1 for v in hits.values() if v)} "
            "rule branches hit",
        )

    def _render(self) -> None:
        project = self.work / "lean"
        copy_lean_project(self.lean_project, project)
        args = ["render", str(self.work / "certificate"), "--out", str(project / "Generated")]
        if "--corpus" in self.runner.options("render"):
            args += ["--corpus", str(self.work / "corpus" / "corpus.jsonl")]
        done = self._cmd("render", args)
        if done.returncode != 0:
            self._record("render", "failed", done.seconds, done.last_error_line())
        try:
            info = json.loads((project / "Generated" / "render.json").read_text("utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            self._record("render", "failed", done.seconds, f"no readable render.json: {exc}")
        if info.get("certificate") != self.facts["index"].get("hash"):
            self._record(
                "render", "failed", done.seconds, "render.json names another certificate hash"
            )
        self.facts["render"] = info
        self._record(
            "render",
            "passed",
            done.seconds,
            f"{len(info.get('modules', []))} modules; final theorem "
            f"{info.get('theorem', {}).get('name')}",
        )

    def _flatten(self) -> None:
        info = self.facts["render"]
        roots = [m["module"] for m in info.get("modules", [])]
        project = self.work / "lean"
        self.say(
            f"[{len(self.steps) + 1}] flatten: {MODEL_FILE} from {len(roots)} rendered modules"
        )
        try:
            order = write_model(project, roots, self.work / MODEL_FILE)
        except FlattenError as exc:
            self._record("flatten", "failed", 0.0, str(exc))
        pin = (project / "lean-toolchain").read_text(encoding="utf-8").strip()
        write_atomic(self.work / TOOLCHAIN_FILE, (pin + "\n").encode("utf-8"))
        self.facts["flat"] = {
            "order": order,
            "toolchain": pin,
            "sha256": sha256_file(self.work / MODEL_FILE),
        }
        self._record(
            "flatten",
            "passed",
            0.0,
            f"{MODEL_FILE}: {len(order)} modules, sha256 {self.facts['flat']['sha256'][:16]}…",
        )

    def _lean(self) -> None:
        result_path = self.work / "lean-result.json"
        args = ["lean", "--project", str(self.work / "lean"), "--out", str(result_path)]
        opts = self.runner.options("lean")
        if "--cache" in opts:
            args += ["--cache", str(self.work_root / "lean-cache.json")]
        for flag, value in (
            ("--memory", self.lean.memory_gib),
            ("--timeout", self.lean.timeout),
            ("--jobs", self.lean.jobs),
        ):
            if value is not None:
                args += [flag, str(value)]
        done = self._cmd("lean", args)
        if done.returncode == EXIT_NO_TOOLCHAIN:
            self.facts["lean"] = {
                "status": "not run",
                "reason": self._scrub(done.last_error_line()),
            }
            self._record("lean", "not run", done.seconds, done.last_error_line())
            return
        result = None
        if result_path.is_file():
            try:
                result = json.loads(result_path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                result = None
        self.facts["lean"] = {
            "status": "passed" if done.returncode == 0 else "failed",
            "result": result,
        }
        if done.returncode != 0 or result is None or not result.get("ok"):
            self._record("lean", "failed", done.seconds, done.last_error_line())
        expected = expected_guard(self.facts["render"])
        observed = result.get("guard_hits") or {}
        if expected is not None and observed != expected:
            self.facts["lean"]["status"] = "failed"
            self._record(
                "lean",
                "failed",
                done.seconds,
                "Lean's GUARD_HITS differ from the corpus' research-family counts",
            )
        s = result.get("summary", {})
        self._record(
            "lean",
            "passed",
            done.seconds,
            f"{s.get('passed')}/{s.get('modules')} modules passed ({s.get('cached')} from cache)",
        )

    # -- the manifest ---------------------------------------------------------------------

    def manifest_doc(self, verdict: str) -> dict:
        f = self.facts
        index = f.get("index") or {}
        render = f.get("render") or {}
        lean = f.get("lean") or {"status": "not run", "reason": "an earlier step failed"}
        theorem = render.get("theorem") or {}
        doc: dict = {
            "kind": "verify",
            "verdict": verdict,
            "created": now_utc(),
            "ruleset": self.ruleset,
            "result": {
                "value": f.get("solve", {}).get("value"),
                "plies": f.get("solve", {}).get("plies"),
                "positions": f.get("solve", {}).get("positions"),
                "solve_seconds": f.get("solve", {}).get("seconds"),
            },
            "certificate": {
                "hash": index.get("hash"),
                "format": index.get("format"),
                "value": certified_value(index) if index else None,
                "winner": index.get("winner"),
                "root": index.get("root"),
                "entries": index.get("entries"),
                **(
                    {
                        "consolidated": index.get("consolidated", False),
                        "sets": {
                            str(n.get("player")): {
                                "entries": n.get("entries"),
                                "hash": n.get("hash"),
                            }
                            for n in index.get("sets") or []
                            if isinstance(n, dict)
                        },
                    }
                    if index.get("format") == 2
                    else {}
                ),
                "shards": [
                    {k: s.get(k) for k in ("file", "blake3", "entries", "placement_rank")}
                    for s in certificate_shards(index)
                ],
                "python_check": f.get("check", {"status": "not run"}),
            },
            "solver": git_state(REPO),
            "environment": environment(),
            "corpus": f.get("corpus"),
            "lean": lean_section(lean, render),
            "final_theorem": {
                "name": theorem.get("name"),
                "statement": theorem.get("statement"),
                "axioms": observed_axioms(lean, theorem.get("name")),
                "axioms_pinned": theorem.get("axioms"),
            },
            "check": self._check_section(lean),
            "steps": [s.row() for s in self.steps],
            "files": vouched_files(self.work),
        }
        return doc

    def _check_section(self, lean: dict) -> dict | None:
        flat = self.facts.get("flat")
        render = self.facts.get("render")
        if not flat or not render:
            return None
        result = lean.get("result") or {}
        memory = (
            self.lean.memory_gib
            or (result.get("limits") or {}).get("memory_gib")
            or DEFAULT_LEAN_MEMORY_GIB
        )
        prints, lines = [], []
        guard = (render.get("corpus") or {}).get("guard_hits")
        if guard:
            lines.append(guard)
        for mod in render.get("modules", []):
            for name, axioms in (mod.get("axioms") or {}).items():
                if mod.get("kind") in ("main", "corpus"):
                    prints.append(name)
                    observed = (result.get("axioms") or {}).get(name)
                    lines.append(axioms_line(name, observed if observed is not None else axioms))
        measured = "not measured here"
        if lean.get("status") == "passed" and result:
            shards = list((result.get("shards") or {}).values())
            measured = {
                "seconds": round(sum(s.get("seconds") or 0 for s in shards), 1),
                "peak_mib": max((s.get("peak_mib") or 0 for s in shards), default=0),
                "date": str(result.get("created", ""))[:10],
                "how": "lake build per module, summed; peak of any one module",
            }
        return {
            "model_file": MODEL_FILE,
            "model_sha256": self.facts["flat"]["sha256"],
            "toolchain_file": TOOLCHAIN_FILE,
            "toolchain": flat["toolchain"],
            "print_axioms": prints,
            "command": lean_command(flat["toolchain"], memory),
            "expected_output": "\n".join(lines) + "\n",
            "measured": measured,
            "kernel": kernel_size(render),
        }

    # -- the whole run --------------------------------------------------------------------

    def _compare(self, doc: dict) -> Comparison | None:
        """The run against the published record of its ruleset, when there is one."""
        published = record_path(self.manifests, self.ruleset)
        if not published.is_file():
            where = published if self.manifests.is_dir() else f"{self.manifests}/ (no such folder)"
            self.no_record = f"no published record to compare with: none at {where}"
            return None
        return compare(doc, published, publisher_keys(self.manifests / "keys"))

    def run(self) -> VerifyReport:
        """The whole run, holding the lock of this ruleset's work folder throughout: a second
        verify of the same ruleset stops at once, naming this run's pid, instead of deleting
        its files (the lock of a killed run is taken over)."""
        check_stages(self.runner)
        if self.given is not None and not (self.given / "index.yaml").is_file():
            raise HarnessError(
                f"--certificate {self.given}: no certificate there (no index.yaml); nothing was run"
            )
        if self.given is not None:
            given, work = self.given.resolve(), self.work.resolve()
            if given.is_relative_to(work) or work.is_relative_to(given):
                raise HarnessError(
                    f"--certificate {self.given}: holds or lies in the run's own folder, "
                    "which the run starts by removing; copy it elsewhere first. Nothing was run"
                )
        if self.publish:
            require_project_key(self.key, self.manifests)
            probe_writable(self.manifests)  # not after the work: a read-only folder fails now
        made = probe_writable(self.work_root)
        try:
            with hold(self.work_root / f".{self.ruleset}.lock", str(self.final)):
                try:
                    return self._run()
                except BaseException:
                    # Broken off (a full disk, Ctrl-C): no partial folder stays behind.
                    shutil.rmtree(self.work, ignore_errors=True)
                    raise
        except BaseException as exc:
            remove_made(made)  # nor an empty work folder this run made
            # The error names the work folder asked for, not a file of the folder just removed.
            named = name_error(exc, self.work_root, staged=self.work)
            if named is exc:
                raise
            raise named from exc

    def _run(self) -> VerifyReport:
        if self.work.exists():
            # Only ever the leftovers of an earlier run that did not finish.
            shutil.rmtree(self.work)
        self.work.mkdir()
        failed = False
        try:
            for step in (
                self._solve,
                self._certify,
                self._check,
                self._corpus,
                self._render,
                self._flatten,
                self._lean,
            ):
                step()
        except _Failed:
            failed = True
        lean_status = (self.facts.get("lean") or {}).get("status")
        if failed:
            verdict = "OPEN" if self.steps[-1].status == "budget" else "FAIL"
        else:
            verdict = "PASS" if lean_status == "passed" else "INCOMPLETE"
        doc = self.manifest_doc(verdict)
        local = self.work / "manifest.yaml"
        write_manifest(local, doc, self.key)
        if verdict == "FAIL":
            return VerifyReport(verdict, EXIT_FAIL, self.steps, self.work, local, None, doc)
        if verdict == "OPEN":
            published = None
            if self.publish:
                published = publish_open(self.ruleset, self.work, self.manifests, self.key)
            return VerifyReport("OPEN", EXIT_OPEN, self.steps, self.work, local, published, doc)
        # Swap the finished run into place; compare it with the published record; publish it
        # only when asked to.
        replace_dir(self.work, self.final)
        comparison = self._compare(doc)
        published = None
        if self.publish:
            written, _ = publish_run(self.ruleset, self.final, self.manifests, self.key)
            published = written[0]
        code = EXIT_PASS if verdict == "PASS" else EXIT_INCOMPLETE
        if comparison is not None and comparison.status == "DIFFERS" and not self.publish:
            code = EXIT_FAIL
        return VerifyReport(
            verdict,
            code,
            self.steps,
            self.final,
            self.final / "manifest.yaml",
            published,
            doc,
            comparison,
            self.no_record,
        )


def kernel_size(render: dict) -> dict:
    """What the kernel is asked, from the render report: declarations, estimated steps in all
    and of the largest, the expected time at :data:`ASSUMED_KERNEL_STEPS_PER_SECOND`, and the
    modules by kind (the check modules can be built on different machines).

    >>> kernel_size({"budget": 10, "declarations": [{"estimated_steps": 4},
    ...     {"estimated_steps": 6}], "modules": [{"kind": "shard"}, {"kind": "main"}]})["steps"]
    10
    """
    steps = [int(d.get("estimated_steps") or 0) for d in render.get("declarations", [])]
    kinds: dict[str, int] = {}
    for mod in render.get("modules", []):
        kinds[mod.get("kind", "?")] = kinds.get(mod.get("kind", "?"), 0) + 1
    total = sum(steps)
    return {
        "declarations": len(steps),
        "steps": total,
        "largest_steps": max(steps, default=0),
        "budget_steps": render.get("budget"),
        "assumed_steps_per_second": ASSUMED_KERNEL_STEPS_PER_SECOND,
        "expected_seconds": round(total / ASSUMED_KERNEL_STEPS_PER_SECOND),
        "modules": dict(sorted(kinds.items())),
    }
