"""Publishing a strong solve that has no certificate yet (``publish --solved WORKDIR``).

Some values are known before they can be certified: a partitioned strong solve of a billion
classes gives the value of the initial position hours before a certificate small enough for
the kernel exists. Such a value is published as a signed record of kind ``solve``::

    MANIFESTS/solved/RULESET.yaml, RULESET.dsse.json

It says what the solve found (value, plies, classes, positions, wins and losses), what it
cost (wall and CPU seconds, peak memory of a task, disk), which solver made it, and the
solution's :mod:`checksum <harness.solver.checksum>` with the blake3 hash of every column it
was read from, so that anyone who solves the ruleset again, with any partition count, can
compare. It vouches for no file and has no verdict: nothing independent of the solver has
checked the value, and the record says so in its ``trust`` field. A certified result of the
same ruleset (``verify --publish``) is the stronger claim, and replaces it.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.manifest.keys import SigningKey
from harness.manifest.manifest import envelope_path, now_utc, write_manifest
from harness.manifest.published import SOLVED_DIR, record_path
from harness.rules.ruleset import Ruleset
from harness.solver.checksum import checksum_text
from harness.solver.partitioned.driver import open_finished
from harness.solver.partitioned.files import REPORT, PartitionError, read_report
from harness.solver.partitioned.reader import PartitionedSolution
from harness.verify.publish import require_project_key

TRUST = (
    "a strong solve without a certificate: the value is the solver's answer, and nothing "
    "independent of the solver has checked it. Solve again (the command in 'reproduce') and "
    "compare the checksum; a certified result, when published, replaces this record."
)
NOT_STATED = "not stated in the solve's report"
CHECKSUM_OF = (
    "the sum modulo 2**64 of every class's SplitMix64 mix of its key, value and plies "
    "(harness.solver.checksum): the same for every solve of the ruleset, whatever its "
    "partitions"
)


def solved_path(manifests: Path, ruleset: str) -> Path:
    """Where the solve record of ``ruleset`` lies in the published folder."""
    return Path(manifests) / SOLVED_DIR / f"{ruleset}.yaml"


def solve_record(rs: Ruleset, workdir: Path, report: dict, where: str = "report") -> dict:
    """The record of the finished partitioned solve in ``workdir``, with the cost its
    ``report`` gives. Every column is read and checked against its hash; the report must
    be of this ruleset and agree with the folder on what was found."""
    try:
        sol = PartitionedSolution(rs, workdir)
    except PartitionError as exc:
        raise HarnessError(str(exc)) from None
    found = {
        "value": sol.value,
        "plies": sol.plies,
        "classes": sol.totals["classes"],
        "positions": sol.totals["positions"],
    }
    if report.get("ruleset") != rs.id or report.get("method") != "partitioned":
        raise HarnessError(
            f"{where}: the report of a {report.get('method')} solve of "
            f"{report.get('ruleset')}, not of a partitioned solve of {rs.id}"
        )
    if report.get("token") not in (None, sol.token):
        raise HarnessError(f"{where}: the report of another run than the one in {workdir}")
    checksum = checksum_text(sol.checksum())
    said = dict(found, checksum=checksum) if "checksum" in report else found
    differ = [
        f"{k} {report.get(k)!r} (folder: {v!r})" for k, v in said.items() if report.get(k) != v
    ]
    if differ:
        raise HarnessError(f"{where}: disagrees with the work folder: {', '.join(differ)}")
    columns = [{"partition": i, **hashes} for i, hashes in enumerate(sol.file_hashes)]
    return {
        "kind": "solve",
        "created": now_utc(),
        "ruleset": rs.id,
        "result": {
            **found,
            "canonical": sol.totals["canonical"],
            "wins": sol.totals["wins"],
            "losses": sol.totals["losses"],
            "deepest": sol.deepest,
        },
        "certificate": None,
        "trust": TRUST,
        "solution": {
            "method": "partitioned",
            "partitions": sol.partitions,
            "checksum": checksum,
            "checksum_of": CHECKSUM_OF,
            "columns": columns,
        },
        "cost": {
            "wall_seconds": report.get("seconds"),
            "cpu_seconds": report.get("cpu_seconds"),
            "driver_share": report.get("driver_share"),
            "tasks": report.get("tasks"),
            "cluster": report.get("cluster"),
            "peak_task_rss_bytes": report.get("peak_rss_bytes"),
            "disk_bytes": report.get("disk_bytes"),
            "enumeration_steps": report.get("enumeration_steps"),
            "plies_steps": report.get("plies_steps"),
            # The cost is that of the run the report is of, from the start or a saved step.
            "resumed_from": report.get("resumed_from", NOT_STATED),
        },
        "solver": report.get("solver") or NOT_STATED,
        "environment": report.get("environment") or NOT_STATED,
        "reproduce": (
            f"python -m harness solve {rs.id} --method partitioned --partitions "
            f"{sol.partitions} --workdir DIR --workers N --json"
        ),
        "files": {},
    }


def publish_solved(
    ruleset: str,
    workdir: Path,
    manifests: Path,
    key: SigningKey,
    report: Path | None = None,
) -> list[Path]:
    """Sign the solve in ``workdir`` (its report: ``report``, by default the folder's
    ``solved.json``) into ``manifests/solved/``; the files written."""
    require_project_key(key, manifests)
    if record_path(manifests, ruleset).exists():
        raise HarnessError(
            f"{record_path(manifests, ruleset)}: a certified result of {ruleset} is published; "
            "a solve record would add nothing to it"
        )
    rs = Ruleset.from_id(ruleset)
    try:
        open_finished(rs, workdir)  # a finished solve of this ruleset, before its report
    except PartitionError as exc:
        raise HarnessError(str(exc)) from None
    report = Path(report) if report is not None else Path(workdir) / REPORT
    if not report.is_file():
        raise HarnessError(
            f"{report}: no solve report (a partitioned solve writes it when it finishes; "
            "pass the output of `solve --json` with --report)"
        )
    try:
        said = read_report(report)
    except PartitionError as exc:
        raise HarnessError(str(exc)) from None
    doc = solve_record(rs, Path(workdir), said, str(report))
    target = solved_path(manifests, ruleset)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_manifest(target, doc, key)
    return [target, envelope_path(target)]
