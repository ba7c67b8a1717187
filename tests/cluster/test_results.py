"""``results`` with one ``verify`` per cell as a Dask task: the same table as one by one."""

from __future__ import annotations

import json

from harness.cli import main
from harness.manifest.keys import generate

ONLY = ["3x3-c8-torus", "3x3-c8-reincarnation"]


def run(tmp_path, name: str, *cluster: str) -> list[dict]:
    keyfile = tmp_path / "keys" / "signing-key.pem"
    if not keyfile.exists():
        generate(keyfile)
    argv = [
        "results",
        "--matrix",
        "issue",
        "--budget",
        "60",
        "--work",
        str(tmp_path / name),
        "--manifests",
        str(tmp_path / "m"),
        "--key",
        str(keyfile),
        *cluster,
    ]
    for o in ONLY:
        argv += ["--only", o]
    assert main(argv) == 0
    table = json.loads(next((tmp_path / name).glob("issue-*.json")).read_text())
    return table["cells"]


def test_cells_on_two_workers_match_cells_one_by_one(tmp_path) -> None:
    inline = run(tmp_path, "inline")
    spread = run(tmp_path, "cluster", "--workers", "2")
    keep = ("ruleset", "status", "value", "plies", "entries", "hash")
    assert len(inline) == 2
    assert [{k: c[k] for k in keep} for c in spread] == [{k: c[k] for k in keep} for c in inline]
    assert {c["value"] for c in inline} >= {"x"}
