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
from harness.results.matrix import EDGES


def grid_rows(records: list[dict], published: set[str] | frozenset = frozenset()) -> list[dict]:
    """Rows ``{row, cells: [cell or None per edge]}`` in the table's order."""
    rows: dict[str, dict[str, dict]] = {}
    for r in records:
        parts = str(r.get("ruleset", "")).split("-")
        if len(parts) < 4 or parts[3] not in EDGES:
            continue
        board, checkers, edge = parts[1:4]
        status = r.get("status")
        value = r.get("value") if status in ("published", "certified") else None
        rows.setdefault(f"{board} {checkers}", {})[edge] = {
            "ruleset": r["ruleset"],
            "status": status,
            "value": value,
            "css": f"value-{value}" if value else f"value-{status}",
            "text": cell_text(r),
            "plies": r.get("plies"),
            "entries": r.get("entries"),
            "href": f"results/{r['ruleset']}/manifest.yaml" if r["ruleset"] in published else None,
            "lean": r.get("lean"),
        }
    return [{"row": row, "cells": [cells.get(e) for e in EDGES]} for row, cells in rows.items()]


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
