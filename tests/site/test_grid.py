"""The Results page's grid, from a signed results table; an unsigned or foreign table is not
shown."""

from __future__ import annotations

from harness.manifest.keys import generate
from harness.manifest.manifest import write_manifest
from harness.site.build import Sources, build_site
from harness.site.grid import grid_rows, results_grids

CELLS = [
    {
        "ruleset": "pop1-4x4-c8-reincarnation-continue-binempty-king-nozero-nojump",
        "status": "certified",
        "value": "draw",
        "plies": None,
        "entries": 1711,
    },
    {
        "ruleset": "pop1-4x4-c8-ringout-continue-binempty-king-nozero-nojump",
        "status": "certified",
        "value": "o",
        "plies": 14,
        "entries": 3608,
    },
    {
        "ruleset": "pop1-5x5-c8-reincarnation-continue-binempty-king-nozero-nojump",
        "status": "open",
        "value": None,
        "budget": 300.0,
        "reached": {"x": 15, "o": 16},
    },
]


def _publish(tmp_path, key):
    manifests = tmp_path / "manifests"
    (manifests / "keys").mkdir(parents=True)
    (manifests / "keys" / f"{key.keyid[:16]}.pub").write_bytes(
        (tmp_path / "keys" / "signing-key.pem.pub").read_bytes()
    )
    write_manifest(manifests / "results" / "issue.yaml", {"kind": "results", "cells": CELLS}, key)
    return manifests


def test_grid_rows_place_cells_by_board_and_edge():
    rows = grid_rows(CELLS)
    assert [r["row"] for r in rows] == ["4x4 c8", "5x5 c8"]
    first = rows[0]["cells"]
    assert first[0]["css"] == "value-draw" and first[0]["text"] == "draw (1,711)"
    assert first[1]["css"] == "value-o" and first[1]["text"] == "o in 14 (3,608)"
    assert first[2] is None
    assert rows[1]["cells"][0]["css"] == "value-open"
    assert rows[1]["cells"][0]["text"] == "open (300 s; no o win ≤ 16, no x win ≤ 15)"


def test_the_results_page_shows_a_signed_grid(tmp_path):
    key = generate(tmp_path / "keys" / "signing-key.pem")
    manifests = _publish(tmp_path, key)
    assert [g["name"] for g in results_grids(manifests, set())] == ["issue"]
    build_site(tmp_path / "site", sources=Sources(manifests_dir=manifests, public_key=key.public))
    page = (tmp_path / "site" / "results.html").read_text()
    assert 'class="results-grid" data-grid="issue"' in page
    assert 'class="value-draw"' in page and "o in 14 (3,608)" in page


def test_a_table_signed_by_a_stranger_is_not_shown(tmp_path):
    key = generate(tmp_path / "keys" / "signing-key.pem")
    manifests = _publish(tmp_path, key)
    stranger = generate(tmp_path / "other" / "k.pem")
    write_manifest(
        manifests / "results" / "issue.yaml", {"kind": "results", "cells": CELLS}, stranger
    )
    assert results_grids(manifests, set()) == []


def test_the_home_page_summary_counts_strong_solves_without_a_certificate(tmp_path):
    from types import SimpleNamespace

    from harness.site.grid import proven_today_html

    key = generate(tmp_path / "keys" / "signing-key.pem")
    manifests = _publish(tmp_path, key)
    certified = SimpleNamespace(
        local=False,
        status="certified",
        manifest={
            "kind": "verify",
            "ruleset": CELLS[0]["ruleset"],
            "result": {"value": "draw", "plies": None},
            "certificate": {"entries": 1711, "python_check": {"status": "passed"}},
            "lean": {"status": "not run"},
            "verdict": "INCOMPLETE",
        },
    )
    assert "strongly solved" not in proven_today_html([certified], manifests)
    solved = "pop1-5x5-c7-reincarnation-continue-binempty-king-nozero-nojump"
    doc = {
        "kind": "solve",
        "ruleset": solved,
        "result": {"value": "draw", "plies": None, "classes": 10, "positions": 99},
        "cost": {"wall_seconds": 7200.0},
        "files": {},
    }
    write_manifest(manifests / "solved" / f"{solved}.yaml", doc, key)
    html = proven_today_html([certified], manifests)
    assert "1 result is published" in html
    assert "1 more value is strongly solved but not yet certified" in html
    assert "5x5 c7 reincarnation (draw)" in html
