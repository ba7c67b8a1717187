"""The independent certificate checker, built on the reference engine only.

It trusts nothing the solver wrote except as a claim to re-check: for every entry it
recomputes, with :mod:`harness.rules.engine`, the position after the winning action, every
reply of the loser (the engine hands the turn back after a pass under ``continue``), and
every result. It accepts a certificate only when

* ``index.yaml`` is well-formed, the ruleset parses (and equals ``--ruleset`` when given),
  ``root`` is the ruleset's initial position, every shard's blake3 and the certificate hash
  match, the entry counts and placement ranks agree with the shards;
* every line is ``{"position", "action", "rank"}`` and nothing else, in docs/rules.md notation;
* every entry has the winner to move, no two entries are images of one position;
* every action is legal and does not end the game in a draw or a loss, every loser's reply
  either ends the game in a win for the winner or hands the winner a position that is an
  entry (looked up by canonical image) of strictly smaller rank, in the same or an earlier
  shard; a reply that leaves the winner without an action (so the loser moves twice) is not
  expressible in format 1 and rejected;
* the root is an entry (winner x), or every first action of x leads to a win or an entry
  (winner o).

Ranks strictly decrease along every play from the root, so the plays are finite and no
position repeats: ``ForceWin(winner, root)`` holds by induction on the rank.

>>> from pathlib import Path
>>> report = check_certificate(Path("/nonexistent"))
>>> report.ok, report.errors[0]
(False, '/nonexistent/index.yaml: no index.yaml (not a certificate directory?)')
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.bounded import clip
from harness.cert.format import (
    CertificateError,
    Entry,
    certificate_hash,
    digest,
    parse_entry,
    read_index,
    read_shard_file,
    shard_lines,
)
from harness.rules.engine import apply_action, legal_actions, play_unchecked
from harness.rules.errors import IllegalActionError
from harness.rules.position import PLAYERS, Action, Position
from harness.rules.ruleset import Ruleset
from harness.rules.symmetry import canonical


@dataclass
class CheckReport:
    """What the checker found. ``ok`` only for a complete, accepted certificate."""

    directory: str
    ok: bool = False
    errors: list[str] = field(default_factory=list)
    ruleset: str | None = None
    winner: str | None = None
    entries: int = 0
    shards: int = 0
    hash: str | None = None
    seconds: float = 0.0
    turns: int = 0  # turns the reference engine played while checking
    truncated: bool = False  # more errors were found than listed


class _Stop(Exception):
    pass


@dataclass
class _Loaded:
    position: Position
    action: Action
    rank: int
    shard: int
    where: str
    entry: Entry


class CheckRun:
    """What every certificate checker shares: errors collected up to ``max_errors``, the
    run timed, and the certificate's ruleset checked against the one expected. A subclass
    sets ``report`` and implements ``_run``."""

    def __init__(
        self,
        directory: Path,
        report,
        *,
        ruleset: str | None = None,
        max_errors: int = 20,
        progress: Callable[[int, int], None] | None = None,
    ):
        self.dir = Path(directory)
        self.expected_ruleset = ruleset
        self.max_errors = max_errors
        self.progress = progress
        self.report = report

    def fail(self, message: str) -> None:
        self.report.errors.append(message)
        if len(self.report.errors) >= self.max_errors:
            self.report.truncated = True
            raise _Stop

    def run(self):
        t0 = time.monotonic()
        try:
            self._run()
        except _Stop:
            pass
        except CertificateError as exc:
            self.report.errors.append(str(exc))
        self.report.ok = not self.report.errors
        self.report.seconds = time.monotonic() - t0
        return self.report

    def _run(self) -> None:
        raise NotImplementedError

    def ruleset_of(self, index: dict) -> Ruleset:
        """The index's ruleset, refused when it does not parse or is not the one expected."""
        where = f"{self.dir / 'index.yaml'}"
        try:
            rs = Ruleset.from_id(index["ruleset"])
        except ValueError as exc:
            raise CertificateError(f"{where}: ruleset mismatch: {exc}") from exc
        if self.expected_ruleset is not None and rs.id != self.expected_ruleset:
            raise CertificateError(
                f"{where}: ruleset mismatch: certificate is for {rs.id}, "
                f"expected {self.expected_ruleset}"
            )
        return rs


class Checker(CheckRun):
    """One run of the checker over a certificate directory (see :func:`check_certificate`)."""

    def __init__(self, directory: Path, **options):
        super().__init__(directory, CheckReport(str(directory)), **options)
        self.table: dict[Position, _Loaded] = {}

    # --- loading ------------------------------------------------------------------------

    def _run(self) -> None:
        index = read_index(self.dir)
        where = f"{self.dir / 'index.yaml'}"
        rs = self.rs = self.ruleset_of(index)
        self.winner = PLAYERS.index(index["winner"])
        self.report.ruleset, self.report.winner = rs.id, index["winner"]
        self.report.shards = len(index["shards"])
        initial = Position.initial(rs)
        try:
            root = Position.from_text(rs, index["root"])
        except ValueError as exc:
            raise CertificateError(f"{where}: root is not a position: {exc}") from exc
        if root != initial:
            raise CertificateError(
                f"{where}: root {index['root']!r} is not the initial position {initial.text(rs)!r}"
            )
        digests = []
        total = 0
        for i, meta in enumerate(index["shards"]):
            digests.append(meta["blake3"])
            total += self._load_shard(i, meta)
        expected_hash = certificate_hash(digests)
        if index["hash"] != expected_hash:
            self.fail(
                f"{where}: hash mismatch: index says {index['hash']}, the shard digests give "
                f"{expected_hash}"
            )
        if index["entries"] != total:
            self.fail(f"{where}: entries {index['entries']} but the shards hold {total}")
        self.report.entries = total
        self.report.hash = expected_hash
        if self.report.errors:
            return  # successors of a certificate that did not load are not worth chasing
        self._check_entries()
        self._check_root(initial)

    def _load_shard(self, i: int, meta: dict) -> int:
        name = meta["file"]
        path = self.dir / name
        try:
            data = read_shard_file(path)
        except FileNotFoundError:
            self.fail(f"{name}: shard listed in index.yaml is missing")
            return 0
        except CertificateError as exc:
            self.fail(str(exc))
            return 0
        actual = digest(data)
        if actual != meta["blake3"]:
            self.fail(
                f"{name}: hash mismatch: index says blake3 {meta['blake3']}, file has {actual}"
            )
        count = 0
        self._misplaced = False
        try:
            # Decompressed as it is read, within the bound the index's entry count sets.
            for count, line in shard_lines(data, meta["entries"], name):
                self._load_entry(i, meta, f"{name} line {count}", line)
        except CertificateError as exc:
            self.fail(str(exc))
            return count
        if count != meta["entries"]:
            self.fail(f"{name}: index says {meta['entries']} entries, the shard has {count}")
        return count

    def _load_entry(self, i: int, meta: dict, where: str, line: str) -> None:
        rs = self.rs
        try:
            entry = parse_entry(line, where)
        except CertificateError as exc:
            self.fail(str(exc))
            return
        try:
            pos = Position.from_text(rs, entry.position)
            action = Action.from_text(rs, entry.action)
        except ValueError as exc:
            self.fail(
                f"{where}: malformed entry {clip(entry.position)} {clip(entry.action)}: {exc}"
            )
            return
        if pos.placement_rank() != meta["placement_rank"] and not self._misplaced:
            self._misplaced = True  # once per shard: one mislabelled shard is one problem
            self.fail(
                f"{where}: entry {entry.position!r}: placement rank {pos.placement_rank()}, "
                f"but the shard is listed with {meta['placement_rank']}"
            )
        if pos.turn != self.winner:
            self.fail(
                f"{where}: entry {entry.position!r}: wrong winner: {PLAYERS[pos.turn]} is to "
                f"move, but the certificate's winner is {PLAYERS[self.winner]}"
            )
            return
        key, sym = canonical(rs, pos)
        loaded = _Loaded(pos, action, entry.rank, i, where, entry)
        other = self.table.get(key)
        if other is not None:
            mine = (sym.action(action), entry.rank)
            theirs_sym = canonical(rs, other.position)[1]
            theirs = (theirs_sym.action(other.action), other.rank)
            kind = "duplicate" if mine == theirs else "contradictory"
            self.fail(
                f"{where}: {kind} entry {entry.position!r} {entry.action!r} rank "
                f"{entry.rank}: the same position (up to symmetry) is already at "
                f"{other.where} with {other.entry.action!r} rank {other.rank}"
            )
            return
        self.table[key] = loaded

    # --- the game -----------------------------------------------------------------------

    def _check_entries(self) -> None:
        rs, winner = self.rs, self.winner
        total = len(self.table)
        for done, item in enumerate(self.table.values()):
            if self.progress is not None and done % 500 == 0:
                self.progress(done, total)
            head = f"{item.where}: entry {item.entry.position!r} {item.entry.action!r}"
            try:
                out = apply_action(rs, item.position, item.action)
            except IllegalActionError as exc:
                self.fail(f"{head}: illegal action: {exc}")
                continue
            self.report.turns += 1
            if out.result is not None:
                if out.result != PLAYERS[winner]:
                    self.fail(f"{head}: losing action: the game ends in {_result(out.result)}")
                continue
            if out.next.turn == winner:
                # The loser has no action and passes: the winner moves again.
                self._need(head, item.rank, item.shard, out.next, "after the loser's pass")
                continue
            self._replies(head, out.next, item.rank, item.shard)
        if self.progress is not None:
            self.progress(total, total)

    def _replies(self, head: str, pos: Position, rank: int | None, shard: int) -> None:
        rs, winner = self.rs, self.winner
        replies = legal_actions(rs, pos)
        if not replies:
            self.fail(
                f"{head}: the loser has no action in {pos.text(rs)!r} and the game is not over"
            )
            return
        outcomes = []
        for reply in replies:
            out = play_unchecked(rs, pos, reply)
            self.report.turns += 1
            if out.result is not None and out.result != PLAYERS[winner]:
                # Checked before any successor: a reply that escapes is the real problem.
                self.fail(
                    f"{head}: losing action: after reply {reply.text(rs)!r} from "
                    f"{pos.text(rs)!r} the game ends in {_result(out.result)}"
                )
                return
            outcomes.append((reply, out))
        for reply, out in outcomes:
            if out.result is not None:
                continue
            via = f"after reply {reply.text(rs)!r}"
            if out.next.turn != winner:
                self.fail(
                    f"{head}: {via} from {pos.text(rs)!r} the winner has no action and passes; "
                    "format 1 cannot certify the loser moving twice"
                )
                return
            if not self._need(head, rank, shard, out.next, via):
                return

    def _need(
        self, head: str, rank: int | None, shard: int | None, pos: Position, via: str
    ) -> bool:
        """Require ``pos`` to be an entry of smaller rank in this or an earlier shard
        (``rank``/``shard`` None: no bound, for the root's replies when o wins)."""
        key = canonical(self.rs, pos)[0]
        found = self.table.get(key)
        text = pos.text(self.rs)
        if found is None:
            self.fail(f"{head}: missing successor {text!r} ({via})")
            return False
        if rank is not None and found.rank >= rank:
            self.fail(
                f"{head}: rank not smaller: successor {text!r} ({via}) has rank {found.rank}, "
                f"the entry {rank}"
            )
            return False
        if shard is not None and found.shard > shard:
            self.fail(f"{head}: successor {text!r} ({via}) sits in a later shard ({found.where})")
            return False
        return True

    def _check_root(self, initial: Position) -> None:
        text = initial.text(self.rs)
        if initial.turn == self.winner:
            if canonical(self.rs, initial)[0] not in self.table:
                self.fail(f"root {text!r}: the initial position is not an entry")
            return
        self._replies(f"root {text!r}", initial, None, None)


def _result(result: str) -> str:
    return "a draw" if result == "draw" else f"a win for {result}"


def check_certificate(
    directory: str | Path,
    *,
    ruleset: str | None = None,
    max_errors: int = 20,
    progress: Callable[[int, int], None] | None = None,
) -> CheckReport:
    """Check the certificate in ``directory``; see the module docstring for what is checked."""
    return Checker(Path(directory), ruleset=ruleset, max_errors=max_errors, progress=progress).run()


def terminal_progress() -> Callable[[int, int], None] | None:
    """A tqdm bar on stderr when it is a terminal, else None."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    bar = None

    def show(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, unit="entry", file=sys.stderr, leave=False)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return show
