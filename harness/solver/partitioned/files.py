"""The partitioned solver's work folder: which partition owns a class, and the files a step
writes, each named in a record that carries the run's token and every file's content hash.

A work folder holds::

    run.json                  the ruleset, the partition count and the run's token
    state.json                the last step every partition finished (the driver's save)
    solved.json               the finished solve's report, with its cost (``solve --json``)
    enum-0007/part-003/       what partition 3 wrote at enumeration step 7
        keys.npy meta.npy count.npy      its columns after the step
        out-keys.npy out-pay.npy         what it found for every owner, grouped by owner
        done.json                        token, step, partition, files: [bytes, blake3]
    ply-0012/part-003/        the same for retrograde step 12 (value.npy, count.npy, open.npy,
                              out-*; edges.npy after a sweep)
    ans-0012/part-003/        the values partition 3 answers after a sweep at step 12
    round-120003/part-003/    round 3 of the un-playing of step 12, where that step kept
                              the rows it decided (todo.npy) for rounds: what it sent
    apply-120003/part-003/    partition 3's values and counters after applying round 3,
                              and the rows decided at the next ply so far (next.npy)
    final-0000/part-003/      its classes' results, plies, colourings and orbit sizes

Paths in the records are relative to the folder, so a folder can be moved or copied to
another machine and resumed there. A file is read only through :func:`load`, which checks
its size and hash against the record of the step that wrote it, and what a partition sent
to another only through :func:`inbox`, which checks the slice's own hash (a receiver reads
its slice alone): a damaged, foreign or missing file is a :class:`PartitionError`, never a
wrong value.

>>> keys = np.array([1, 2, 3, 4, 5, 6, 7, 8], dtype=np.uint64)
>>> owner_of(keys, 3).tolist()
[0, 2, 0, 2, 2, 2, 2, 2]
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import time
import uuid
from pathlib import Path

import blake3
import numpy as np

from harness.atomic import write_atomic
from harness.bounded import MAX_DOCUMENT, loads_json, read_text
from harness.solver.memory import peak_resident_bytes
from harness.solver.partitioned.keys import mixed

FORMAT = 2  # the layout above, content hashes by blake3 (1: by SHA-256)

# Fibonacci hashing (as the compact solver's key filter): the owner is taken from the high
# half of key * MULT (keys.mixed for two words), which spreads neighbouring keys (those
# that differ in a few low board bits) over every partition.
MULT = np.uint64(0x9E3779B97F4A7C15)
# What a step leaves free on the work folder's disk: a task that would go below it stops the
# solve (saved) instead of filling the disk other programs need.
DISK_RESERVE = 8 << 30

# The kinds of step (module doc).
ENUM, PLY, ANS, ROUND, APPLY, FINAL = "enum", "ply", "ans", "round", "apply", "final"

RUN = "run.json"
STATE = "state.json"
REPORT = "solved.json"  # the finished solve's report (`solve --json`), written at its end
DONE = "done.json"


class PartitionError(ValueError):
    """A partitioned solve cannot go on: a work folder, step or file is unusable."""


def read_report(path: Path) -> dict:
    """A finished solve's report (the :data:`REPORT` file it leaves in its work folder, or
    its ``solve --json`` output saved by hand) as a mapping; a one-line
    :class:`PartitionError` naming the file when it is not one."""
    try:
        doc = loads_json(read_text(Path(path), MAX_DOCUMENT, "solve report"))
    except (OSError, ValueError) as exc:
        raise PartitionError(f"{path}: not a solve report ({exc})") from None
    if not isinstance(doc, dict):
        raise PartitionError(f"{path}: not a solve report (not a JSON object)")
    return doc


def owner_of(keys: np.ndarray, partitions: int) -> np.ndarray:
    """The partition that owns each class key: a stable function of the key alone."""
    if partitions == 1:
        return np.zeros(len(keys), dtype=np.int64)
    h = mixed(keys, MULT) >> np.uint64(32)
    return (h % np.uint64(partitions)).astype(np.int64)


def summary_of(start: float, cpu: float, **fields) -> dict:
    """A step's summary: its ``fields``, with the seconds and CPU seconds since ``start`` and
    ``cpu`` and the process's peak memory."""
    return {
        **fields,
        "seconds": round(time.perf_counter() - start, 3),
        "cpu": round(time.process_time() - cpu, 3),
        "peak_rss": peak_resident_bytes(),
    }


def brief(summary: dict) -> dict:
    """A step's summary without its slices (the driver keeps O(1) a partition)."""
    return {k: v for k, v in summary.items() if k not in ("offsets", "digests")}


def step_dir(phase: str, step: int) -> str:
    """The folder name of a step: ``enum-0007``, ``ply-0012``."""
    return f"{phase}-{step:04d}"


def part_dir(phase: str, step: int, part: int) -> str:
    return f"{step_dir(phase, step)}/part-{part:03d}"


def file_hash(path: Path) -> str:
    """The blake3 hex digest of a file's bytes (about five times as fast as SHA-256 here,
    and a solve hashes every column it reads and writes)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, blake3.blake3).hexdigest()


def save_hashed(fh, arr: np.ndarray) -> str:
    """Write ``arr`` to the open file ``fh`` as ``np.save`` does (a format 1.0 ``.npy``) and
    return the blake3 digest of the bytes written, hashing from the array's own memory: no
    copy, and no reading back.

    >>> import io
    >>> buf, a = io.BytesIO(), np.arange(5, dtype=np.uint64)
    >>> digest = save_hashed(buf, a)
    >>> ref = io.BytesIO(); np.save(ref, a)
    >>> buf.getvalue() == ref.getvalue(), digest == blake3.blake3(ref.getvalue()).hexdigest()
    (True, True)
    """
    arr = np.ascontiguousarray(arr)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(arr))
    digest = blake3.blake3(header.getvalue())
    fh.write(header.getvalue())
    if arr.size:
        data = memoryview(arr.reshape(-1)).cast("B")
        digest.update(data)
        fh.write(data)
    return digest.hexdigest()


def new_token() -> str:
    return uuid.uuid4().hex


class Run:
    """A work folder as one task sees it: the folder, the run's token, the partition count.

    Small and picklable: the driver hands one to every task.
    """

    def __init__(self, folder: Path, token: str, partitions: int, ruleset: str):
        self.folder = Path(folder)
        self.token = token
        self.partitions = partitions
        self.ruleset = ruleset

    def __repr__(self) -> str:
        return f"Run({str(self.folder)!r}, {self.partitions} partitions)"

    def error(self, where: str, why: str) -> PartitionError:
        return PartitionError(f"work folder {str(self.folder)!r}: {where}: {why}")

    # --- records ----------------------------------------------------------------------

    def record(self, phase: str, step: int, part: int) -> dict:
        """The ``done.json`` of a partition's step, checked to be this run's and this step's
        (a :class:`PartitionError` otherwise)."""
        rel = f"{part_dir(phase, step, part)}/{DONE}"
        path = self.folder / rel
        if not path.is_file():
            raise self.error(rel, "missing (the step that writes it did not finish)")
        try:
            rec = loads_json(read_text(path, MAX_DOCUMENT, "step record"))
        except (OSError, ValueError):
            raise self.error(rel, "unreadable") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("files"), dict):
            raise self.error(rel, "not a step record")
        if rec.get("token") != self.token:
            raise self.error(rel, "written by another run (its token differs from run.json's)")
        if (rec.get("phase"), rec.get("step"), rec.get("part")) != (phase, step, part):
            raise self.error(rel, "records another step or partition")
        return rec

    def finished(self, phase: str, step: int, part: int) -> dict | None:
        """The record of a step a partition finished, or None (missing, or not this run's)."""
        try:
            return self.record(phase, step, part)
        except PartitionError:
            return None

    def load(self, rec: dict, name: str) -> np.ndarray:
        """Array ``name`` of a step's record, after checking its size and content hash."""
        return self._checked(rec, name, None)

    def map(self, rec: dict, name: str) -> np.ndarray:
        """Array ``name`` of a step's record memory-mapped read-only, after checking its size
        and content hash once (the file is read through, not kept in memory)."""
        return self._checked(rec, name, "r")

    def _checked(self, rec: dict, name: str, mmap_mode: str | None) -> np.ndarray:
        where = f"{part_dir(rec['phase'], rec['step'], rec['part'])}/{name}.npy"
        entry = rec["files"].get(name)
        if not isinstance(entry, list) or len(entry) != 2:
            raise self.error(where, "not named in its step's record")
        path = self.folder / where
        if path.is_symlink():
            raise self.error(where, "a symbolic link (a step's files are never links)")
        if not path.is_file():
            raise self.error(where, "missing")
        size, digest = entry
        if path.stat().st_size != size or file_hash(path) != digest:
            raise self.error(where, "damaged (its size or content hash differs from its record)")
        try:
            return np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise self.error(where, f"not a numpy array ({exc})") from None

    # --- writing ------------------------------------------------------------------------

    def write(
        self,
        phase: str,
        step: int,
        part: int,
        arrays: dict,
        summary: dict,
        same_as: dict | None = None,
    ) -> dict:
        """Write a partition's step: its arrays, then its record, in a temporary folder
        renamed into place. A rerun of the same step (a task run again after its worker
        was lost) finds the first one's folder and keeps it: the step is a pure function of
        its inputs. Returns the record.

        ``same_as`` names arrays that are unchanged since an earlier step, each with that
        step's record: such a file is hard-linked from the earlier step's folder (the same
        bytes and hash, nothing written), or written where the disk cannot link."""
        final = self.folder / part_dir(phase, step, part)
        if (done := self.finished(phase, step, part)) is not None:
            return done
        final.parent.mkdir(parents=True, exist_ok=True)
        need = sum(int(np.asarray(a).nbytes) for a in arrays.values())
        free = shutil.disk_usage(final.parent).free
        if free - need < DISK_RESERVE:
            raise self.error(
                part_dir(phase, step, part),
                f"{need / 2**30:.1f} GiB to write with {free / 2**30:.1f} GiB free; a step "
                f"leaves {DISK_RESERVE / 2**30:.0f} GiB free. Free disk space (or move the "
                "folder to a larger disk, docs/cluster.md) and run again: the solve goes on "
                "from its last finished step",
            )
        tmp = final.parent / f".{final.name}.{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        try:
            files, linked = {}, 0
            for name, arr in arrays.items():
                path = tmp / f"{name}.npy"
                if same_as and name in same_as and self._link(same_as[name], name, path):
                    files[name] = list(same_as[name]["files"][name])
                    linked += files[name][0]
                    continue
                with open(path, "wb") as fh:
                    digest = save_hashed(fh, arr)
                    fh.flush()
                    os.fsync(fh.fileno())
                files[name] = [path.stat().st_size, digest]
            summary = {
                **summary,
                "out_bytes": sum(v[0] for k, v in files.items() if k.startswith("out-")),
                "column_bytes": sum(v[0] for k, v in files.items() if not k.startswith("out-"))
                - linked,
                "linked_bytes": linked,
            }
            rec = {
                "token": self.token,
                "phase": phase,
                "step": step,
                "part": part,
                "files": files,
                "summary": summary,
            }
            write_atomic(tmp / DONE, json.dumps(rec, sort_keys=True).encode())
            try:
                os.replace(tmp, final)
            except OSError:
                # A folder is there: the same step finished by a twin of this task (keep
                # it), or a foreign or unfinished one (replace it).
                if (done := self.finished(phase, step, part)) is not None:
                    shutil.rmtree(tmp, ignore_errors=True)
                    return done
                shutil.rmtree(final)
                os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return rec

    def _link(self, rec: dict, name: str, path: Path) -> bool:
        """Hard-link array ``name`` of an earlier step's record to ``path``; False where the
        disk cannot (the caller writes it instead)."""
        source = self.folder / part_dir(rec["phase"], rec["step"], rec["part"]) / f"{name}.npy"
        try:
            os.link(source, path)
        except OSError:
            return False
        return True

    def drop(self, phase: str, step: int, part: int, names) -> None:
        """Remove columns of a partition's step once its next step is written: only that
        partition's next step reads them, and a finished step is never run again. (What
        it sent stays until the driver has saved the next step: every partition reads it.)
        A disk holds then about one step's columns, not two."""
        for name in names:
            (self.folder / part_dir(phase, step, part) / f"{name}.npy").unlink(missing_ok=True)

    def remove_step(self, phase: str, step: int) -> None:
        shutil.rmtree(self.folder / step_dir(phase, step), ignore_errors=True)


def group_by_owner(keys: np.ndarray, payload: np.ndarray, partitions: int):
    """``keys`` (sorted) and their payload reordered by owner, keys sorted within an owner:
    returns them with each owner's offsets (``partitions + 1``) and each owner's slice digest
    (:func:`slice_digest`), what a step's record names for its receivers."""
    owner = owner_of(keys, partitions)
    if partitions > 1:
        order = np.argsort(owner, kind="stable")
        keys, payload, owner = keys[order], payload[order], owner[order]
        del order
    offsets = np.searchsorted(owner, np.arange(partitions + 1)).tolist()
    digests = [
        slice_digest(keys[lo:hi], payload[lo:hi])
        for lo, hi in zip(offsets[:-1], offsets[1:], strict=True)
    ]
    return keys, payload, offsets, digests


def slice_digest(keys: np.ndarray, payload: np.ndarray) -> str:
    h = blake3.blake3(np.ascontiguousarray(keys).reshape(-1).view(np.uint8))
    h.update(np.ascontiguousarray(payload).reshape(-1).view(np.uint8))
    return h.hexdigest()


def inbox(run: Run, phase: str, step: int, part: int) -> tuple[list, list]:
    """What every partition's ``step`` sent to ``part``: lists of keys and payloads, one
    pair per sender, each checked against the digest its sender recorded for it."""
    keys, payloads = [], []
    for q in range(run.partitions):
        rec = run.record(phase, step, q)
        try:
            offsets = rec["summary"]["offsets"]
            digest = rec["summary"]["digests"][part]
            lo, hi = int(offsets[part]), int(offsets[part + 1])
        except (KeyError, IndexError, TypeError, ValueError):
            raise run.error(part_dir(phase, step, q), "its record names no slices") from None
        k = _slice(run, rec, "out-keys", lo, hi)
        p = _slice(run, rec, "out-pay", lo, hi)
        if slice_digest(k, p) != digest:
            where = f"{part_dir(phase, step, q)}/out-keys.npy, out-pay.npy"
            raise run.error(
                where, f"damaged (the slice for partition {part} differs from its hash)"
            )
        keys.append(k)
        payloads.append(p)
    return keys, payloads


def _slice(run: Run, rec: dict, name: str, lo: int, hi: int) -> np.ndarray:
    where = f"{part_dir(rec['phase'], rec['step'], rec['part'])}/{name}.npy"
    path = run.folder / where
    if path.is_symlink():
        raise run.error(where, "a symbolic link (a step's files are never links)")
    if name not in rec["files"] or not path.is_file():
        raise run.error(where, "missing")
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
        if not 0 <= lo <= hi <= len(arr):
            raise ValueError(f"rows {lo}:{hi} of {len(arr)}")
        return np.array(arr[lo:hi])
    except (OSError, ValueError) as exc:
        raise run.error(where, f"unreadable ({exc})") from None
