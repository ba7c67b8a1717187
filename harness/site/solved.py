"""Solver tables shipped with the site, so the Play page can play perfectly and rate actions.

For a few small rulesets the retrograde solver (:mod:`harness.solver.retrograde`) gives the
value of every reachable position. The site cannot run numpy, so at build time each solved
class is written under a key that the browser can compute from a position with nothing but
the ruleset's symmetries (shipped alongside):

* the board seen from the player to move: a cell is 0 (empty), 1 (the mover's checker) or
  2 (the opponent's);
* for each symmetry ``perm`` (``perm[sq]`` is the image of ``sq``), the image board
  ``img[perm[sq]] = cell[sq]`` read as a base-3 number with square 0 as the lowest digit;
* the least of those numbers ``n``, then ``key = (n * (N + 1) + mover's bin) * (N + 1) +
  opponent's bin`` with ``N`` checkers per player.

Reading the board from the mover's side folds a position and its colour swap together,
exactly as the solver's classes do, so each class gets exactly one key (checked here).

Files, per ruleset, under ``static/solved/``:

* ``ID.json``: ruleset, value and plies of the initial position, counts, the symmetries,
  the key width and the SHA-256 of the table;
* ``ID.bin``: ``count`` keys (little-endian unsigned 32-bit, or float64 when a key does not
  fit in 32 bits), ascending, then ``count`` little-endian 16-bit values:
  ``outcome << 14 | plies`` with outcome 0 draw, 1 the player to move wins, 2 loses, and
  plies the actions to the end with best play (0 for a draw).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from harness.errors import HarnessError
from harness.rules.ruleset import Ruleset
from harness.rules.symmetry import symmetries

FORMAT = 1

# Small research-family rulesets, each solved completely in well under a second; together
# their tables are under 100 kB. 3x4 is a draw, the others are won by x in 7 plies.
SOLVED_RULESETS: tuple[str, ...] = (
    "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump",
    "pop1-3x4-c3-torus-continue-binempty-king-nozero-nojump",
    "pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump",
)

# A key must stay an exact integer in a JavaScript number (float64: 53 bits).
MAX_SQUARES = 20
OUTCOME_SHIFT = 14


@dataclass(frozen=True)
class SolvedTable:
    ruleset: str
    meta: dict
    data: bytes

    @property
    def json_name(self) -> str:
        return f"{self.ruleset}.json"

    @property
    def bin_name(self) -> str:
        return f"{self.ruleset}.bin"


def site_keys(rs: Ruleset, me: np.ndarray, them: np.ndarray, mb, tb) -> np.ndarray:
    """The site keys (see the module doc) of positions given from the mover's side."""
    n = rs.rows * rs.cols
    if n > MAX_SQUARES:
        raise HarnessError(f"site: {rs.id}: tables are shipped for boards of at most 20 squares")
    me = np.asarray(me, dtype=np.uint64)
    them = np.asarray(them, dtype=np.uint64)
    shifts = np.arange(n, dtype=np.uint64)
    cells = ((me[:, None] >> shifts) & np.uint64(1)).astype(np.int64) + 2 * (
        (them[:, None] >> shifts) & np.uint64(1)
    ).astype(np.int64)
    powers = 3 ** np.arange(n, dtype=np.int64)
    best = None
    for sym in symmetries(rs):
        image = np.empty_like(cells)
        image[:, list(sym.perm)] = cells
        number = image @ powers
        best = number if best is None else np.minimum(best, number)
    base = rs.checkers + 1
    return (best * base + np.asarray(mb, dtype=np.int64)) * base + np.asarray(tb, dtype=np.int64)


def build_table(ruleset_id: str) -> SolvedTable:
    """Solve ``ruleset_id`` completely and pack its values for the browser."""
    from harness.solver.batch import engine
    from harness.solver.retrograde import solve
    from harness.solver.solution import LOSS, UNKNOWN, WIN

    rs = Ruleset.from_id(ruleset_id)
    sol = solve(rs, max_seconds=120, progress=False)
    eng = engine(rs)
    me, them, mb, tb = eng.unpack_class(sol.keys)
    keys = site_keys(rs, me, them, mb, tb)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    if len(keys) > 1 and bool((np.diff(keys) == 0).any()):
        # Two solver classes under one key would make the browser read the wrong value.
        raise HarnessError(f"site: {rs.id}: two solver classes share a site key")
    result = np.asarray(sol.result)[order]
    plies = np.asarray(sol.ply_table, dtype=np.int64)[order]
    if int(plies.max(initial=0)) >= 1 << OUTCOME_SHIFT:
        raise HarnessError(f"site: {rs.id}: a ply count does not fit the table")
    outcome = np.select([result == WIN, result == LOSS, result == UNKNOWN], [1, 2, 0], -1)
    if bool((outcome < 0).any()):
        raise HarnessError(f"site: {rs.id}: unknown value code in the solution")
    values = ((outcome << OUTCOME_SHIFT) | np.where(outcome == 0, 0, plies)).astype("<u2")
    wide = bool(keys.max(initial=0) >= 2**32)
    key_bytes = (keys.astype("<f8") if wide else keys.astype("<u4")).tobytes()
    data = key_bytes + values.tobytes()
    meta = {
        "format": FORMAT,
        "ruleset": rs.id,
        "value": sol.value,
        "plies": sol.plies,
        "positions": sol.positions,
        "classes": int(len(keys)),
        "key_bytes": 8 if wide else 4,
        "symmetries": [list(s.perm) for s in symmetries(rs)],
        "table": f"{rs.id}.bin",
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
    }
    return SolvedTable(rs.id, meta, data)


def build_tables(rulesets: tuple[str, ...] = SOLVED_RULESETS) -> list[SolvedTable]:
    return [build_table(r) for r in rulesets]


def index_json(tables: list[SolvedTable]) -> str:
    """What the Play page embeds: which rulesets have tables, and their headline values."""
    return json.dumps(
        {
            t.ruleset: {
                "value": t.meta["value"],
                "plies": t.meta["plies"],
                "positions": t.meta["positions"],
                "classes": t.meta["classes"],
                "meta": f"static/solved/{t.json_name}",
            }
            for t in tables
        },
        sort_keys=True,
    )
