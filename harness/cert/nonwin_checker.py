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

from collections.abc import Callable
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
from harness.rules.engine import apply_action, legal_actions, play_unchecked
from harness.rules.errors import IllegalActionError
from harness.rules.position import Action, Position
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
class _Loaded:
    position: Position
    action: Action | None
    where: str
    entry: NonWinEntry


class NonWinChecker(CheckRun):
    """One run over a format-2 directory (see :func:`check_nonwin`)."""

    def __init__(self, directory: Path, **options):
        super().__init__(directory, NonWinReport(str(directory)), **options)

    def _run(self) -> None:
        index = read_nonwin_index(self.dir)
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
        tables = []
        set_hashes = []
        total = 0
        for nws in index["sets"]:
            player = PLAYER_TEXT.index(nws["player"])
            self.report.players.append(nws["player"])
            self.report.shards += len(nws["shards"])
            table: dict[Position, _Loaded] = {}
            count = 0
            for meta in nws["shards"]:
                count += self._load_shard(meta, player, table)
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
            tables.append((player, table))
            total += count
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
        if self.report.errors:
            return
        for player, table in tables:
            self._check_set(player, table, initial)

    def _load_shard(self, meta: dict, player: int, table: dict[Position, _Loaded]) -> int:
        name = meta["file"]
        try:
            data = read_shard_file(self.dir / name)
        except FileNotFoundError:
            self.fail(f"{name}: shard listed in index.yaml is missing")
            return 0
        except CertificateError as exc:  # a special file, too large, unreadable
            self.fail(str(exc))
            return 0
        actual = digest(data)
        if actual != meta["blake3"]:
            self.fail(
                f"{name}: hash mismatch: index says blake3 {meta['blake3']}, file has {actual}"
            )
        try:
            lines = list(shard_lines(data, meta["entries"], name))  # bounded by the index
        except CertificateError as exc:
            self.fail(str(exc))
            return 0
        if len(lines) != meta["entries"]:
            self.fail(f"{name}: index says {meta['entries']} entries, the shard has {len(lines)}")
        rs = self.rs
        misplaced = False
        me = PLAYER_TEXT[player]
        for number, line in lines:
            where = f"{name} line {number}"
            try:
                entry = parse_nonwin_entry(line, where)
                pos = Position.from_text(rs, entry.position)
                action = None if entry.action is None else Action.from_text(rs, entry.action)
            except CertificateError as exc:
                self.fail(str(exc))
                continue
            except ValueError as exc:
                self.fail(f"{where}: malformed entry {line.strip()!r}: {exc}")
                continue
            if pos.placement_rank() != meta["placement_rank"] and not misplaced:
                misplaced = True
                self.fail(
                    f"{where}: entry {entry.position!r}: placement rank {pos.placement_rank()}, "
                    f"but the shard is listed with {meta['placement_rank']}"
                )
            if pos.turn == player and action is not None:
                self.fail(
                    f"{where}: entry {entry.position!r}: {me} is to move, so every action is "
                    f"checked; the entry must not name one (it names {entry.action!r})"
                )
                continue
            if pos.turn != player and action is None:
                self.fail(
                    f"{where}: entry {entry.position!r}: the defender "
                    f"{PLAYER_TEXT[pos.turn]} is to move but the entry names no action"
                )
                continue
            key = canonical(rs, pos)[0]
            other = table.get(key)
            if other is not None:
                self.fail(
                    f"{where}: duplicate entry {entry.position!r}: the same position (up to "
                    f"symmetry) is already at {other.where}"
                )
                continue
            table[key] = _Loaded(pos, action, where, entry)
        return len(lines)

    def _check_set(self, player: int, table: dict[Position, _Loaded], initial: Position) -> None:
        rs = self.rs
        me = PLAYER_TEXT[player]
        total = len(table)

        def covered(head: str, out, via: str) -> None:
            if out.result == me:
                self.fail(f"{head}: {via} ends the game in a win for {me}")
            elif out.result is None and canonical(rs, out.next)[0] not in table:
                self.fail(f"{head}: {via} leads outside the set, to {out.next.text(rs)!r}")

        for done, item in enumerate(table.values()):
            if self.progress is not None and done % 500 == 0:
                self.progress(done, total)
            head = f"{item.where}: set {me}: entry {item.entry.position!r}"
            if item.action is None:
                actions = legal_actions(rs, item.position)
                if not actions:
                    self.fail(f"{head}: {me} has no legal action (no live position is stuck)")
                for action in actions:
                    self.report.turns += 1
                    out = play_unchecked(rs, item.position, action)
                    covered(head, out, f"{me}'s action {action.text(rs)!r}")
                continue
            try:
                out = apply_action(rs, item.position, item.action)
            except IllegalActionError as exc:
                self.fail(f"{head}: illegal action {item.entry.action!r}: {exc}")
                continue
            self.report.turns += 1
            covered(head, out, f"the defender's action {item.entry.action!r}")
        if self.progress is not None:
            self.progress(total, total)
        if canonical(rs, initial)[0] not in table:
            self.fail(f"set {me}: the initial position {initial.text(rs)!r} is not in the set")


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
