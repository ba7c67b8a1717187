"""The Results page's grid: the signed results tables (``MANIFESTS/results/*.yaml``, written by
``python -m harness results --publish``) as rows of board and checkers by the five edges.

Only tables whose DSSE envelope verifies under a publisher key in ``MANIFESTS/keys/`` are shown.
Each cell: its status and value (the page colours x, o, draw and open apart), plies, entries,
and a link to the result's manifest when it is published.

>>> grid_rows([{"ruleset": "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump",
...             "status": "published", "value": "x", "plies": 7, "entries": 96}])[0]["row"]
'4x4 c8'
"""

from __future__ import annotations

from pathlib import Path

from harness.results.cell import cell_text
from harness.results.matrix import EDGES, grid_place
from harness.results.published import board_order


def grid_rows(
    records: list[dict],
    published: set[str] | frozenset = frozenset(),
    pages: dict[str, str] | None = None,
) -> list[dict]:
    """Rows ``{row, cells: [cell or None per edge]}`` in the table's order. A cell links to
    its page in ``pages`` (a replay), else to its manifest when it is ``published``."""
    rows: dict[str, dict[str, dict]] = {}
    for r in records:
        place = grid_place(r.get("ruleset", ""))
        if place is None:
            continue
        row, edge = place
        status = r.get("status")
        value = r.get("value") if status in ("published", "certified") else None
        rows.setdefault(row, {})[edge] = {
            "ruleset": r["ruleset"],
            "status": status,
            "value": value,
            "css": f"value-{value}" if value else f"value-{status}",
            "text": cell_text(r),
            "plies": r.get("plies"),
            "entries": r.get("entries"),
            "href": (pages or {}).get(r["ruleset"])
            or (f"results/{r['ruleset']}/manifest.yaml" if r["ruleset"] in published else None),
            "lean": r.get("lean"),
        }
    return [{"row": row, "cells": [cells.get(e) for e in EDGES]} for row, cells in rows.items()]


def index_grid(summaries: list[dict]) -> list[dict]:
    """The home page's grid: every result shown on the site with its value, draws included,
    each cell linking to its replay; rows in board order."""
    records = [
        {
            "ruleset": r["ruleset"],
            "status": "published" if r["status"] in ("proved", "certified") else r["status"],
            "value": r["value"],
            "plies": r["plies"],
            "entries": (r.get("certificate") or {}).get("entries"),
        }
        for r in summaries
        if not r.get("local")
    ]
    rows = grid_rows(records, pages={r["ruleset"]: r["page"] for r in summaries if r.get("page")})
    return sorted(rows, key=lambda row: board_order(row["row"]))


def proven_today_html(results, manifests: Path | None = None) -> str:
    """The "What is proven today" paragraphs (the README's, counted the same way) as HTML,
    over the published results the site shows (:class:`harness.site.artifacts.Result`) and
    the strong solves published without a certificate in ``manifests/solved/``; empty where
    the site shows no published result."""
    from markdown_it import MarkdownIt

    from harness.results.published import Published, read_solved, summary_markdown

    rows = [
        Published.from_record(r.manifest, str((r.manifest.get("signer") or {}).get("keyid", "")))
        for r in results
        if not r.local and r.status in ("proved", "certified")
    ]
    solved = read_solved(manifests) if manifests is not None else []
    return MarkdownIt("commonmark").render(summary_markdown(rows, solved)) if rows else ""


def results_grids(manifests: Path | None, published: set[str]) -> list[dict]:
    """Every signed results table under ``manifests/results/``: ``{name, created, edges, rows}``."""
    if manifests is None or not (Path(manifests) / "results").is_dir():
        return []
    from harness.manifest.manifest import ManifestError, read_signed
    from harness.manifest.published import publisher_keys

    keys = publisher_keys(Path(manifests) / "keys")
    grids = []
    for path in sorted((Path(manifests) / "results").glob("*.yaml")):
        doc = None
        for k in keys.values():
            try:
                doc, _ = read_signed(path, k.public)
                break
            except (ManifestError, OSError, ValueError):
                continue
        if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
            continue
        grids.append(
            {
                "name": path.stem,
                "created": str(doc.get("created", ""))[:10],
                "edges": list(EDGES),
                "rows": grid_rows([c for c in doc["cells"] if isinstance(c, dict)], published),
            }
        )
    return grids
