"""Commands of the verify stage: ``verify`` (the whole pipeline for one ruleset) and
``publish`` (a verified run into the published folder; maintainers only).

See ``docs/verification.md`` for the whole flow; each command's ``--help`` for its options
and exit codes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli import add_folder_options, positive, ruleset_id
from harness.cluster.options import add_cluster_arguments, cluster_spec
from harness.errors import EXIT_OK, HarnessError
from harness.lean.cli import add_limit_arguments
from harness.manifest.keys import (
    KEY_HELP,
    load_private_or_default,
    signing_key_or_new,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    from harness.rules.ruleset import DEFAULT_RULESET

    # -- verify -------------------------------------------------------------------------
    p = subparsers.add_parser(
        "verify",
        help="solve, certify, check, render, run Lean, and sign a manifest",
        description="The whole pipeline for one ruleset: solve -> certify -> Python check -> "
        "corpus -> render -> sealed model file -> Lean (recorded as 'not run' where no "
        "toolchain exists) -> a manifest signed with your key, WORK/RULESET/manifest.yaml "
        "(the run's folder, replaced only by a run that did not fail). A run is not a "
        "publication: when MANIFESTS holds a published record of the ruleset, the run ends "
        "REPRODUCED (certificate hash, model hash and result agree) or DIFFERS (the fields "
        "that differ); MANIFESTS is written only with --publish. Rulesets outside what the "
        "Lean model covers are refused before anything runs.",
        epilog="exit codes: 0 PASS; 1 a step failed, a stage is missing, or the run DIFFERS "
        "from the published record; 2 bad input (also a ruleset the Lean model does not "
        "cover); 3 INCOMPLETE (everything passed, but Lean could not run here); 5 OPEN "
        "(--budget ran out before solve or certify finished)",
    )
    p.add_argument(
        "ruleset",
        nargs="?",
        type=ruleset_id,
        default=DEFAULT_RULESET.id,
        help=f"ruleset id (default {DEFAULT_RULESET.id})",
    )
    p.add_argument("--key", type=Path, default=None, help=KEY_HELP)
    add_folder_options(
        p,
        "out/verify",
        "where the run's files go",
        "the published records to compare with, written only with --publish",
    )
    p.add_argument(
        "--publish",
        action="store_true",
        help="maintainers: publish the run in MANIFESTS (manifest and sealed archive; an "
        "open attempt under open/); the key must be a project key, listed in MANIFESTS/keys/",
    )
    p.add_argument(
        "--budget",
        type=positive(float),
        default=None,
        metavar="S",
        help="seconds each of solve and certify may spend (default: no limit)",
    )
    p.add_argument(
        "--certificate",
        type=Path,
        default=None,
        metavar="DIR",
        help="check this certificate (a `certify` run's --out folder, made by hand or on a "
        "cluster) instead of running certify: it must be for RULESET and establish solve's "
        "value, and the check and Lean stages trust nothing else of it",
    )
    add_limit_arguments(p, passed_on=True)
    add_cluster_arguments(p)
    p.set_defaults(func=_verify)

    # -- publish ------------------------------------------------------------------------
    pb = subparsers.add_parser(
        "publish",
        help="maintainers: publish a verified run (manifest and sealed archive) in MANIFESTS",
        description="Publish the run `verify` left in WORK/RULESET: its signed manifest as "
        "MANIFESTS/RULESET.yaml (+ .dsse.json) and its sealed archive as "
        "MANIFESTS/archives/RULESET-<12 hex>.zip, replacing an earlier archive of the "
        "ruleset and the record of an open attempt. The run must be signed with a project "
        "key: one whose public half is in MANIFESTS/keys/.",
        epilog="exit codes: 0 published; 2 the run cannot be published (no run, changed "
        "since verify, or signed with a key that is not a project key)",
    )
    pb.add_argument(
        "ruleset",
        nargs="?",
        type=ruleset_id,
        default=DEFAULT_RULESET.id,
        help=f"ruleset id (default {DEFAULT_RULESET.id})",
    )
    pb.add_argument("--key", type=Path, default=None, help=KEY_HELP)
    add_folder_options(
        pb, "out/verify", "where verify left the run", "the published folder to publish into"
    )
    pb.add_argument(
        "--solved",
        type=Path,
        default=None,
        metavar="WORKDIR",
        help="publish instead the finished partitioned strong solve in WORKDIR, which has no "
        "certificate: a signed record of kind solve in MANIFESTS/solved/ (value, classes, "
        "cost, solution checksum; every column's hash is checked first)",
    )
    pb.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --solved: the solve's report (its `solve --json` output; default "
        "WORKDIR/solved.json)",
    )
    pb.set_defaults(func=_publish)


def _lean_covers(ruleset: str) -> None:
    from harness.lean.codec import lean_model_gap
    from harness.rules.ruleset import Ruleset

    gap = lean_model_gap(Ruleset.from_id(ruleset))
    if gap is not None:
        raise HarnessError(f"verify: ruleset {ruleset}: {gap}; nothing was run")


def _verify(args: argparse.Namespace) -> int:
    from harness.verify.pipeline import LeanOptions, Pipeline
    from harness.verify.sections import summary_table

    _lean_covers(args.ruleset)
    key = signing_key_or_new(args.key)
    pipe = Pipeline(
        args.ruleset,
        key,
        work_root=args.work,
        manifests=args.manifests,
        lean=LeanOptions(args.memory, args.timeout, args.jobs),
        budget=args.budget,
        publish=args.publish,
        cluster=cluster_spec(args),
        certificate=args.certificate,
    )
    report = pipe.run()
    # Each step's detail was said as it ran (stderr); the table gives status and time only.
    print(summary_table(report.steps, details=False))
    print()
    print(f"verdict {report.verdict}; signed manifest {report.manifest} (key {key.keyid[:16]})")
    if report.published is not None:
        print(f"published {report.published}")
    if report.verdict == "FAIL":
        print(f"the run's files are kept in {report.work} for inspection")
    if report.comparison_line() is not None:
        print(report.comparison_line())
    return report.exit_code


def _publish(args: argparse.Namespace) -> int:
    from harness.verify.publish import publish_run

    if args.report is not None and args.solved is None:
        raise HarnessError("--report needs --solved WORKDIR")
    key = load_private_or_default(args.key)
    if args.solved is not None:
        from harness.verify.solved import publish_solved

        for path in publish_solved(args.ruleset, args.solved, args.manifests, key, args.report):
            print(f"published {path}")
        return EXIT_OK
    written, removed = publish_run(args.ruleset, args.work / args.ruleset, args.manifests, key)
    for path in written:
        print(f"published {path}")
    for path in removed:
        print(f"removed   {path} (superseded)")
    return EXIT_OK
