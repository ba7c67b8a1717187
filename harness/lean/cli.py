"""The Lean stage's commands: ``render`` (a certificate as Lean modules) and ``lean`` (check
the rendered modules with the real toolchain).

``python -m harness render CERT_DIR [--out lean/Generated] [--corpus FILE] [--check]``
writes one module per shard, the final theorem and the corpus check. ``python -m harness
lean`` builds them. Its exit codes: 0 every module passed; 1 a module failed (compile
error, timeout, memory cap, ``sorry``, a forbidden axiom, unreadable output, or skipped
behind one of those); 2 unusable input (no Lean project, no rendered modules, an import
cycle, bad options); 4 no Lean toolchain here (nothing was run; the message says how to
install one).

The result file (default ``out/lean/result.json``, written atomically) is what the manifest
step reads; see :func:`harness.lean.runner.run_project` for its fields and
:func:`harness.lean.verdict.load_result` to read it back.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tqdm import tqdm

from harness.cli import HelpFormatter, positive
from harness.cluster import Session, add_cluster_arguments, cluster_spec
from harness.errors import EXIT_FAILED, EXIT_OK, HarnessError
from harness.lean.cache import ResultCache, write_json_atomic
from harness.lean.certdata import RenderError
from harness.lean.child import GIB, Limits, physical_memory
from harness.lean.modules import discover_modules
from harness.lean.render import GENERATED_DIR, render
from harness.lean.runner import run_project
from harness.lean.toolchain import EXIT_NO_TOOLCHAIN, discover


def register_render(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "render",
        help="render a certificate as Lean modules for the kernel to check",
        description=(
            "Write one Lean module per certificate shard, the final theorem and (with "
            "--corpus) the transition-corpus check into OUT (default lean/Generated). "
            "Deterministic; OUT is replaced atomically. Exit codes: 0 written, 1 the mirror "
            "of the Lean checker rejects the certificate (--check), 2 unusable input."
        ),
    )
    p.add_argument("cert_dir", metavar="CERT_DIR", help="certificate directory (index.yaml)")
    p.add_argument(
        "--out", default=str(GENERATED_DIR), help="output directory (default %(default)s)"
    )
    p.add_argument("--corpus", metavar="FILE", help="transition corpus (corpus.jsonl) to check")
    p.add_argument(
        "--check",
        action="store_true",
        help="first run the Python mirror of the Lean checker; refuse what Lean would reject",
    )
    p.add_argument("--json", action="store_true", help="print the render summary as JSON")
    p.set_defaults(func=_run)


class _Rejected(HarnessError):
    exit_code = EXIT_FAILED


def _run(args: argparse.Namespace) -> int:
    from harness.cert.nonwin_format import FORMAT as NONWIN_FORMAT
    from harness.cert.nonwin_format import index_format
    from harness.lean.render_nonwin import render_nonwin

    draw = index_format(args.cert_dir) == NONWIN_FORMAT
    try:
        summary = (render_nonwin if draw else render)(
            args.cert_dir, args.out, corpus=args.corpus, check=args.check
        )
    except RenderError as exc:
        if args.check and "would reject" in str(exc):
            raise _Rejected(str(exc)) from None
        raise HarnessError(str(exc)) from None
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        shards = sum(1 for m in summary["modules"] if m["kind"] == "shard")
        what = f"value {summary['value']}" if draw else f"winner {summary['winner']}"
        print(
            f"rendered {summary['ruleset']} ({what}): {shards} shard "
            f"module(s), {summary['entries']} entries + {summary['aliases']} aliases -> {args.out}"
        )
        if "corpus" in summary:
            print(
                f"corpus: {summary['corpus']['records']} records; expect "
                f"{summary['corpus']['guard_hits']}"
            )
    return 0


DEFAULT_MEMORY_GIB = 8.0
DEFAULT_TIMEOUT = 1800.0
RESULT_FILE = Path("out/lean/result.json")

EPILOG = f"""\
exit codes of lean:
  0  all modules passed
  1  a module failed
  2  unusable input
  {EXIT_NO_TOOLCHAIN}  no Lean toolchain found (install elan, then the toolchain pinned in
     lean/lean-toolchain)

Each module is built with `lake build +MODULE` in its own process group, under an
address-space cap (RLIMIT_AS) of --memory GiB and a wall-clock --timeout; modules run in
import order, --jobs at a time (or as Dask tasks with --workers, --scheduler or
--cluster-config: docs/cluster.md). Passing results are cached by (module text, imported
modules, the rest of the Lean project, toolchain), so a re-run checks only what changed.
"""


def add_limit_arguments(parser: argparse.ArgumentParser, *, passed_on: bool = False) -> None:
    """``--jobs``, ``--memory`` and ``--timeout`` of a Lean run. With ``passed_on`` (a command
    that runs ``python -m harness lean`` for you) they default to None: lean's own defaults."""

    def default(value: float) -> float | None:
        return None if passed_on else value

    lean = "Lean: " if passed_on else ""
    parser.add_argument(
        "--jobs",
        type=positive(int),
        default=None,
        metavar="N",
        help=f"{lean}modules built at once (default: cores, bounded by memory / --memory)",
    )
    parser.add_argument(
        "--memory",
        type=positive(float),
        default=default(DEFAULT_MEMORY_GIB),
        metavar="GiB",
        help=f"{lean}address-space cap per build, in GiB (default {DEFAULT_MEMORY_GIB:g})",
    )
    parser.add_argument(
        "--timeout",
        type=positive(float),
        default=default(DEFAULT_TIMEOUT),
        metavar="S",
        help=f"{lean}wall-clock limit per build, in seconds (default {DEFAULT_TIMEOUT:g})",
    )


def default_jobs(memory_gib: float) -> int:
    """As many children as there are cores and as fit in physical memory at the cap (>= 1)."""
    cores = os.cpu_count() or 1
    physical = physical_memory()
    if physical is None:
        return max(1, min(cores, 2))
    return max(1, min(cores, int(physical // (memory_gib * GIB))))


def register_lean(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``lean`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "lean",
        help="check the rendered Lean modules with lake (axioms, GUARD_HITS, limits)",
        description="Build every rendered module of the Lean project with the real Lean "
        "toolchain, in dependency order, under a memory cap and a timeout; check their "
        "axioms and GUARD_HITS; write a JSON result.",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    add_limit_arguments(parser)
    parser.add_argument(
        "--project",
        type=Path,
        default=Path("lean"),
        metavar="DIR",
        help="the Lean project (default: lean)",
    )
    parser.add_argument(
        "--generated",
        default="Generated",
        metavar="SUBDIR",
        help="folder of rendered modules inside the project (default: Generated)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=RESULT_FILE,
        metavar="FILE",
        help=f"where to write the JSON result (default: {RESULT_FILE})",
    )
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="FILE",
        help="result cache (default: cache.json next to --out)",
    )
    cache.add_argument("--no-cache", action="store_true", help="check every module again")
    add_cluster_arguments(parser)
    parser.set_defaults(func=run_lean)
    return parser


def _line(record: dict) -> str:
    if record["cached"]:
        where = "cached"
    elif record["seconds"] is None:
        where = "not run"
    else:
        where = f"{record['seconds']:.1f} s, {record['peak_mib']:.0f} MiB"
    text = f"{record['status']:<15} {record['module']}  ({where})"
    if record["status"] != "passed" and record["messages"]:
        first = record["messages"][0]
        body = " ".join(first["text"].split())
        if len(body) > 160:
            body = body[:159] + "…"
        text += f"\n{'':<16}{body}"
    return text


def run_lean(args: argparse.Namespace) -> int:
    project: Path = args.project
    if not project.is_dir():
        raise HarnessError(f"no Lean project at {project} (pass --project DIR)")
    if not any((project / n).is_file() for n in ("lakefile.toml", "lakefile.lean")):
        raise HarnessError(f"{project} has no lakefile.toml or lakefile.lean (pass --project DIR)")
    # Input problems (nothing rendered, an import cycle) are reported before the toolchain is
    # looked for, so the exit code does not depend on the machine.
    discover_modules(project, args.generated)
    toolchain = discover(project)
    if toolchain.matches_pin() is False:
        print(
            f"warning: running Lean {toolchain.lean_version}, but {project / 'lean-toolchain'} "
            f"pins {toolchain.pinned}",
            file=sys.stderr,
        )
    jobs = args.jobs or default_jobs(args.memory)
    limits = Limits(jobs=jobs, memory_bytes=int(args.memory * GIB), timeout=args.timeout)
    out: Path = args.out
    cache_path = None if args.no_cache else (args.cache or out.parent / "cache.json")
    cache = ResultCache(cache_path) if cache_path is not None else None
    log_dir = out.parent / "logs"
    spec = cluster_spec(args)

    def check(session: Session | None) -> dict:
        return run_project(
            project,
            toolchain,
            generated=args.generated,
            limits=limits,
            cache=cache,
            log_dir=log_dir,
            on_result=lambda record: tqdm.write(_line(record), file=sys.stdout),
            session=session,
        )

    if spec.requested:
        with Session(spec) as session:
            result = check(session)
    else:
        result = check(None)
    write_json_atomic(out, result)
    summary = result["summary"]
    failed = {s: n for s, n in summary["by_status"].items() if n and s != "passed"}
    detail = ", ".join(f"{n} {s}" for s, n in failed.items())
    print(
        f"{summary['modules']} modules: {summary['passed']} passed"
        f" ({summary['cached']} from cache)" + (f", {detail}" if detail else "")
    )
    if result["prepare"] is not None and result["prepare"]["status"] != "passed":
        prep = result["prepare"]
        print(f"prepare build failed: {prep['status']} (log: {prep['log']})")
    print(f"Lean {toolchain.lean_version}; result written to {out}")
    return EXIT_OK if result["ok"] else EXIT_FAILED


def register(subparsers: argparse._SubParsersAction) -> None:
    register_render(subparsers)
    register_lean(subparsers)
