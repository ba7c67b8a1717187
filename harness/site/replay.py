"""The certified line of a certificate: the winner's actions against the longest defence.

From the initial position, with the reference engine:

* when the winner is to move, look the position up among the certificate's entries (by its
  canonical image, as the checker does) and play the entry's action, mapped back from the
  stored image to the position on the board;
* when the loser is to move, play the reply whose successor has the highest rank (the
  longest the certificate lets the loser last); a reply that ends the game counts as rank 0,
  so it is chosen only when every reply ends it. Ties go to the first reply in the engine's
  order of legal actions, so the line is the same on every build.

Ranks strictly decrease along the line, so it ends in the winner's win within the root's rank
plies; anything else means the certificate does not prove what it claims, and the build says
so rather than publishing a line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.cert.format import CertificateError, read_index, read_shard
from harness.errors import HarnessError
from harness.rules.engine import apply_action, legal_actions
from harness.rules.position import Action, Position
from harness.rules.ruleset import Ruleset
from harness.rules.symmetry import canonical


@dataclass(frozen=True)
class Step:
    """One ply of the line: who moved, the action, the position before and after, the result,
    the rule branches the reference engine reports, and the certificate rank involved (the
    entry's rank for the winner's actions, the successor's rank for the loser's replies)."""

    ply: int
    mover: str
    action: str
    before: str
    after: str
    result: str | None
    branches: tuple[str, ...]
    rank: int | None
    passed: bool

    @classmethod
    def played(cls, rs: Ruleset, ply: int, pos: Position, action: Action, out, rank) -> Step:
        """The step of ``action`` in ``pos`` whose outcome (reference engine) is ``out``."""
        return cls(
            ply=ply,
            mover="xo"[pos.turn],
            action=action.text(rs),
            before=pos.text(rs),
            after=out.next.text(rs),
            result=out.result,
            branches=tuple(sorted(out.branches)),
            rank=rank,
            passed=out.passed,
        )

    def as_json(self) -> dict:
        return {
            "ply": self.ply,
            "mover": self.mover,
            "action": self.action,
            "before": self.before,
            "after": self.after,
            "result": self.result,
            "branches": list(self.branches),
            "rank": self.rank,
            "passed": self.passed,
        }


class Entries:
    """A certificate's entries, looked up by the canonical image of a position."""

    def __init__(self, rs: Ruleset, cert_dir: Path):
        self.rs = rs
        try:
            index = read_index(cert_dir)
            self.winner = str(index["winner"])
            self.root_rank: int | None = None
            self.table: dict[Position, tuple[Action, int]] = {}
            for shard in index["shards"]:
                for entry in read_shard(Path(cert_dir) / shard["file"]):
                    pos = Position.from_text(rs, entry.position)
                    image, sym = canonical(rs, pos)
                    action = sym.action(Action.from_text(rs, entry.action))
                    self.table[image] = (action, entry.rank)
        except (CertificateError, OSError, ValueError, KeyError, TypeError) as exc:
            raise HarnessError(f"site: certificate {cert_dir}: {exc}") from None
        if index.get("ruleset") != rs.id:
            raise HarnessError(f"site: certificate {cert_dir} is for {index.get('ruleset')}")

    def lookup(self, pos: Position) -> tuple[Action, int] | None:
        """(action in ``pos``'s own frame, rank) of the entry for ``pos``, or None."""
        image, sym = canonical(self.rs, pos)
        found = self.table.get(image)
        if found is None:
            return None
        action, rank = found
        return sym.inverse().action(action), rank


def certified_line(rs: Ruleset, cert_dir: Path | str) -> list[Step]:
    """The certified line of the certificate in ``cert_dir`` (see the module doc)."""
    entries = Entries(rs, Path(cert_dir))
    winner = "xo".index(entries.winner)
    pos = Position.initial(rs)
    history: list[Position] = []
    steps: list[Step] = []
    root = entries.lookup(pos) if winner == 0 else None
    # The ranks bound the line; the extra plies leave room for the loser's first move.
    limit = (root[1] if root else max((r for _, r in entries.table.values()), default=0)) + 2
    while True:
        if len(steps) > limit:
            raise HarnessError(f"site: {rs.id}: the certified line does not end (ranks?)")
        if pos.turn == winner:
            found = entries.lookup(pos)
            if found is None:
                raise HarnessError(
                    f"site: {rs.id}: no certificate entry for {pos.text(rs)} on the certified line"
                )
            action, rank = found
        else:
            action, rank = _longest_defence(rs, entries, pos, history)
        out = apply_action(rs, pos, action, history)
        steps.append(Step.played(rs, len(steps) + 1, pos, action, out, rank))
        if out.result is not None:
            if out.result != entries.winner:
                raise HarnessError(
                    f"site: {rs.id}: the certified line ends in {out.result}, "
                    f"not a win for {entries.winner}"
                )
            return steps
        history.append(pos)
        pos = out.next


def _longest_defence(
    rs: Ruleset, entries: Entries, pos: Position, history: list[Position]
) -> tuple[Action, int]:
    best: tuple[Action, int] | None = None
    for action in legal_actions(rs, pos):
        out = apply_action(rs, pos, action, history)
        if out.result is not None:
            rank = 0
        else:
            found = entries.lookup(out.next)
            if found is None:
                raise HarnessError(
                    f"site: {rs.id}: reply {action.text(rs)} in {pos.text(rs)} leaves the "
                    "certificate"
                )
            rank = found[1]
        if best is None or rank > best[1]:
            best = (action, rank)
    if best is None:
        raise HarnessError(f"site: {rs.id}: the loser has no reply in {pos.text(rs)}")
    return best
