"""``python -m harness results``: verify every cell of a named matrix and publish the table.

Each cell is :func:`harness.results.cell.run_cell`; the table goes to ``WORK/MATRIX.json``
(one record per cell) and ``WORK/MATRIX.md`` (a grid: rows board and checkers, columns the
edges; each cell its value and plies, or open with the budget spent). With ``--publish`` the
cells that verify are published (``verify --publish``) and the table is signed into
``MANIFESTS/results/MATRIX.yaml``; published results are read, never recomputed, unless
``--rerun``.

Exit codes: 0 every cell has a record (certified, published or open); 1 some cell failed;
2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from harness.atomic import atomic_file
from harness.bounded import read_yaml
from harness.cli import add_folder_options, positive
from harness.cluster import Session, add_cluster_arguments, cluster_spec
from harness.cluster.tasks import TaskQueue
from harness.errors import EXIT_FAILED, EXIT_OK, HarnessError
from harness.results.cell import cell_record, cell_text, run_cell
from harness.results.matrix import EDGES, MATRICES, cells_of, grid_place
from harness.results.published import (
    generated_block,
    read_published,
    read_solved,
    summary_markdown,
    tables_markdown,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "results",
        help="verify every cell of a matrix of rulesets and publish the results table",
        description="Verify every cell of a named matrix of rulesets and publish the table.",
        epilog="a cell already published is reused (read back, not recomputed) unless --rerun;\n"
        "--published prints what manifests/ holds (the README's and docs/results.md's tables)\n"
        "\nexit codes of results:\n"
        "  0  every cell has a record (certified, published or open)\n"
        "  1  some cell failed\n"
        "  2  bad input",
    )
    p.add_argument(
        "--published",
        action="store_true",
        help="run nothing: print what the signed records in MANIFESTS prove, as Markdown",
    )
    p.add_argument(
        "--matrix",
        default="default",
        choices=sorted(MATRICES),
        help="which rulesets: issue (c8 on 4x4, 5x5, 6x6, 3x3), small (c3-c6) or default (both)",
    )
    p.add_argument(
        "--only",
        action="append",
        metavar="TEXT",
        help="only cells whose ruleset id contains TEXT (repeatable), e.g. 4x4 or c8-torus",
    )
    p.add_argument(
        "--budget",
        type=positive(float),
        default=300.0,
        metavar="S",
        help="seconds each of solve and certify may spend per cell (default 300)",
    )
    add_folder_options(
        p,
        "out/results",
        "where the cells' runs and the table go",
        "the published folder to reuse cells from and publish to",
    )
    p.add_argument("--key", type=Path, default=None, help="private signing key")
    p.add_argument(
        "--publish",
        action="store_true",
        help="maintainers: publish verified cells and the signed table in MANIFESTS",
    )
    p.add_argument(
        "--rerun", action="store_true", help="recompute cells that are already published"
    )
    p.add_argument("--json", action="store_true", help="print the records as JSON lines")
    add_cluster_arguments(p)
    p.set_defaults(func=run)


def grid(records: list[dict]) -> str:
    """The table as a Markdown grid: rows board and checkers, columns the edges.

    >>> print(grid([{"ruleset": "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump",
    ...              "status": "published", "value": "x", "plies": 7, "entries": 96}]))
    | board | reincarnation | ringout | blocked | klein | torus |
    |---|---|---|---|---|---|
    | 4x4 c8 |  |  |  |  | x in 7 (96) |
    """
    rows: dict[str, dict[str, str]] = {}
    for r in records:
        place = grid_place(r["ruleset"])
        if place is not None:
            rows.setdefault(place[0], {})[place[1]] = cell_text(r)
    lines = ["| board | " + " | ".join(EDGES) + " |", "|---" * (len(EDGES) + 1) + "|"]
    for row, cells in rows.items():
        lines.append(f"| {row} | " + " | ".join(cells.get(e, "") for e in EDGES) + " |")
    return "\n".join(lines)


def table(records: list[dict]) -> str:
    """Every record as a row: the closing note's table."""
    head = "| cell | status | value | entries | bytes | certify s | check s | kernel steps | lean |"
    lines = [head, "|---|---|---|---:|---:|---:|---:|---:|---|"]

    def fmt(v, comma=False):
        if v is None:
            return "—"
        return f"{v:,}" if comma else str(v)

    for r in records:
        value = cell_text(r) if r["status"] in ("published", "certified") else r["status"]
        lines.append(
            f"| {r['ruleset']} | {r['status']} | {value} | {fmt(r.get('entries'), True)} | "
            f"{fmt(r.get('bytes'), True)} | {fmt(r.get('certify_seconds'))} | "
            f"{fmt(r.get('check_seconds'))} | {fmt(r.get('kernel_steps'), True)} | "
            f"{r.get('lean') or '—'} |"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.published:
        rows, solved = read_published(args.manifests), read_solved(args.manifests)
        print(generated_block("summary", summary_markdown(rows, solved)))
        print()
        print(generated_block("tables", tables_markdown(rows, solved)))
        return EXIT_OK
    try:
        cells = cells_of(args.matrix, args.only)
    except ValueError as exc:
        raise HarnessError(str(exc)) from None
    if not cells:
        raise HarnessError(f"--only {' '.join(args.only or [])}: no cell of {args.matrix} matches")
    from harness.manifest.keys import signing_key_or_new

    key = signing_key_or_new(args.key)  # made on a first run, as verify does
    if args.publish:
        from harness.verify.publish import require_project_key

        require_project_key(key, args.manifests)
    kept = {}
    if not args.rerun:
        kept = kept_open_cells(args.manifests, args.matrix, args.only, args.budget)
    todo = [c for c in cells if c.ruleset not in kept]
    records = []
    spec = cluster_spec(args)
    if spec.requested:
        records_done = _cells_on_cluster(spec, todo, args, key)
        done = dict(zip((c.ruleset for c in todo), records_done, strict=True))
    for i, cell in enumerate(cells, 1):
        if cell.ruleset in kept:
            record = kept[cell.ruleset]
            say = f"[{i}/{len(cells)}] {cell.ruleset} (open: kept from the published table)"
            print(say, file=sys.stderr)
            records.append(record)
        elif spec.requested:
            record = done[cell.ruleset]
            records.append(record)
        else:
            print(f"[{i}/{len(cells)}] {cell.ruleset}", file=sys.stderr)
            record = run_cell(
                cell.ruleset,
                args.budget,
                work=args.work,
                manifests=args.manifests,
                key=key,
                publish=args.publish,
                rerun=args.rerun,
            )
            records.append(record)
        how = "reused: the published record, --rerun recomputes it"
        how = how if record.get("source") == "reused" else "computed"
        print(f"    {record['status']} ({how}): {cell_text(record)}", file=sys.stderr)
        if args.json:
            print(json.dumps(record))
    write_table(args.work, args.matrix, records, only=args.only)
    if args.publish:
        publish_table(args.manifests, args.matrix, records, key, only=args.only)
    if not args.json:
        print(grid(records))
    return EXIT_FAILED if any(r["status"] == "failed" for r in records) else EXIT_OK


def kept_open_cells(manifests: Path, matrix: str, only, budget: float) -> dict[str, dict]:
    """The open cells of the published table that a run with ``budget`` would not improve on.

    An open record says how far a budget got; a run with a smaller or equal budget can only
    say less, so such a cell keeps its published record (``--rerun`` recomputes it). A cell
    that is now published on its own (``MANIFESTS/RULESET.yaml``) is never kept: its record
    is read from there.
    """
    path = Path(manifests) / "results" / f"{_name(matrix, only)}.yaml"
    try:
        doc = read_yaml(path, what="results table")
    except (OSError, ValueError, yaml.YAMLError):
        return {}
    cells = doc.get("cells") if isinstance(doc, dict) else None
    kept = {}
    for r in cells if isinstance(cells, list) else []:
        if not isinstance(r, dict) or r.get("status") != "open":
            continue
        ruleset, spent = r.get("ruleset"), r.get("budget")
        if not isinstance(ruleset, str) or not isinstance(spent, int | float):
            continue
        if spent >= budget and not (Path(manifests) / f"{ruleset}.yaml").is_file():
            kept[ruleset] = r
    return kept


def cell_task(ruleset, budget, work, manifests, key_path, publish, rerun) -> dict:
    """One cell as a Dask task: the key is loaded on the worker (keys do not travel)."""
    from harness.manifest.keys import load_private

    key = None if key_path is None else load_private(Path(key_path))
    return run_cell(
        ruleset,
        budget,
        work=Path(work),
        manifests=Path(manifests),
        key=key,
        publish=publish,
        rerun=rerun,
    )


def _cells_on_cluster(spec, cells, args, key) -> list[dict]:
    """Every cell's ``verify`` as one task; records in the matrix's order. A cell whose
    task was lost or raised gets a ``failed`` record saying so (reported once)."""
    key_path = None if key is None or key.path is None else str(Path(key.path).resolve())
    work, manifests = str(args.work.resolve()), str(args.manifests.resolve())
    ends = {}
    with Session(spec) as session, session.bar(len(cells), "results", unit="cell") as bar:
        queue = TaskQueue(session, bar)
        for i, c in enumerate(cells):
            queue.submit(
                i,
                cell_task,
                c.ruleset,
                args.budget,
                work,
                manifests,
                key_path,
                args.publish,
                args.rerun,
                key=f"results-cell-{i:03d}-{c.ruleset}",
            )
        for end in queue:
            ends[end.tag] = end
    records = []
    for i, cell in enumerate(cells):
        end = ends[i]
        if end.ok:
            records.append(end.value)
        else:
            exc = end.error
            why = f"the cell's task failed on the cluster: {type(exc).__name__}: {exc}"
            records.append(cell_record(cell.ruleset, args.budget, detail=why))
    return records


def _name(matrix: str, only: list[str] | None) -> str:
    return matrix if not only else matrix + "-" + "-".join(o.replace("/", "_") for o in only)


def write_table(work: Path, matrix: str, records: list[dict], only=None) -> None:
    name = _name(matrix, only)
    work.mkdir(parents=True, exist_ok=True)
    with atomic_file(work / f"{name}.json") as f:
        f.write(json.dumps({"matrix": matrix, "only": only, "cells": records}, indent=2).encode())
    text = f"# Results: {name}\n\n{grid(records)}\n\n{table(records)}\n"
    with atomic_file(work / f"{name}.md") as f:
        f.write(text.encode())


def publish_table(manifests: Path, matrix: str, records: list[dict], key, only=None) -> Path:
    """Sign the table into ``MANIFESTS/results/NAME.yaml`` (+ its DSSE envelope)."""
    from harness.manifest.manifest import now_utc, write_manifest

    path = Path(manifests) / "results" / f"{_name(matrix, only)}.yaml"
    records = [dict(r, manifest=_relative(r.get("manifest"), Path(manifests))) for r in records]
    doc = {
        "kind": "results",
        "matrix": matrix,
        "only": only,
        "created": now_utc(),
        "cells": records,
    }
    write_manifest(path, doc, key)
    return path


def _relative(manifest: str | None, manifests: Path) -> str | None:
    """A record's manifest path as published (``manifests/NAME``), never a host path.

    >>> _relative("/home/me/repo/manifests/open/r.yaml", Path("/home/me/repo/manifests"))
    'manifests/open/r.yaml'
    """
    if not manifest:
        return None
    try:
        return "manifests/" + Path(manifest).resolve().relative_to(manifests.resolve()).as_posix()
    except ValueError:
        return None
