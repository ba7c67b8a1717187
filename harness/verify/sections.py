"""The parts of a verify manifest made from what the stages wrote: the certificate's value
and shards, the Lean section (expected and observed axioms, GUARD_HITS), the replay section,
the files a manifest vouches for, and the step table ``verify`` prints.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.manifest.fsutil import sha256_file

VOUCHED_DIRS = ("certificate", "corpus", "lean", "formal")


@dataclass
class Step:
    name: str
    status: str  # passed | failed | not run
    seconds: float | None = None
    detail: str = ""

    def row(self) -> dict:
        return {
            "step": self.name,
            "status": self.status,
            "seconds": self.seconds,
            "detail": self.detail,
        }


def copy_lean_project(src: Path, dst: Path) -> list[str]:
    """Copy the Lean sources of ``src`` to ``dst``: no build output (``.lake``), no hidden
    files, no previous ``Generated/``; refuses symlinks (they could point anywhere)."""
    copied = []
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if rel.parts[0] in (".lake", "build", "Generated") or any(
            p.startswith(".") for p in rel.parts
        ):
            continue
        if path.is_symlink():
            raise HarnessError(f"{path}: a symlink in the Lean project; refusing to copy it")
        if path.is_file():
            target = dst / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            copied.append(rel.as_posix())
    if not copied:
        raise HarnessError(f"{src}: no Lean project there")
    return copied


def vouched_files(work: Path) -> dict[str, str]:
    """SHA-256 of every file the manifest vouches for, by path relative to ``work``."""
    files = {}
    for top in VOUCHED_DIRS:
        base = work / top
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(work)
            if ".lake" in rel.parts or any(p.startswith(".") for p in rel.parts):
                continue
            if path.is_file() and not path.is_symlink():
                files[rel.as_posix()] = sha256_file(path)
    return dict(sorted(files.items()))


def axioms_line(name: str, axioms: list[str]) -> str:
    """How ``#print axioms`` answers (the form the seeds' expected output shows).

    >>> axioms_line("t", ["propext"]), axioms_line("u", [])
    ("'t' depends on axioms: [propext]", "'u' does not depend on any axioms")
    """
    if not axioms:
        return f"'{name}' does not depend on any axioms"
    return f"'{name}' depends on axioms: [{', '.join(axioms)}]"


def lean_command(toolchain: str, memory_gib: float) -> str:
    return f"lean +{toolchain} -M{int(memory_gib * 1024)} Check.lean"


def certificate_shards(index: dict) -> list[dict]:
    """Every shard a certificate index lists: format 1's, or the sets' of format 2."""
    if index.get("format") == 2:
        return [
            sh
            for n in index.get("sets") or []
            if isinstance(n, dict)
            for sh in n.get("shards") or []
            if isinstance(sh, dict)
        ]
    return [sh for sh in index.get("shards") or [] if isinstance(sh, dict)]


def certified_value(index: dict) -> str | None:
    """The value a certificate index claims: the winner (format 1), ``draw`` for both non-win
    sets (format 2), else what the sets say (``not x`` / ``not o``).

    >>> certified_value({"format": 1, "winner": "o"})
    'o'
    >>> certified_value({"format": 2, "value": "draw"})
    'draw'

    """
    if index.get("format") == 2:
        return index.get("value")
    return index.get("winner")


def expected_guard(render: dict) -> dict | None:
    line = (render.get("corpus") or {}).get("guard_hits")
    if not line:
        return None
    body = line.split(None, 1)[1] if " " in line else ""
    return {k: int(v) for k, _, v in (i.partition("=") for i in body.split(",") if i)}


def observed_axioms(lean: dict, name: str | None) -> list[str] | str:
    result = lean.get("result") or {}
    if lean.get("status") != "passed" or name is None:
        return "not run"
    return list((result.get("axioms") or {}).get(name, []))


def lean_section(lean: dict, render: dict) -> dict:
    """Per module: status, seconds, peak MiB, axioms; the toolchain without host paths."""
    result = lean.get("result")
    if result is None:
        modules = [
            {
                "module": m["module"],
                "status": "not run",
                "seconds": None,
                "peak_mib": None,
                "axioms_pinned": m.get("axioms", {}),
            }
            for m in render.get("modules", [])
        ]
        return {
            "status": lean.get("status", "not run"),
            "reason": lean.get("reason"),
            "toolchain": "not run",
            "modules": modules,
            "guard_hits": None,
        }
    tc = result.get("toolchain") or {}
    modules = [
        {
            "module": name,
            "status": rec.get("status"),
            "cached": rec.get("cached"),
            "seconds": rec.get("seconds"),
            "peak_mib": rec.get("peak_mib"),
            "axioms": rec.get("axioms"),
        }
        for name, rec in (result.get("shards") or {}).items()
    ]
    return {
        "status": lean.get("status"),
        "toolchain": {
            k: tc.get(k) for k in ("pinned", "lean_version", "matches_pin", "lean", "lake", "elan")
        },
        "limits": result.get("limits"),
        "model_hash": result.get("model_hash"),
        "modules": modules,
        "guard_hits": result.get("guard_hits"),
        "summary": result.get("summary"),
        "replay": replay_section(result.get("replay")),
    }


def replay_section(replay: dict | None) -> dict:
    """The olean replay (``leanchecker``) of the built modules: tool, status, per module."""
    if not replay:
        return {"status": "not run", "tool": None, "modules": {}}
    return {
        "status": replay.get("status"),
        "tool": replay.get("tool"),
        "modules": {
            name: {k: rec.get(k) for k in ("status", "seconds", "peak_mib")}
            for name, rec in (replay.get("modules") or {}).items()
        },
    }


def summary_table(steps: list[Step], details: bool = True) -> str:
    """The end-of-run table: one row per step (its detail too, unless ``details`` is False).

    >>> print(summary_table([Step("solve", "passed", 1.25, "x wins")]))
    step      status    seconds  detail
    solve     passed        1.2  x wins
    >>> print(summary_table([Step("solve", "passed", 1.25, "x wins")], details=False))
    step      status    seconds
    solve     passed        1.2
    """
    lines = [f"{'step':<9} {'status':<8} {'seconds':>8}" + ("  detail" if details else "")]
    for s in steps:
        secs = "" if s.seconds is None else f"{s.seconds:.1f}"
        row = f"{s.name:<9} {s.status:<8} {secs:>8}"
        lines.append(f"{row}  {s.detail}" if details else row)
    return "\n".join(lines)
