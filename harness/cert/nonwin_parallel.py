"""The non-win checker with its shards as Dask tasks (``check DIR --workers N``).

It accepts exactly what :mod:`harness.cert.nonwin_checker` accepts, with the same reference
engine and the same one-line reasons, in two phases whose memory is bounded by a shard and by
a bucket of keys, never by the whole set:

1. **play**: one task per shard reads it, checks its blake3 and every entry's form, and plays
   every action the entry answers for (:func:`~harness.cert.nonwin_checker.read_entries`,
   :func:`~harness.cert.nonwin_checker.outcomes`). It writes, per bucket of keys, the keys of
   its entries' canonical images ("have") and of every position they hand over ("need"),
   sorted, to a folder every worker sees.
2. **join**: one task per set and bucket merges the haves of every shard, reports two entries
   of one position, and looks up every need; the driver turns what is missing back into the
   entry, the action and the position it leads to.

A key is the canonical image itself, exact: its x board, its o board, and its bins and player
to move, as three 64-bit words compared as 24 big-endian bytes. No hash stands in for a
position.

>>> from harness.rules import Position, Ruleset
>>> rs = Ruleset.from_id("pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump")
>>> position_key(Position.from_text(rs, "..../.x../..../.... 7 8 o"))
(32, 0, 3601)
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from harness.cert.format import CertificateError
from harness.cert.nonwin_checker import NonWinChecker, NonWinReport, outcomes, read_entries
from harness.cert.nonwin_format import PLAYER_TEXT, read_nonwin_index
from harness.rules.position import Position
from harness.rules.ruleset import Ruleset
from harness.rules.symmetry import canonical

KEYS_PER_BUCKET = 250_000  # entries per set and bucket: the join's memory, about 40 MB
LINE_BITS = 24  # a position's origin: shard number << LINE_BITS | line
KEY = np.dtype("V24")


def position_key(pos: Position) -> tuple[int, int, int]:
    """The three words of a position's key: x board, o board, bins and player to move."""
    return pos.board[0], pos.board[1], (pos.bins[0] << 9) | (pos.bins[1] << 1) | pos.turn


def pack_keys(words: list[tuple[int, int, int]]) -> np.ndarray:
    """Keys as 24-byte items that sort and compare as the words, most significant first."""
    arr = np.array(words, dtype=np.uint64).reshape(-1, 3)
    return np.ascontiguousarray(arr.astype(">u8")).view(KEY).ravel()


def bucket_of(keys: np.ndarray, buckets: int) -> np.ndarray:
    """Which bucket each key goes to: a mix of its words, balanced for any board."""
    w = keys.view(">u8").reshape(-1, 3).astype(np.uint64)
    with np.errstate(over="ignore"):
        h = w[:, 0] * np.uint64(0x9E3779B97F4A7C15)
        h ^= w[:, 1] * np.uint64(0xC2B2AE3D27D4EB4F)
        h ^= w[:, 2] * np.uint64(0x165667B19E3779F9)
    return ((h >> np.uint64(32)) % np.uint64(buckets)).astype(np.int64)


def bucket_file(folder: Path, set_no: int, bucket: int, shard_no: int) -> Path:
    return folder / f"set{set_no}-bucket{bucket:05d}-shard{shard_no:06d}.npz"


class _Full(Exception):
    """A task collected as many problems as it may report."""


def play_shard(
    directory: str,
    ruleset: str,
    meta: dict,
    player: int,
    set_no: int,
    shard_no: int,
    buckets: int,
    folder: str,
    max_errors: int,
) -> dict:
    """Phase 1 for one shard (a task): its lines, turns and problems, and its key files."""
    rs = Ruleset.from_id(ruleset)
    read_errors: list[str] = []
    play_errors: list[str] = []

    def failing(into: list[str]) -> Callable[[str], None]:
        def fail(message: str) -> None:
            into.append(message)
            if len(into) >= max_errors:
                raise _Full

        return fail

    me = PLAYER_TEXT[player]
    have, have_at, need, need_at = [], [], [], []
    lines = turns = 0
    try:
        lines, entries = read_entries(rs, Path(directory), meta, player, failing(read_errors))
        fail = failing(play_errors)
        for item in entries:
            origin = (shard_no << LINE_BITS) | item.line
            have.append(position_key(canonical(rs, item.position)[0]))
            have_at.append(origin)
            for act, (head, via, out) in enumerate(outcomes(rs, player, item, fail)):
                turns += 1
                if out.result == me:
                    fail(f"{head}: {via} ends the game in a win for {me}")
                elif out.result is None:
                    need.append(position_key(canonical(rs, out.next)[0]))
                    need_at.append((origin << 12) | act)
    except _Full:
        pass
    _write_buckets(Path(folder), set_no, shard_no, buckets, have, have_at, need, need_at)
    return {"lines": lines, "turns": turns, "read": read_errors, "play": play_errors}


def _write_buckets(folder, set_no, shard_no, buckets, have, have_at, need, need_at) -> None:
    hk, nk = pack_keys(have), pack_keys(need)
    ha, na = np.array(have_at, dtype=np.int64), np.array(need_at, dtype=np.int64)
    hb, nb = bucket_of(hk, buckets), bucket_of(nk, buckets)
    for b in range(buckets):
        path = bucket_file(folder, set_no, b, shard_no)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            np.savez(
                fh, have=hk[hb == b], have_at=ha[hb == b], need=nk[nb == b], need_at=na[nb == b]
            )
        os.replace(tmp, path)  # a rerun task writes the same file whole


def join_bucket(
    folder: str, set_no: int, bucket: int, shards: int, root: bytes | None, max_errors: int
) -> dict:
    """Phase 2 for one set and bucket (a task): two entries of one position, needs no entry
    holds, and (``root``: the initial position's key, in its bucket) whether the root is in."""
    parts = []
    for shard_no in range(shards):
        with np.load(bucket_file(Path(folder), set_no, bucket, shard_no)) as f:
            parts.append({k: f[k] for k in ("have", "have_at", "need", "need_at")})
    have = np.concatenate([p["have"] for p in parts]) if parts else np.zeros(0, KEY)
    have_at = np.concatenate([p["have_at"] for p in parts]) if parts else np.zeros(0, np.int64)
    order = np.argsort(have, kind="stable")  # origins ascend within equal keys (files in order)
    have, have_at = have[order], have_at[order]
    same = np.flatnonzero(have[1:] == have[:-1]) + 1
    duplicates = [(int(have_at[i - 1]), int(have_at[i])) for i in same[:max_errors]]
    need = np.concatenate([p["need"] for p in parts]) if parts else np.zeros(0, KEY)
    need_at = np.concatenate([p["need_at"] for p in parts]) if parts else np.zeros(0, np.int64)
    missing_at = need_at[~_member(have, need)]
    root_in = None if root is None else bool(_member(have, np.frombuffer(root, KEY))[0])
    return {
        "duplicates": duplicates,
        "missing": np.sort(missing_at)[:max_errors].tolist(),
        "root_in": root_in,
        "haves": len(have),
        "needs": len(need),
    }


def _member(sorted_keys: np.ndarray, query: np.ndarray) -> np.ndarray:
    at = np.searchsorted(sorted_keys, query)
    found = at < len(sorted_keys)
    found[found] = sorted_keys[at[found]] == query[found]
    return found


class ParallelNonWinChecker(NonWinChecker):
    """One run of the two phases on a :class:`~harness.cluster.Session` (see
    :func:`check_nonwin_parallel`)."""

    def __init__(self, directory: Path, session, folder: Path, **options):
        super().__init__(directory, **options)
        self.session = session
        self.folder = folder
        # The entries of the shards a problem was found in, read once each to word it.
        self.read_back: dict[tuple[str, int], dict] = {}

    def _run(self) -> None:
        from harness.cluster.tasks import TaskQueue

        index = read_nonwin_index(self.dir)
        initial = self.open_index(index)
        rs = self.rs
        buckets = [max(1, -(-int(nws["entries"]) // KEYS_PER_BUCKET)) for nws in index["sets"]]
        queue = TaskQueue(self.session, self.session.bar(self.report.shards, "check: play"))
        shard_metas = [nws["shards"] for nws in index["sets"]]
        for set_no, nws in enumerate(index["sets"]):
            player = PLAYER_TEXT.index(nws["player"])
            for shard_no, meta in enumerate(nws["shards"]):
                queue.submit(
                    (set_no, shard_no),
                    play_shard,
                    str(self.dir.resolve()),
                    rs.id,
                    meta,
                    player,
                    set_no,
                    shard_no,
                    buckets[set_no],
                    str(self.folder),
                    self.max_errors,
                )
        counts = [0] * len(index["sets"])
        read: list[tuple[tuple[int, int], str]] = []
        play: list[tuple[tuple[int, int], str]] = []
        for done in queue:
            if not done.ok:
                raise CertificateError(f"a check task failed: {done.error!r}")
            set_no, shard_no = done.tag
            counts[set_no] += done.value["lines"]
            self.report.turns += done.value["turns"]
            read += [((set_no, shard_no), e) for e in done.value["read"]]
            play += [((set_no, shard_no), e) for e in done.value["play"]]
        # As in one process: a set is played only when every shard read well.
        for _, message in sorted(read, key=lambda f: f[0]):
            self.fail(message)
        self.close_index(index, counts)
        if self.report.errors:
            return
        for _, message in sorted(play, key=lambda f: f[0]):
            self.fail(message)
        root_key = pack_keys([position_key(canonical(rs, initial)[0])])
        total = sum(buckets)
        queue = TaskQueue(self.session, self.session.bar(total, "check: join"))
        for set_no, nws in enumerate(index["sets"]):
            root_bucket = int(bucket_of(root_key, buckets[set_no])[0])
            for b in range(buckets[set_no]):
                root = root_key.tobytes() if b == root_bucket else None
                queue.submit(
                    (set_no, b),
                    join_bucket,
                    str(self.folder),
                    set_no,
                    b,
                    len(nws["shards"]),
                    root,
                    self.max_errors,
                )
        joined = sorted(((d.tag, d) for d in queue), key=lambda t: t[0])
        for (set_no, _), done in joined:
            if not done.ok:
                raise CertificateError(f"a check task failed: {done.error!r}")
            player = PLAYER_TEXT.index(index["sets"][set_no]["player"])
            shards = shard_metas[set_no]
            for first, later in done.value["duplicates"]:
                self.fail(self._duplicate(shards, player, first, later))
            for at in done.value["missing"]:
                self.fail(self._outside(shards, player, at))
            if done.value["root_in"] is False:
                self.fail(
                    f"set {PLAYER_TEXT[player]}: the initial position {initial.text(rs)!r} "
                    "is not in the set"
                )

    def _entry(self, shards: list[dict], player: int, origin: int):
        meta = shards[origin >> LINE_BITS]
        line = origin & ((1 << LINE_BITS) - 1)
        key = (str(meta["file"]), player)
        if key not in self.read_back:
            _, entries = read_entries(self.rs, self.dir, meta, player, lambda _m: None)
            self.read_back[key] = {e.line: e for e in entries}
        return self.read_back[key][line]

    def _duplicate(self, shards, player: int, first: int, later: int) -> str:
        a, b = self._entry(shards, player, first), self._entry(shards, player, later)
        return (
            f"{b.where}: duplicate entry {b.entry.position!r}: the same position (up to "
            f"symmetry) is already at {a.where}"
        )

    def _outside(self, shards, player: int, at: int) -> str:
        item = self._entry(shards, player, at >> 12)
        head, via, out = list(outcomes(self.rs, player, item, lambda _m: None))[at & 0xFFF]
        return f"{head}: {via} leads outside the set, to {out.next.text(self.rs)!r}"


def check_nonwin_parallel(
    directory: str | Path,
    session,
    *,
    ruleset: str | None = None,
    max_errors: int = 20,
    folder: str | Path | None = None,
) -> NonWinReport:
    """Check the format-2 certificate in ``directory`` with tasks on ``session``; the key
    files go to a fresh folder under ``folder`` (default: the system's temporary folder,
    which a LocalCluster's workers share), removed at the end."""
    with tempfile.TemporaryDirectory(prefix="pop-check-", dir=folder) as tmp:
        return ParallelNonWinChecker(
            Path(directory), session, Path(tmp), ruleset=ruleset, max_errors=max_errors
        ).run()
