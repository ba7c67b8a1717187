"""One cell of the results table: :func:`run_cell` runs ``verify`` on a ruleset and returns a
plain record (a ``dict`` of JSON values), so that a scheduler can map it over a matrix.

What a cell does:

* a **published** result (``MANIFESTS/RULESET.yaml``) is read, not recomputed, unless
  ``rerun``: a published result is only changed on purpose;
* a ruleset the Lean model covers runs the whole :class:`harness.verify.pipeline.Pipeline`
  (solve, certify, check, render, Lean, signed manifest), published with ``publish``;
* a ruleset outside the Lean model (``verify`` refuses those) runs solve, certify and the
  Python check, and says why Lean could not take part.

A spent budget gives an **open** record: the budget, the seconds spent and how deep the search
got. Every record has ``status`` (``published``, ``certified``, ``open`` or ``failed``),
``value`` (``x``, ``o``, ``draw`` or None), ``plies``, ``entries``, ``bytes`` (of the
certificate's shards), ``certify_seconds``, ``check_seconds``, ``kernel_steps`` (None: no cost
model yet), ``lean`` (what happened to the Lean step) and ``source`` (``reused`` for a
published record read back, else ``computed``).

>>> run_cell("pop1-4x4-c8-nonsense", 1)["status"]
'failed'
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from harness.bounded import read_yaml
from harness.errors import EXIT_BUDGET, HarnessError

DEPTH = re.compile(r"no (x|o) win within (\d+) plies")


def cell_record(ruleset: str, budget: float | None, **fields) -> dict:
    base = {
        "ruleset": ruleset,
        "status": "failed",
        "value": None,
        "plies": None,
        "positions": None,
        "entries": None,
        "bytes": None,
        "hash": None,
        "certify_seconds": None,
        "check_seconds": None,
        "kernel_steps": None,
        "verdict": None,
        "lean": None,
        "manifest": None,
        "budget": budget,
        "seconds": None,
        "reached": None,
        "detail": "",
        "source": "computed",  # or "reused": read from the published record, not rerun
    }
    base.update(fields)
    return base


def _reached(text: str) -> dict | None:
    """How deep a spent proof search got: the deepest bound searched per player."""
    found: dict[str, int] = {}
    for player, depth in DEPTH.findall(text):
        found[player] = max(found.get(player, 0), int(depth))
    return found or None


def _cert_bytes(cert: Path) -> int | None:
    if not cert.is_dir():
        return None
    return sum(p.stat().st_size for p in cert.glob("*.jsonl.gz"))


def _step_seconds(steps: list[dict], name: str) -> float | None:
    for s in steps:
        if s.get("step") == name:
            return s.get("seconds")
    return None


def published_record(ruleset: str, manifests: Path) -> dict | None:
    """The record of a published result (or open attempt), read from ``manifests``."""
    for path, status in (
        (manifests / f"{ruleset}.yaml", "published"),
        (manifests / "open" / f"{ruleset}.yaml", "open"),
    ):
        if not path.is_file():
            continue
        try:
            doc = read_yaml(path, what="manifest")
        except (OSError, ValueError, yaml.YAMLError):
            continue
        if not isinstance(doc, dict):
            continue
        return _from_manifest(ruleset, doc, status, path, None)
    return None


def _from_manifest(ruleset: str, doc: dict, status: str, path: Path, budget) -> dict:
    result = doc.get("result") or {}
    cert = doc.get("certificate") or {}
    steps = doc.get("steps") or []
    lean = doc.get("lean") or {}
    spent = [s for s in steps if s.get("status") == "budget"]
    value = result.get("value") if status != "open" else None
    return cell_record(
        ruleset,
        budget if budget is not None else (doc.get("budget") or None),
        status=status,
        value=value,
        plies=result.get("plies") if value else None,
        positions=result.get("positions"),
        entries=cert.get("entries"),
        bytes=sum(s.get("bytes") or 0 for s in cert.get("shards") or []) or None,
        hash=cert.get("hash"),
        certify_seconds=_step_seconds(steps, "certify"),
        check_seconds=_step_seconds(steps, "check"),
        verdict=doc.get("verdict"),
        lean=lean.get("status"),
        manifest=str(path),
        seconds=round(sum(s.get("seconds") or 0 for s in steps), 3),
        reached=_reached(" ".join(s.get("detail") or "" for s in spent)),
        detail=(spent[0].get("detail") if spent else "") or "",
    )


def run_cell(
    ruleset: str,
    budget: float | None = None,
    *,
    work: Path = Path("out/results"),
    manifests: Path = Path("manifests"),
    key=None,
    publish: bool = False,
    rerun: bool = False,
    runner=None,
    say: Callable[[str], None] | None = None,
) -> dict:
    """Run one cell and return its record (see the module docstring); never raises for a
    cell that fails: the record says ``failed`` and why."""
    from harness.lean.codec import lean_model_gap
    from harness.rules.ruleset import Ruleset

    t0 = time.monotonic()
    try:
        rs = Ruleset.from_id(ruleset)
    except ValueError as exc:
        return cell_record(ruleset, budget, detail=str(exc))
    manifests, work = Path(manifests), Path(work)
    if not rerun:
        found = published_record(rs.id, manifests)
        if found is not None and found["status"] == "published":
            return {**found, "source": "reused"}
    from harness.verify.stages import HarnessRunner

    runner = runner or HarnessRunner()
    say = say or (lambda line: None)
    gap = lean_model_gap(rs)
    try:
        if gap is None:
            record = _verify_cell(rs.id, budget, work, manifests, key, publish, runner, say)
        else:
            record = _python_cell(rs, budget, work, runner, say, gap)
    except HarnessError as exc:
        record = cell_record(rs.id, budget, detail=str(exc))
    record["seconds"] = round(time.monotonic() - t0, 3)
    return record


def _verify_cell(ruleset, budget, work, manifests, key, publish, runner, say) -> dict:
    from harness.manifest.keys import default_key_path, load_private
    from harness.verify.pipeline import Pipeline

    key = key or load_private(default_key_path())
    report = Pipeline(
        ruleset,
        key,
        runner=runner,
        work_root=work / "verify",
        manifests=manifests,
        budget=budget,
        publish=publish,
        say=say,
    ).run()
    doc = report.doc
    status = {"OPEN": "open", "FAIL": "failed"}.get(report.verdict, "certified")
    record = _from_manifest(ruleset, doc, status, report.manifest, budget)
    record["bytes"] = _cert_bytes(report.work / "certificate")
    if report.published is not None:
        record["manifest"] = str(report.published)
        record["status"] = "published" if status == "certified" else status
    if status == "failed":
        failed = [s for s in report.steps if s.status == "failed"]
        record["detail"] = failed[-1].detail if failed else ""
    return record


def _python_cell(rs, budget, work, runner, say, gap: str) -> dict:
    """Outside the Lean model: solve, certify and check with the Python checker."""
    from harness.solver.choice import AUTO_CLASS_LIMIT, class_bound

    folder = work / "python" / rs.id
    folder.mkdir(parents=True, exist_ok=True)
    cert = folder / "certificate"
    solution = folder / "solution.npz"
    lean = f"not run: {gap}"
    limit = [] if budget is None else ["--time-limit", f"{budget:g}"]
    keep = ["--out", str(solution)] if class_bound(rs) <= AUTO_CLASS_LIMIT else []
    say(f"{rs.id}: solve")
    # Beyond a retrograde-sized graph the proof search is the one that finishes within a
    # modest budget (4x4 c8 ringout: o in 14 in a second, where a strong solve takes minutes).
    method = [] if keep else ["--method", "proof"]
    done = runner.run(["solve", rs.id, "--json", *keep, *method, *limit])
    if done.returncode == EXIT_BUDGET:
        return cell_record(
            rs.id,
            budget,
            status="open",
            lean=lean,
            reached=_reached(done.last_error_line()),
            detail=done.last_error_line().removeprefix("error: "),
        )
    info = _last_json(done.stdout)
    if done.returncode != 0 or "value" not in info:
        return cell_record(rs.id, budget, lean=lean, detail=done.last_error_line())
    args = ["certify", rs.id, "--out", str(cert), "--force", "--json"]
    if solution.is_file():
        args += ["--solution", str(solution)]
    if budget is not None:
        args += ["--time-limit", f"{budget:g}"]
    say(f"{rs.id}: certify")
    made = runner.run(args)
    base = dict(value=info["value"], plies=info.get("plies"), positions=info.get("positions"))
    if made.returncode == EXIT_BUDGET:
        return cell_record(
            rs.id,
            budget,
            status="open",
            lean=lean,
            **base,
            reached=_reached(made.last_error_line()),
            detail=made.last_error_line().removeprefix("error: "),
        )
    summary = _last_json(made.stdout)
    if made.returncode != 0:
        return cell_record(rs.id, budget, lean=lean, **base, detail=made.last_error_line())
    say(f"{rs.id}: check")
    checked = runner.run(["check", str(cert), "--ruleset", rs.id, "--json"])
    report = _last_json(checked.stdout)
    ok = checked.returncode == 0 and report.get("ok") is True
    certified = summary.get("value") if summary.get("kind") == "nonwin" else summary.get("winner")
    agrees = certified == info["value"]
    return cell_record(
        rs.id,
        budget,
        status="certified" if ok and agrees else "failed",
        **base,
        entries=summary.get("entries"),
        bytes=summary.get("bytes"),
        hash=summary.get("hash"),
        certify_seconds=round(made.seconds, 3),
        check_seconds=round(checked.seconds, 3),
        verdict="PYTHON-CHECKED" if ok and agrees else "FAIL",
        lean=lean,
        manifest=None,
        detail=""
        if ok and agrees
        else ((report.get("errors") or [""])[0] or f"certificate says {certified}"),
    )


def _last_json(text: str) -> dict:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return {}


def cell_text(r: dict) -> str:
    """One cell of the grid: ``x in 7 (96)``, ``draw (1,711)``, ``open (300 s)``."""
    entries = f" ({r['entries']:,})" if r.get("entries") else ""
    if r["status"] in ("published", "certified"):
        if r["value"] == "draw":
            return f"draw{entries}"
        return f"{r['value']} in {r['plies']}{entries}"
    if r["status"] == "open":
        budget = f"{r['budget']:g} s" if r.get("budget") else "budget"
        reached = r.get("reached") or {}
        depth = ", ".join(f"no {p} win ≤ {d}" for p, d in sorted(reached.items()))
        return f"open ({budget}{'; ' + depth if depth else ''})"
    return "failed"
