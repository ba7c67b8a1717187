"""The oracle's own tests: one or more hand-computed positions per branch of docs/rules.md.

Every expected position below was worked out on paper from the rule text, not produced by
running the oracle, so a wrong oracle fails here before it can mislead the differential tests.
Positions are in docs/rules.md notation: rows top to bottom, then x's bin, o's bin, player to move.
"""

from __future__ import annotations

import itertools

import pytest

from tests.oracle import pop_oracle as po

DEFAULT = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"


def ruleset(board="5x5", checkers=4, edge="blocked", stuck="continue", movement="binempty",
            pattern="king", zero="nozero", jumps="nojump"):  # fmt: skip
    return f"pop1-{board}-c{checkers}-{edge}-{stuck}-{movement}-{pattern}-{zero}-{jumps}"


def step_text(rid: str, position: str, action: str, branch: str | None = None):
    """Play one action; check the branch it should exercise fired; return (next, result)."""
    rs = po.parse_ruleset(rid)
    out = po.play(rs, po.parse_position(rs, position), po.parse_action(rs, action))
    if branch is not None:
        assert branch in out.branches, out.branches
    return po.format_position(rs, out.next), out.result


def moves_from(rid: str, position: str, square: str) -> set[str]:
    return {a.split("-")[1] for a in po.actions_text(rid, position) if a.startswith(square + "-")}


# --- ruleset identifiers ----------------------------------------------------------------------


def test_default_ruleset_parses_and_round_trips():
    rs = po.parse_ruleset(DEFAULT)
    assert (rs.rows, rs.cols, rs.checkers, rs.edge, rs.stuck) == (6, 6, 8, "torus", "continue")
    assert (rs.movement, rs.pattern, rs.zero, rs.jump) == ("binempty", "king", False, False)
    assert rs.ident == DEFAULT


def test_board_is_rows_by_columns():
    rs = po.parse_ruleset(ruleset(board="3x7"))
    assert (rs.rows, rs.cols) == (3, 7)
    assert po.format_position(rs, po.initial_position(rs)) == "......./......./....... 4 4 x"


@pytest.mark.parametrize(
    "rid, field",
    [
        ("pop2-6x6-c8-torus-continue-binempty-king-nozero-nojump", "version"),
        ("pop1-2x6-c8-torus-continue-binempty-king-nozero-nojump", "board"),
        ("pop1-6x9-c8-torus-continue-binempty-king-nozero-nojump", "board"),
        ("pop1-6by6-c8-torus-continue-binempty-king-nozero-nojump", "board"),
        ("pop1-6x6-c2-torus-continue-binempty-king-nozero-nojump", "checkers"),
        ("pop1-6x6-c17-torus-continue-binempty-king-nozero-nojump", "checkers"),
        ("pop1-6x6-8-torus-continue-binempty-king-nozero-nojump", "checkers"),
        ("pop1-6x6-c8-sphere-continue-binempty-king-nozero-nojump", "edge"),
        ("pop1-6x6-c8-torus-pass-binempty-king-nozero-nojump", "stuck"),
        ("pop1-6x6-c8-torus-continue-sometimes-king-nozero-nojump", "movement"),
        ("pop1-6x6-c8-torus-continue-binempty-knight-nozero-nojump", "pattern"),
        ("pop1-6x6-c8-torus-continue-binempty-king-zeros-nojump", "zero"),
        ("pop1-6x6-c8-torus-continue-binempty-king-nozero-hop", "jumps"),
    ],
)
def test_bad_ruleset_fields_are_named(rid, field):
    with pytest.raises(po.OracleError, match=f"field {field}"):
        po.parse_ruleset(rid)


def test_wrong_field_count_is_an_error():
    with pytest.raises(po.OracleError, match="9 fields"):
        po.parse_ruleset("pop1-6x6-c8-torus")


# --- notation ---------------------------------------------------------------------------------


def test_squares_letter_is_column_number_is_row_from_top():
    rs = po.parse_ruleset(ruleset(board="4x6"))
    assert po.parse_square(rs, "a1") == (0, 0)
    assert po.parse_square(rs, "f2") == (1, 5)
    assert po.format_square((3, 2)) == "c4"
    with pytest.raises(po.OracleError):
        po.parse_square(rs, "g1")  # seventh column on a six-column board
    with pytest.raises(po.OracleError):
        po.parse_square(rs, "a5")


def test_position_round_trip_and_reading():
    rid = ruleset(board="3x4", checkers=3)
    text = "x.../.o../..ox 1 1 o"
    rs = po.parse_ruleset(rid)
    pos = po.parse_position(rs, text)
    assert pos.board == {(0, 0): "x", (1, 1): "o", (2, 2): "o", (2, 3): "x"}
    assert pos.bins == (1, 1) and pos.turn == "o"
    assert po.format_position(rs, pos) == text


@pytest.mark.parametrize(
    "edge, text",
    [
        ("blocked", ".../.../... 3 3 x x"),  # five parts
        ("blocked", ".../... 3 3 x"),  # two rows on a three-row board
        ("blocked", ".../..../... 3 3 x"),  # a row of four
        ("blocked", ".../.z./... 3 3 x"),  # unknown character
        ("blocked", ".../.../... -1 3 x"),  # negative bin
        ("blocked", ".../.../... 4 3 x"),  # bin above the count
        ("blocked", "x../.../... 3 3 x"),  # four x checkers on board and in the bin
        ("blocked", ".../.../... 2 3 x"),  # a removed checker under an edge removing none
        ("ringout", "xx./xx./... 0 3 x"),  # four on board, more than three
        ("blocked", ".../.../... 3 3 z"),  # unknown player
    ],
)
def test_malformed_positions_are_rejected(edge, text):
    rs = po.parse_ruleset(ruleset(board="3x3", checkers=3, edge=edge))
    with pytest.raises(po.OracleError):
        po.parse_position(rs, text)


def test_ringout_allows_removed_checkers():
    rs = po.parse_ruleset(ruleset(board="3x3", checkers=3, edge="ringout"))
    assert po.parse_position(rs, "x../.../... 0 3 o").bins == (0, 3)


def test_actions_round_trip():
    rs = po.parse_ruleset(ruleset())
    assert po.parse_action(rs, "c3") == ("place", (2, 2))
    assert po.parse_action(rs, "c3-d4") == ("move", (2, 2), (3, 3))
    assert po.format_action(("move", (2, 2), (2, 2))) == "c3-c3"


# --- edge surfaces ----------------------------------------------------------------------------


def test_step_on_non_wrapping_edges_falls_off():
    for edge in ("reincarnation", "ringout", "blocked"):
        rs = po.parse_ruleset(ruleset(board="3x4", edge=edge))
        assert po.step(rs, (0, 0), (-1, 0)) is None
        assert po.step(rs, (1, 3), (0, 1)) is None
        assert po.step(rs, (1, 1), (1, 1)) == ((2, 2), (1, 1))


def test_step_on_torus_wraps_both_ways_and_keeps_direction():
    rs = po.parse_ruleset(ruleset(board="3x4", edge="torus"))
    assert po.step(rs, (0, 0), (-1, -1)) == ((2, 3), (-1, -1))
    assert po.step(rs, (2, 3), (1, 1)) == ((0, 0), (1, 1))


def test_step_on_klein_mirrors_column_when_crossing_top_or_bottom():
    rs = po.parse_ruleset(ruleset(board="3x4", edge="klein"))
    # Left-right wraps normally.
    assert po.step(rs, (1, 3), (0, 1)) == ((1, 0), (0, 1))
    # Up from a1: row 3, column 0 mirrored to 3.
    assert po.step(rs, (0, 0), (-1, 0)) == ((2, 3), (-1, 0))
    # Up-right from b1: column 2 mirrored to 1, and the direction's column part flips.
    assert po.step(rs, (0, 1), (-1, 1)) == ((2, 1), (-1, -1))
    # Down-right from d3: column 0 mirrored to 3, direction flips to down-left.
    assert po.step(rs, (2, 3), (1, 1)) == ((0, 3), (1, -1))


@pytest.mark.parametrize("edge", po.EDGES)
def test_line_triples_count_and_never_repeat_a_square(edge):
    for rows, cols in itertools.product(range(3, 9), repeat=2):
        rs = po.parse_ruleset(ruleset(board=f"{rows}x{cols}", edge=edge))
        triples = po.line_triples(rs)
        assert all(len(set(t)) == 3 for t in triples)
        if edge in po.WRAPPING_EDGES:
            assert len(triples) == 4 * rows * cols
        else:
            expected = rows * (cols - 2) + (rows - 2) * cols + 2 * (rows - 2) * (cols - 2)
            assert len(triples) == expected


@pytest.mark.parametrize("edge", po.WRAPPING_EDGES)
def test_neighbours_are_distinct_on_every_wrapping_board(edge):
    # Why the "N from two directions" branch of docs/rules.md never fires when R, C >= 3.
    for rows, cols in itertools.product(range(3, 9), repeat=2):
        rs = po.parse_ruleset(ruleset(board=f"{rows}x{cols}", edge=edge))
        for sq in rs.squares:
            assert len({po.step(rs, sq, d)[0] for d in po.DIRECTIONS}) == 8


# --- legal actions ----------------------------------------------------------------------------


def test_initial_actions_are_every_placement():
    rid = ruleset(board="3x4", checkers=3)
    assert sorted(po.actions_text(rid, "..../..../.... 3 3 x")) == sorted(
        f"{c}{r}" for c in "abcd" for r in "123"
    )


def test_binempty_moves_only_with_an_empty_bin():
    rid = ruleset(board="3x3", checkers=3, movement="binempty")
    # x has a checker in the bin: placements only.
    assert set(po.actions_text(rid, "xx./o../o.. 1 1 x")) == {"c1", "b2", "c2", "b3", "c3"}
    assert set(po.actions_text(rid, "xx./o.o/o.. 1 0 x")) == {"c1", "b2", "b3", "c3"}
    # o's bin is empty: king moves only, to empty neighbours.
    assert set(po.actions_text(rid, "xx./o.o/o.. 1 0 o")) == {
        "a2-b2", "a2-b3", "c2-c1", "c2-b2", "c2-b3", "c2-c3", "a3-b2", "a3-b3",
    }  # fmt: skip


def test_always_gives_placements_and_moves():
    rid = ruleset(board="3x3", checkers=3, movement="always")
    assert set(po.actions_text(rid, "x../.../... 2 3 x")) == {
        "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3", "a1-b1", "a1-a2", "a1-b2",
    }  # fmt: skip


def test_nomove_with_an_empty_bin_has_no_action():
    rid = ruleset(board="3x3", checkers=3, movement="nomove")
    assert po.actions_text(rid, "xx./o../o.x 0 1 x") == []
    assert set(po.actions_text(rid, "xx./o../o.x 0 1 o")) == {"c1", "b2", "c2", "b3"}


def test_king_moves_never_wrap():
    rid = ruleset(board="4x4", checkers=3, edge="torus")
    assert moves_from(rid, "x.../..../o.o./.xox 0 0 x", "a1") == {"b1", "a2", "b2"}


def test_rook_stops_at_first_occupied_unless_jump():
    pos = "x..../...../o..../...../..... 3 3 x"
    rid = ruleset(checkers=4, movement="always", pattern="rook")
    assert moves_from(rid, pos, "a1") == {"a2", "b1", "c1", "d1", "e1"}
    rid = ruleset(checkers=4, movement="always", pattern="rook", jumps="jump")
    assert moves_from(rid, pos, "a1") == {"a2", "a4", "a5", "b1", "c1", "d1", "e1"}


def test_bishop_and_queen_slides():
    pos = "x..../...../..o../...../..... 3 3 x"
    rid = ruleset(checkers=4, movement="always", pattern="bishop")
    assert moves_from(rid, pos, "a1") == {"b2"}
    rid = ruleset(checkers=4, movement="always", pattern="bishop", jumps="jump")
    assert moves_from(rid, pos, "a1") == {"b2", "d4", "e5"}
    rid = ruleset(checkers=4, movement="always", pattern="queen")
    expected = {"b2", "b1", "c1", "d1", "e1", "a2", "a3", "a4", "a5"}
    assert moves_from(rid, pos, "a1") == expected


def test_anywhere_reaches_every_empty_square_and_king_does_not_jump():
    pos = "xo./o../... 2 1 x"
    rid = ruleset(board="3x3", checkers=3, movement="always", pattern="anywhere")
    assert moves_from(rid, pos, "a1") == {"c1", "b2", "c2", "a3", "b3", "c3"}
    rid = ruleset(board="3x3", checkers=3, movement="always", pattern="king", jumps="jump")
    assert moves_from(rid, pos, "a1") == {"b2"}


def test_zero_move_is_legal_only_with_zero():
    pos = "x..../..o../..x../...../x...x 0 3 x"
    assert "c3" in moves_from(ruleset(zero="zero"), pos, "c3")
    assert "c3" not in moves_from(ruleset(zero="nozero"), pos, "c3")


def test_illegal_action_is_refused():
    rs = po.parse_ruleset(ruleset())
    pos = po.parse_position(rs, "x..../..o../..x../...../x...x 0 3 x")
    for action in (("place", (0, 0)), ("move", (2, 2), (2, 2)), ("move", (1, 2), (0, 2))):
        with pytest.raises(po.OracleError, match="illegal"):
            po.play(rs, pos, action)


# --- the pop ----------------------------------------------------------------------------------


def test_push_moves_neighbours_of_both_colours_one_square_away():
    # x lands on c3; o on c2 goes up to c1, x on d4 goes down-right to e5.
    assert step_text(ruleset(), "...../..o../...../...x./..... 3 3 x", "c3", "pop-push") == (
        "..o../...../..x../...../....x 2 3 o",
        None,
    )


def test_push_fails_when_target_is_occupied_in_snapshot():
    assert step_text(
        ruleset(), "..o../..o../...../...../..... 4 2 x", "c3", "pop-fail-occupied"
    ) == ("..o../..o../..x../...../..... 3 2 o", None)


def test_push_fails_when_target_is_shared():
    # 4-wide torus: from b2, both a2 (pushed left, wrapping) and c2 (pushed right) target d2.
    assert step_text(
        ruleset(board="4x4", edge="torus"), "..../o.o./..../.... 4 2 x", "b2", "pop-fail-shared"
    ) == ("..../oxo./..../.... 3 2 o", None)
    # 5-wide torus: the targets differ (e2 and d2), so both pushes succeed.
    assert step_text(
        ruleset(edge="torus"), "...../o.o../...../...../..... 4 2 x", "b2", "pop-push"
    ) == ("...../.x.oo/...../...../..... 3 2 o", None)


def test_pushes_are_decided_on_the_snapshot_and_do_not_chain():
    # From c3: c2 goes up to c1 and b3 left to a3; d3 would go to e3, which is occupied, so it
    # stays, and e3 (not a neighbour of c3) is never pushed along.
    assert step_text(ruleset(checkers=5), "...../..o../.x.oo/...../..... 4 2 x", "c3") == (
        "..o../...../x.xoo/...../..... 3 2 o",
        None,
    )


def test_fall_off_each_non_wrapping_edge():
    before = "...../o..../...../...../..... 4 3 x"
    # reincarnation: o's a2 returns to o's bin.
    assert step_text(ruleset(edge="reincarnation"), before, "b2", "pop-reincarnation") == (
        "...../.x.../...../...../..... 3 4 o",
        None,
    )
    # blocked: it stays.
    assert step_text(ruleset(edge="blocked"), before, "b2", "pop-blocked") == (
        "...../ox.../...../...../..... 3 3 o",
        None,
    )
    # ringout: it leaves the game; o still has three (in the bin), so nobody loses.
    assert step_text(ruleset(edge="ringout"), before, "b2", "pop-ringout") == (
        "...../.x.../...../...../..... 3 3 o",
        None,
    )


def test_klein_push_twists_across_the_top():
    before = "..../..../..../.o.. 4 3 x"
    # From b1, the up-right step crosses the top: column c is mirrored to b, so it reaches b4
    # with the direction flipped to up-left, and b4 is pushed to a3.
    assert step_text(ruleset(board="4x4", edge="klein"), before, "b1") == (
        ".x../..../o.../.... 3 3 o",
        None,
    )
    # On the torus the same checker is straight above b1 and goes to b3.
    assert step_text(ruleset(board="4x4", edge="torus"), before, "b1") == (
        ".x../..../.o../.... 3 3 o",
        None,
    )


def test_zero_move_pops_again():
    assert step_text(
        ruleset(zero="zero"), "x..../..o../..x../...../x...x 0 3 x", "c3-c3", "zero-move"
    ) == ("x.o../...../..x../...../x...x 0 3 o", None)


def test_move_pops_from_the_destination():
    # x moves c3 to c4 with an empty bin: o on b4 goes left to a4; o on d5 would go down-right
    # off the blocked board, so it stays.
    assert step_text(ruleset(), "x...x/...../..x../.o.../x..o. 0 2 x", "c3-c4", "pop-blocked") == (
        "x...x/...../...../o.x../x..o. 0 2 o",
        None,
    )


# --- results ----------------------------------------------------------------------------------


def test_mover_line_wins():
    assert step_text(ruleset(), "xx.../...../...../...../..... 2 4 x", "c1", "line-mover") == (
        "xxx../...../...../...../..... 1 4 o",
        "x",
    )


def test_line_made_by_a_push():
    # x places e1: d1 is pushed to c1, completing a1 b1 c1.
    assert step_text(ruleset(), "xx.x./...../...../...../..... 1 4 x", "e1") == (
        "xxx.x/...../...../...../..... 0 4 o",
        "x",
    )


def test_opponent_line_wins_for_opponent():
    assert step_text(ruleset(), "oo.o./...../...../...../..... 4 1 x", "e1", "line-opponent") == (
        "ooo.x/...../...../...../..... 3 1 o",
        "o",
    )


def test_both_lines_draw():
    assert step_text(ruleset(), "oo.o./....x/....x/...../..... 2 1 x", "e1", "line-both") == (
        "ooo.x/....x/....x/...../..... 1 1 o",
        "draw",
    )


@pytest.mark.parametrize(
    "edge, squares, is_line",
    [
        ("torus", [(3, 0), (0, 0), (1, 0)], True),  # vertical through the top edge
        ("klein", [(3, 0), (0, 0), (1, 0)], False),  # the twist mirrors the column
        ("klein", [(3, 0), (0, 3), (1, 3)], True),
        ("torus", [(3, 3), (0, 0), (1, 1)], True),  # diagonal through the corner
        ("klein", [(3, 1), (0, 1), (1, 0)], True),  # diagonal, direction flipped
        ("torus", [(0, 3), (0, 0), (0, 1)], True),  # horizontal wrap
        ("klein", [(0, 3), (0, 0), (0, 1)], True),
        ("blocked", [(0, 3), (0, 0), (0, 1)], False),  # no wrap on a plain board
        ("blocked", [(1, 3), (2, 2), (3, 1)], True),  # anti-diagonal
    ],
)
def test_lines_follow_the_edge_surface(edge, squares, is_line):
    rs = po.parse_ruleset(ruleset(board="4x4", edge=edge))
    assert po.has_line(rs, {sq: "o" for sq in squares}, "o") is is_line
    assert po.has_line(rs, {sq: "o" for sq in squares}, "x") is False
    assert po.line_owners(rs, {sq: "o" for sq in squares}) == ({"o"} if is_line else set())


def test_ringout_loss_and_draw():
    rid = ruleset(checkers=3, edge="ringout")
    # o drops to two survivors: x wins.
    assert step_text(rid, "...../o..../...../...../..... 3 2 x", "b2", "ringout-loss") == (
        "...../.x.../...../...../..... 2 2 o",
        "x",
    )
    # x pushes its own a1 off: x drops to two, o keeps three: o wins.
    assert step_text(rid, "x..../...../...../...../..... 2 3 x", "b2", "ringout-loss") == (
        "...../.x.../...../...../..... 1 3 o",
        "o",
    )
    # Both drop below three at once: draw.
    assert step_text(rid, "x..../o..../...../...../..... 2 2 x", "b2", "ringout-draw") == (
        "...../.x.../...../...../..... 1 2 o",
        "draw",
    )


def test_lines_are_judged_before_ringout():
    # x completes a2 b2 c2 while o's b1 falls off the top, leaving o two survivors: the line
    # decides (both branches would give x the win, but only the line rule may fire).
    out_next, result = step_text(
        ruleset(checkers=3, edge="ringout"), ".o.../xx.../...../...../..... 1 2 x", "c2"
    )
    assert (out_next, result) == ("...../xxx../...../...../..... 0 2 o", "x")
    rs = po.parse_ruleset(ruleset(checkers=3, edge="ringout"))
    before = po.parse_position(rs, ".o.../xx.../...../...../..... 1 2 x")
    branches = po.play(rs, before, ("place", (1, 2))).branches
    assert "line-mover" in branches and "ringout-loss" not in branches


def test_stuck_continue_passes_and_draw_ends():
    before = "o.o.o/...../...../...../..... 3 0 x"
    # nomove: after x places c5, o has an empty bin and cannot move.
    assert step_text(
        ruleset(checkers=3, movement="nomove", stuck="continue"), before, "c5", "stuck-pass"
    ) == ("o.o.o/...../...../...../..x.. 2 0 x", None)
    assert step_text(
        ruleset(checkers=3, movement="nomove", stuck="draw"), before, "c5", "stuck-draw"
    ) == ("o.o.o/...../...../...../..x.. 2 0 o", "draw")


def test_both_stuck_is_a_draw_written_with_opponent_to_move():
    assert step_text(
        ruleset(checkers=3, movement="nomove", stuck="continue"),
        "o.o.o/...../x...x/...../..... 1 0 x",
        "c5",
        "stuck-both",
    ) == ("o.o.o/...../x...x/...../..x.. 0 0 o", "draw")


# --- repetition -------------------------------------------------------------------------------


def test_repetition_in_a_game_record():
    rs = po.parse_ruleset(ruleset(checkers=3))
    pos = po.parse_position(rs, "x...o/...../x.o../...../..o.x 0 0 x")
    history = [pos]
    results = []
    for text in ("a1-b1", "e1-d1", "b1-a1", "d1-e1"):
        out = po.play(rs, pos, po.parse_action(rs, text), history=history)
        results.append(out.result)
        pos = out.next
        history.append(pos)
    # The fourth action recreates the first position: a draw; nothing earlier repeated.
    assert results == [None, None, None, "draw"]
    assert po.format_position(rs, pos) == "x...o/...../x.o../...../..o.x 0 0 x"


def test_repetition_is_checked_on_the_position_as_handed_over():
    rid = ruleset(checkers=3, movement="nomove", stuck="continue")
    rs = po.parse_ruleset(rid)
    before = po.parse_position(rs, "o.o.o/...../...../...../..... 3 0 x")
    action = po.parse_action(rs, "c5")
    handed = po.parse_position(rs, "o.o.o/...../...../...../..x.. 2 0 x")  # after o's pass
    not_handed = po.parse_position(rs, "o.o.o/...../...../...../..x.. 2 0 o")
    assert po.play(rs, before, action, history=[before, not_handed]).result is None
    out = po.play(rs, before, action, history=[handed, before])
    assert out.result == "draw" and "repetition" in out.branches
    assert po.format_position(rs, out.next) == "o.o.o/...../...../...../..x.. 2 0 o"


# --- solver -----------------------------------------------------------------------------------


def naive_values(graph: po.Graph):
    """A second solver, by a different method: for k = 1, 2, ... the set of positions where
    each player can force a win within k plies, until nothing changes."""
    n = len(graph.keys)
    mover = [key[-1] for key in graph.keys]
    first: dict[str, list] = {"x": [None] * n, "o": [None] * n}
    k = 0
    while True:
        k += 1
        changed = False
        for player in ("x", "o"):
            wins = first[player]
            within = [w is not None for w in wins]  # within k - 1 plies
            for i, out in enumerate(graph.edges):
                if wins[i] is not None:
                    continue
                good = [
                    (kind == "end" and what == player) or (kind == "pos" and within[what])
                    for kind, what in out
                ]
                if any(good) if mover[i] == player else all(good):
                    wins[i] = k
                    changed = True
        if not changed:
            break
    values = []
    for i in range(n):
        if first["x"][i] is not None:
            values.append(("x", first["x"][i]))
        elif first["o"][i] is not None:
            values.append(("o", first["o"][i]))
        else:
            values.append(("draw", None))
    return values


TINY = [
    ruleset(board="3x3", checkers=3, edge=edge, stuck=stuck, movement=movement)
    for edge in po.EDGES
    for stuck, movement in (("continue", "binempty"), ("draw", "nomove"))
] + [
    ruleset(board="3x3", checkers=3, edge="ringout", movement="always", pattern="anywhere"),
    ruleset(board="3x3", checkers=3, stuck="draw", pattern="bishop", zero="zero", jumps="jump"),
]


@pytest.mark.parametrize("rid", TINY)
def test_retrograde_agrees_with_iterated_win_sets(rid):
    solution = po.solve(po.parse_ruleset(rid))
    assert list(zip(solution.value, solution.plies, strict=True)) == naive_values(solution.graph)


@pytest.mark.parametrize("rid", TINY[:4])
def test_reachable_graph_is_closed_and_has_no_terminal_positions(rid):
    rs = po.parse_ruleset(rid)
    graph = po.reachable(rs)
    assert graph.keys[0] == po.format_position(rs, po.initial_position(rs))
    assert len(set(graph.keys)) == len(graph.keys)
    for key, out in zip(graph.keys, graph.edges, strict=True):
        pos = po.parse_position(rs, key)
        # Every reachable position has a move (stuck players were passed over or drawn).
        assert len(out) == len(po.legal_actions(rs, pos)) > 0
        assert po.has_action(rs, pos)
        assert not po.has_line(rs, pos.board, "x") and not po.has_line(rs, pos.board, "o")
