"""The independent checker of non-win sets (format 2), on the reference engine only.

For every set (player ``p`` cannot force a win) it accepts only when

* ``index.yaml`` is well-formed, the ruleset parses (and equals ``--ruleset`` when given),
  ``root`` is the initial position, every shard's blake3, every set hash and the certificate
  hash match, the counts and placement ranks agree with the shards;
* every line is ``{"position", "action"}`` in docs/rules.md notation; ``action`` is null exactly
  where ``p`` is to move; no two entries are images of one position;
* where ``p`` is to move, ``p`` has a legal action, and every legal action ends the game in a
  draw or a loss for ``p`` or hands over a position of the set (looked up by canonical image);
* where the defender is to move, the named action is legal and does the same;
* the initial position is in the set.

Then no play from a position of the set, with the defender following the set's actions, can
end in a win for ``p``; values are judged from positions alone (docs/rules.md, *Values*), so an
endless play is not a win, and ``¬ ForceWin p`` holds for every position of the set
(by induction on ``ForceWin``: docs/lean.md).

>>> from pathlib import Path
>>> report = check_nonwin(Path("/nonexistent"))
>>> report.ok, report.errors[0]
(False, '/nonexistent/index.yaml: no index.yaml (not a certificate directory?)')
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.cert.checker import CheckRun
from harness.cert.format import (
    CertificateError,
    certificate_hash,
    digest,
    read_shard_file,
    shard_lines,
)
from harness.cert.nonwin_format import (
    PLAYER_TEXT,
    NonWinEntry,
    parse_nonwin_entry,
    read_nonwin_index,
)
from harness.rules.engine import Outcome, apply_action, legal_actions, play_unchecked
from harness.rules.errors import IllegalActionError
from harness.rules.position import Action, Position
from harness.rules.ruleset import Ruleset
from harness.rules.symmetry import canonical


@dataclass
class NonWinReport:
    """What the checker found. ``ok`` only for a complete, accepted certificate."""

    directory: str
    ok: bool = False
    errors: list[str] = field(default_factory=list)
    ruleset: str | None = None
    value: str | None = None  # draw | not x | not o
    players: list[str] = field(default_factory=list)
    entries: int = 0
    shards: int = 0
    hash: str | None = None
    seconds: float = 0.0
    turns: int = 0
    truncated: bool = False


@dataclass
class LoadedEntry:
    """One parsed entry of a shard, and where it is (``SHARD line N``)."""

    position: Position
    action: Action | None
    where: str
    entry: NonWinEntry
    line: int = 0


class NonWinChecker(CheckRun):
    """One run over a format-2 directory (see :func:`check_nonwin`)."""

    def __init__(self, directory: Path, **options):
        super().__init__(directory, NonWinReport(str(directory)), **options)

    def _run(self) -> None:
        index = read_nonwin_index(self.dir)
        initial = self.open_index(index)
        tables = []
        counts = []
        for nws in index["sets"]:
            player = PLAYER_TEXT.index(nws["player"])
            table: dict[Position, LoadedEntry] = {}
            counts.append(sum(self._load_shard(meta, player, table) for meta in nws["shards"]))
            tables.append((player, table))
        self.close_index(index, counts)
        if self.report.errors:
            return
        for player, table in tables:
            self._check_set(player, table, initial)

    def open_index(self, index: dict) -> Position:
        """The index's ruleset and root checked (the root must be the initial position),
        the report's ruleset, value, players and shards filled in; the initial position."""
        where = f"{self.dir / 'index.yaml'}"
        rs = self.rs = self.ruleset_of(index)
        self.report.ruleset, self.report.value = rs.id, index["value"]
        initial = Position.initial(rs)
        try:
            root = Position.from_text(rs, index["root"])
        except ValueError as exc:
            raise CertificateError(f"{where}: root is not a position: {exc}") from exc
        if root != initial:
            raise CertificateError(
                f"{where}: root {index['root']!r} is not the initial position {initial.text(rs)!r}"
            )
        for nws in index["sets"]:
            self.report.players.append(nws["player"])
            self.report.shards += len(nws["shards"])
        return initial

    def close_index(self, index: dict, counts: list[int]) -> None:
        """The hashes and counts of the index against the shards (``counts``: the lines each
        set's shards hold)."""
        where = f"{self.dir / 'index.yaml'}"
        set_hashes = []
        for nws, count in zip(index["sets"], counts, strict=True):
            expected = certificate_hash([s["blake3"] for s in nws["shards"]])
            if nws["hash"] != expected:
                self.fail(
                    f"{where}: set {nws['player']}: hash mismatch: index says {nws['hash']}, the "
                    f"shard digests give {expected}"
                )
            if nws["entries"] != count:
                self.fail(
                    f"{where}: set {nws['player']}: entries {nws['entries']} but the shards "
                    f"hold {count}"
                )
            set_hashes.append(nws["hash"])
        total = sum(counts)
        expected_hash = certificate_hash(set_hashes)
        if index["hash"] != expected_hash:
            self.fail(
                f"{where}: hash mismatch: index says {index['hash']}, the set hashes give "
                f"{expected_hash}"
            )
        if index["entries"] != total:
            self.fail(f"{where}: entries {index['entries']} but the shards hold {total}")
        self.report.entries = total
        self.report.hash = expected_hash

    def _load_shard(self, meta: dict, player: int, table: dict[Position, LoadedEntry]) -> int:
        count, entries = read_entries(self.rs, self.dir, meta, player, self.fail)
        for item in entries:
            key = canonical(self.rs, item.position)[0]
            other = table.get(key)
            if other is not None:
                self.fail(
                    f"{item.where}: duplicate entry {item.entry.position!r}: the same position "
                    f"(up to symmetry) is already at {other.where}"
                )
                continue
            table[key] = item
        return count

    def _check_set(
        self, player: int, table: dict[Position, LoadedEntry], initial: Position
    ) -> None:
        rs = self.rs
        me = PLAYER_TEXT[player]
        total = len(table)
        for done, item in enumerate(table.values()):
            if self.progress is not None and done % 500 == 0:
                self.progress(done, total)
            for head, via, out in outcomes(rs, player, item, self.fail):
                self.report.turns += 1
                if out.result == me:
                    self.fail(f"{head}: {via} ends the game in a win for {me}")
                elif out.result is None and canonical(rs, out.next)[0] not in table:
                    self.fail(f"{head}: {via} leads outside the set, to {out.next.text(rs)!r}")
        if self.progress is not None:
            self.progress(total, total)
        if canonical(rs, initial)[0] not in table:
            self.fail(f"set {me}: the initial position {initial.text(rs)!r} is not in the set")


def read_entries(
    rs: Ruleset, directory: Path, meta: dict, player: int, fail: Callable[[str], None]
) -> tuple[int, list[LoadedEntry]]:
    """The lines of one shard (``meta`` from the index) as entries of ``player``'s set: its
    blake3 checked against the index, every line parsed and its form checked (placement rank,
    an action exactly where the defender is to move); each problem is handed to ``fail``.
    Returns the number of lines and the well-formed entries."""
    name = meta["file"]
    try:
        data = read_shard_file(directory / name)
    except FileNotFoundError:
        fail(f"{name}: shard listed in index.yaml is missing")
        return 0, []
    except CertificateError as exc:  # a special file, too large, unreadable
        fail(str(exc))
        return 0, []
    actual = digest(data)
    if actual != meta["blake3"]:
        fail(f"{name}: hash mismatch: index says blake3 {meta['blake3']}, file has {actual}")
    try:
        lines = list(shard_lines(data, meta["entries"], name))  # bounded by the index
    except CertificateError as exc:
        fail(str(exc))
        return 0, []
    if len(lines) != meta["entries"]:
        fail(f"{name}: index says {meta['entries']} entries, the shard has {len(lines)}")
    misplaced = False
    me = PLAYER_TEXT[player]
    out = []
    for number, line in lines:
        where = f"{name} line {number}"
        try:
            entry = parse_nonwin_entry(line, where)
            pos = Position.from_text(rs, entry.position)
            action = None if entry.action is None else Action.from_text(rs, entry.action)
        except CertificateError as exc:
            fail(str(exc))
            continue
        except ValueError as exc:
            fail(f"{where}: malformed entry {line.strip()!r}: {exc}")
            continue
        if pos.placement_rank() != meta["placement_rank"] and not misplaced:
            misplaced = True
            fail(
                f"{where}: entry {entry.position!r}: placement rank {pos.placement_rank()}, "
                f"but the shard is listed with {meta['placement_rank']}"
            )
        if pos.turn == player and action is not None:
            fail(
                f"{where}: entry {entry.position!r}: {me} is to move, so every action is "
                f"checked; the entry must not name one (it names {entry.action!r})"
            )
            continue
        if pos.turn != player and action is None:
            fail(
                f"{where}: entry {entry.position!r}: the defender "
                f"{PLAYER_TEXT[pos.turn]} is to move but the entry names no action"
            )
            continue
        out.append(LoadedEntry(pos, action, where, entry, number))
    return len(lines), out


def outcomes(
    rs: Ruleset, player: int, item: LoadedEntry, fail: Callable[[str], None]
) -> Iterator[tuple[str, str, Outcome]]:
    """``(head, via, outcome)`` of every action an entry of ``player``'s set answers for:
    all of ``player``'s legal actions, or the defender's named one. A player with no legal
    action and an illegal named action go to ``fail``."""
    me = PLAYER_TEXT[player]
    head = f"{item.where}: set {me}: entry {item.entry.position!r}"
    if item.action is None:
        actions = legal_actions(rs, item.position)
        if not actions:
            fail(f"{head}: {me} has no legal action (no live position is stuck)")
        for action in actions:
            yield (
                head,
                f"{me}'s action {action.text(rs)!r}",
                play_unchecked(rs, item.position, action),
            )
        return
    try:
        out = apply_action(rs, item.position, item.action)
    except IllegalActionError as exc:
        fail(f"{head}: illegal action {item.entry.action!r}: {exc}")
        return
    yield head, f"the defender's action {item.entry.action!r}", out


def check_nonwin(
    directory: str | Path,
    *,
    ruleset: str | None = None,
    max_errors: int = 20,
    progress: Callable[[int, int], None] | None = None,
) -> NonWinReport:
    """Check the format-2 certificate in ``directory`` (see the module docstring)."""
    return NonWinChecker(
        Path(directory), ruleset=ruleset, max_errors=max_errors, progress=progress
    ).run()
