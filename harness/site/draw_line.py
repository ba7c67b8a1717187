"""A line of best play for a certified draw: both players follow the two non-win sets.

From the initial position, with the reference engine, each player plays the action the
*other* player's set names for it (x is the defender of "o cannot win", o of "x cannot win").
By the sets' closure the line stays in both sets: where x is to move, every x action stays in
"x cannot win" and x's named action stays in "o cannot win"; the same for o. So nobody wins:
the line ends in a draw (both stuck, or lines for both) or in a repetition, which docs/rules.md
scores as a draw. The build refuses to publish a line that ends otherwise
(tests/site/test_results.py builds one from a real 3x4 torus draw).
"""

from __future__ import annotations

from pathlib import Path

from harness.cert.format import CertificateError
from harness.cert.nonwin_format import PLAYER_TEXT, read_nonwin_index, read_nonwin_shard
from harness.errors import HarnessError
from harness.rules.engine import apply_action
from harness.rules.position import Action, Position
from harness.rules.ruleset import Ruleset
from harness.rules.symmetry import canonical
from harness.site.replay import Step

LIMIT = 400  # plies: far beyond the repetition of any board the site shows


def _actions(rs: Ruleset, cert_dir: Path) -> dict[int, dict[Position, Action]]:
    """Per set's player: canonical image -> the defender's action (in the image's frame)."""
    try:
        index = read_nonwin_index(cert_dir)
        named: dict[int, dict[Position, Action]] = {}
        for nws in index["sets"]:
            table = named.setdefault(PLAYER_TEXT.index(nws["player"]), {})
            for shard in nws["shards"]:
                for e in read_nonwin_shard(Path(cert_dir) / shard["file"]):
                    if e.action is None:
                        continue
                    image, sym = canonical(rs, Position.from_text(rs, e.position))
                    table[image] = sym.action(Action.from_text(rs, e.action))
    except (CertificateError, OSError, ValueError, KeyError, TypeError) as exc:
        raise HarnessError(f"site: certificate {cert_dir}: {exc}") from None
    if index.get("ruleset") != rs.id:
        raise HarnessError(f"site: certificate {cert_dir} is for {index.get('ruleset')}")
    if set(named) != {0, 1}:
        raise HarnessError(f"site: certificate {cert_dir} is not a draw (one set only)")
    return named


def draw_line(rs: Ruleset, cert_dir: Path | str) -> list[Step]:
    """The drawn line of the two non-win sets in ``cert_dir`` (see the module doc)."""
    named = _actions(rs, Path(cert_dir))
    pos = Position.initial(rs)
    history: list[Position] = []
    steps: list[Step] = []
    while len(steps) < LIMIT:
        image, sym = canonical(rs, pos)
        stored = named[1 - pos.turn].get(image)  # the other player's set names my action
        if stored is None:
            raise HarnessError(f"site: {rs.id}: no named action for {pos.text(rs)} on the line")
        action = sym.inverse().action(stored)
        out = apply_action(rs, pos, action, history)
        steps.append(Step.played(rs, len(steps) + 1, pos, action, out, None))
        if out.result is not None:
            if out.result != "draw":
                raise HarnessError(f"site: {rs.id}: the drawn line ends in a win for {out.result}")
            return steps
        history.append(pos)
        pos = out.next
    raise HarnessError(f"site: {rs.id}: the drawn line does not end within {LIMIT} plies")
