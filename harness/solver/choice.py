"""Which solver suits a ruleset: a counting bound on its classes (:func:`class_bound`) and the
pick of ``solve --method auto`` (:func:`pick_method`), shared by ``solve``, ``certify``,
``verify``, ``results`` and the site.
"""

from __future__ import annotations

from math import comb

from harness.rules.ruleset import Ruleset
from harness.rules.symmetry import symmetries

# ``auto`` enumerates when the bound is below this many classes: the 5x5 c4 solve stores
# about 540 bytes per class at its peak, so 40 million classes stay within 24 GB.
AUTO_CLASS_LIMIT = 40_000_000
# The compact solver peaks at 15 to 31 bytes per class (less in --workdir), and a bound is
# about ten times the classes actually reached (5x5 c4: 30 million, 2.8 million reached).
COMPACT_CLASS_LIMIT = 4_000_000_000


def class_bound(rs: Ruleset) -> int:
    """An upper bound on the positions up to symmetry: every way to put a ≤ N x's and b ≤ N
    o's on the board, times the bins that can go with them (only ``ringout`` leaves a choice:
    checkers out of the game), times the player to move, over the number of symmetries.

    >>> class_bound(Ruleset.from_id("pop1-5x5-c4-torus-continue-binempty-king-nozero-nojump"))
    30007550
    >>> class_bound(Ruleset.from_id("pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"))
    55314811605615
    """
    n, checkers = rs.squares, rs.checkers
    total = 0
    for a in range(min(n, checkers) + 1):
        bins_a = checkers - a + 1 if rs.removes else 1
        for b in range(min(n - a, checkers) + 1):
            bins_b = checkers - b + 1 if rs.removes else 1
            total += comb(n, a) * comb(n - a, b) * bins_a * bins_b
    return 2 * total // len(symmetries(rs))


def pick_method(rs: Ruleset, table: bool = False) -> str:
    """``auto``'s choice: ``retrograde``, ``compact`` or ``proof`` by :func:`class_bound`
    (``table``: a strong solve was asked for, so never the proof search).

    >>> pick_method(Ruleset.from_id("pop1-5x5-c4-torus-continue-binempty-king-nozero-nojump"))
    'retrograde'
    >>> pick_method(Ruleset.from_id("pop1-5x5-c5-torus-continue-binempty-king-nozero-nojump"))
    'compact'
    >>> pick_method(Ruleset.from_id("pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"))
    'proof'
    """
    from harness.solver.batch import engine

    bound = class_bound(rs)
    if bound <= AUTO_CLASS_LIMIT:
        return "retrograde"
    one_word = engine(rs).key_words == 1
    if one_word and (bound <= COMPACT_CLASS_LIMIT or table):
        return "compact"
    return "retrograde" if table else "proof"
