"""The compact solver's work folder: its run marker, the enumeration's checkpoint and the
retrograde pass's saves at ply ends (:class:`PlyCheckpoint`), so a killed solve resumes from
its last save and a folder without a finished phase's marker is never read as finished."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

from harness.atomic import write_atomic
from harness.bounded import MAX_DOCUMENT, loads_json, read_text
from harness.rules.ruleset import Ruleset
from harness.solver.compact.constants import (
    CHECKPOINT_SECONDS,
    FORMAT,
    MARKERS,
    RETRO_COLUMNS,
    WIDER,
    CompactError,
)


def open_workdir(workdir: Path | None, rs: Ruleset, fresh: bool) -> tuple[Path | None, dict]:
    """Prepare the work folder; returns it and the enumeration checkpoint found (or {})."""
    if workdir is None:
        return None, {}
    workdir = Path(workdir)
    try:
        workdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CompactError(f"work folder {str(workdir)!r}: {exc.strerror or exc}") from None
    if not os.access(workdir, os.W_OK | os.X_OK):
        raise CompactError(f"work folder {str(workdir)!r} is not writable")
    meta_path = workdir / "run.json"
    if fresh:
        for p in workdir.iterdir():
            if p.suffix in (".bin", ".enum") or ".ply" in p.name or p.name in MARKERS:
                p.unlink()
    if meta_path.exists():
        try:
            meta = loads_json(read_text(meta_path, MAX_DOCUMENT, "run marker"))
            if not isinstance(meta, dict):
                raise ValueError("not a mapping")
        except (OSError, ValueError):
            raise CompactError(
                f"work folder {str(workdir)!r}: run.json is unreadable; pass --fresh to start over"
            ) from None
        if meta.get("ruleset") == rs.id and meta.get("format") != FORMAT:
            raise CompactError(
                f"work folder {str(workdir)!r} holds a solve in an older format "
                f"({meta.get('format')}, this version writes {FORMAT}); pass --fresh"
            )
        if meta.get("ruleset") != rs.id:
            raise CompactError(
                f"work folder {str(workdir)!r} holds a solve of {meta.get('ruleset')}, "
                f"not {rs.id}; use another folder or pass --fresh"
            )
    else:
        leftovers = [p.name for p in workdir.iterdir() if p.name.endswith(".bin")]
        if leftovers:
            raise CompactError(
                f"work folder {str(workdir)!r} holds files of an unknown run "
                f"({', '.join(sorted(leftovers)[:3])}); use another folder or pass --fresh"
            )
        write_atomic(meta_path, json.dumps({"ruleset": rs.id, "format": FORMAT}).encode())
    # A finished solve is recomputed from its enumeration (the marker says the columns
    # are whole), never trusted half-way.
    (workdir / "complete.json").unlink(missing_ok=True)
    enum_path = workdir / "enumerated.json"
    if enum_path.exists():
        try:
            enumerated = loads_json(read_text(enum_path, MAX_DOCUMENT, "enumeration marker"))
            if not isinstance(enumerated, dict):
                raise ValueError("not a mapping")
            return workdir, enumerated
        except (OSError, ValueError):
            enum_path.unlink(missing_ok=True)
    return workdir, {}


def count_dtype(folder: Path, mark: dict) -> np.dtype:
    """The counter column's type in a checkpoint's marker (``uint16`` in folders written
    before the column started a byte wide)."""
    name = mark.get("count", "uint16")
    if name not in ("uint8", *WIDER.values()):  # the types Column.widen goes through
        raise CompactError(
            f"work folder {str(folder)!r}: the checkpoint names a counter type {name!r}; "
            "pass --fresh"
        )
    return np.dtype(name)


class PlyCheckpoint:
    """Saves the retrograde pass of an out-of-core solve at ply ends, at most every
    :data:`CHECKPOINT_SECONDS`, so a killed run goes on from its last save.

    A save copies the columns the pass rewrites to ``<column>.ply<k>`` files (each written
    under a temporary name, synced, then renamed), then names ``k`` in ``retrograde.json``
    (written atomically), then removes the older copies. The marker only ever names a
    complete set, so a run killed at any moment resumes from a consistent ply.
    """

    def __init__(self, folder: Path, classes: int, columns: dict, tick=None):
        self.folder, self.classes, self.columns, self.tick = folder, classes, columns, tick
        self.last = time.monotonic()

    @staticmethod
    def mark(folder: Path) -> dict:
        """The marker of the last save ({} when there is none or it is unreadable)."""
        try:
            mark = loads_json(read_text(folder / "retrograde.json", MAX_DOCUMENT, "save marker"))
        except (OSError, ValueError):
            return {}
        return mark if isinstance(mark, dict) else {}

    @staticmethod
    def found(folder: Path, classes: int) -> int | None:
        """The ply of a usable save in ``folder`` (None when there is none)."""
        mark = PlyCheckpoint.mark(folder)
        try:
            ply = int(mark["ply"])
        except (ValueError, KeyError, TypeError):
            return None
        if int(mark.get("classes", -1)) != classes:
            return None
        if not all((folder / f"{name}.ply{ply}").exists() for name in RETRO_COLUMNS):
            return None
        return ply

    def __call__(self, ply: int) -> None:
        if time.monotonic() - self.last < CHECKPOINT_SECONDS:
            return
        for name in RETRO_COLUMNS:
            self.columns[name].flush()
            src = self.folder / f"{name}.bin"
            tmp = self.folder / f"{name}.ply{ply}.tmp"
            shutil.copyfile(src, tmp)
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, self.folder / f"{name}.ply{ply}")
        write_atomic(
            self.folder / "retrograde.json",
            json.dumps(
                {"ply": ply, "classes": self.classes, "count": self.columns["count"].dtype.name}
            ).encode(),
        )
        for old in self.folder.glob("*.ply*"):
            if not old.name.endswith(f".ply{ply}"):
                old.unlink(missing_ok=True)
        self.last = time.monotonic()
        if self.tick is not None:
            self.tick(f"retrograde: saved at ply {ply}")

    @staticmethod
    def discard(folder: Path) -> None:
        (folder / "retrograde.json").unlink(missing_ok=True)
        for old in folder.glob("*.ply*"):
            old.unlink(missing_ok=True)
