import pytest

from harness.rules.geometry import Step, geometry_for


def test_plain_edges_stop_at_the_border():
    for edge in ("reincarnation", "ringout", "blocked"):
        g = geometry_for(4, 5, edge)
        assert g.step(0, 0, (-1, 0)) is None
        assert g.step(3, 4, (1, 1)) is None
        assert g.step(1, 1, (1, 1)) == Step(2, 2, 1, 1, False, False)


def test_torus_wraps_both_ways_and_keeps_direction():
    g = geometry_for(4, 5, "torus")
    assert g.step(0, 0, (-1, -1)) == Step(3, 4, -1, -1, True, False)
    assert g.step(3, 2, (1, 0)) == Step(0, 2, 1, 0, True, False)


def test_klein_mirrors_the_column_across_top_and_bottom():
    g = geometry_for(4, 5, "klein")
    # Columns wrap normally.
    assert g.step(2, 4, (0, 1)) == Step(2, 0, 0, 1, True, False)
    # Off the top: row wraps, column c' = (c + dc) mod C mirrored, dc flips.
    assert g.step(0, 1, (-1, 1)) == Step(3, 4 - 2, -1, -1, True, True)
    assert g.step(3, 0, (1, -1)) == Step(0, 4 - 4, 1, 1, True, True)


@pytest.mark.parametrize(
    ("rows", "cols", "edge", "expected"),
    [
        # On a plain board: horizontal R*(C-2), vertical (R-2)*C, each diagonal (R-2)*(C-2).
        (4, 4, "blocked", 4 * 2 + 2 * 4 + 2 * 2 * 2),
        (3, 5, "ringout", 3 * 3 + 1 * 5 + 2 * 1 * 3),
        # On a torus with sides >= 4 every square starts one line per direction: 4*R*C;
        # a side of 3 makes the three starting points of a wrapped line the same line.
        (4, 5, "torus", 4 * 20),
        (3, 3, "torus", 3 + 3 + 3 + 3),
        (4, 5, "klein", 4 * 20),
    ],
)
def test_line_counts(rows, cols, edge, expected):
    assert len(geometry_for(rows, cols, edge).lines) == expected


def test_every_pop_neighbour_is_distinct_and_targets_differ_from_neighbours():
    for rows in range(3, 9):
        for cols in range(3, 9):
            for edge in ("blocked", "torus", "klein"):
                g = geometry_for(rows, cols, edge)
                for landing, rays in enumerate(g.pop_rays):
                    neighbours = [r.neighbour for r in rays]
                    assert len(set(neighbours)) == len(neighbours)
                    assert landing not in neighbours
                    expected = 8 if edge != "blocked" else None
                    if expected:
                        assert len(rays) == expected


def test_movement_tables_never_wrap():
    g = geometry_for(4, 4, "torus")
    assert g.king_targets[0] == (1, 4, 5)
    assert g.slide_rays[0][4] == (1, 2, 3)  # right from a1
    assert g.slide_rays[0][0] == ()  # up-left from a1: off the grid, no wrap


def test_a_triple_can_be_a_line_in_two_directions_on_a_three_row_klein_bottle():
    # c1, b2, a3 is a plain antidiagonal, and also a diagonal from a3 through the twist.
    g = geometry_for(3, 4, "klein")
    triple = frozenset((2, 5, 8))
    directions = {line.direction for line in g.lines if frozenset(line.squares) == triple}
    assert directions == {"antidiagonal", "diagonal"}
