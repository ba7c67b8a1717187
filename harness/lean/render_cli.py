"""``python -m harness render CERT_DIR [--out lean/Generated] [--corpus FILE] [--check]``.

The lead wires :func:`register_render` into ``harness/lean/cli.py``.
"""

from __future__ import annotations

import argparse
import json

from harness.errors import EXIT_FAILED, HarnessError
from harness.lean.certdata import RenderError
from harness.lean.render import DEFAULT_OUT, render


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
    p.add_argument("--out", default=str(DEFAULT_OUT), help="output directory (default %(default)s)")
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
