"""Perfect play and the action-values panel of the Play page, in headless Chromium, against the
retrograde solver: perfect play never lets a won position go, and every value shown is the
solver's."""

from __future__ import annotations

import random
from functools import cache

import pytest

from harness.rules import Position, Ruleset, apply_action, legal_actions
from harness.solver.retrograde import solve

from .test_play import board_position, open_play, perform, status

pytestmark = pytest.mark.browser

SMALL = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"
FOUR = "pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump"
RESEARCH = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"


@cache
def solution(ruleset: str):
    return solve(Ruleset.from_id(ruleset))


def wait_for_table(page) -> None:
    page.wait_for_selector("#values[data-ready='true']", state="attached", timeout=10000)


def wait_for_computer(page, human: str) -> None:
    """Until the computer has handed the turn back to the human, or the game is over."""
    page.wait_for_function(
        """who => document.getElementById('status').dataset.status !== '' ||
                 document.getElementById('board').dataset.position.endsWith(' ' + who)""",
        arg=human,
        timeout=10000,
    )


def play_against_perfect(page, rs: Ruleset, pos: Position, computer: str, rng) -> tuple[str, int]:
    """The test plays the human side at random; returns (result, plies played)."""
    human = "o" if computer == "x" else "x"
    history: list[Position] = []
    plies = 0
    while True:
        if "xo"[pos.turn] == computer:
            wait_for_computer(page, human)
            seen = board_position(page)
            # The computer's action must be legal: its result is one of the legal successors.
            replies = {
                apply_action(rs, pos, a, history).next.text(rs): a for a in legal_actions(rs, pos)
            }
            assert seen in replies, f"{seen!r} does not follow from {pos.text(rs)}"
            out = apply_action(rs, pos, replies[seen], history)
        else:
            action = rng.choice(legal_actions(rs, pos))
            before = board_position(page)
            perform(page, rs, pos, action, style=0)
            out = apply_action(rs, pos, action, history)
            assert board_position(page) != before
        plies += 1
        history.append(pos)
        pos = out.next
        if out.result is not None:
            page.wait_for_function("() => document.getElementById('status').dataset.status")
            assert status(page) == out.result
            return out.result, plies


@pytest.mark.parametrize(("ruleset", "seed"), [(SMALL, 1), (SMALL, 2), (FOUR, 3)])
def test_perfect_play_wins_from_the_start(page, ruleset, seed):
    rs = Ruleset.from_id(ruleset)
    sol = solution(ruleset)
    assert sol.value == "x"
    open_play(page, ruleset)
    wait_for_table(page)
    page.select_option("#opponent", "perfect-x")
    result, plies = play_against_perfect(page, rs, Position.initial(rs), "x", random.Random(seed))
    assert result == "x"
    # Perfect play takes the fastest win: never more plies than the start's value.
    assert plies <= sol.plies


def _o_wins_somewhere(ruleset: str, seed: int) -> tuple[Position, int]:
    """A reachable position, o to move, that o wins: found by random play and the solver."""
    rs = Ruleset.from_id(ruleset)
    sol = solution(ruleset)
    rng = random.Random(seed)
    for _ in range(500):
        pos = Position.initial(rs)
        while True:
            value, plies = sol.value_of(pos)
            if pos.turn == 1 and value == "o" and plies > 2:
                return pos, plies
            out = apply_action(rs, pos, rng.choice(legal_actions(rs, pos)))
            if out.result:
                break
            pos = out.next
    raise AssertionError("no position won by o found")


@pytest.mark.parametrize(("ruleset", "seed"), [(SMALL, 4), (FOUR, 5)])
def test_perfect_play_keeps_a_won_position_as_o(page, ruleset, seed):
    rs = Ruleset.from_id(ruleset)
    start, plies_needed = _o_wins_somewhere(ruleset, seed)
    open_play(page, ruleset, start.text(rs))
    wait_for_table(page)
    page.select_option("#opponent", "perfect-o")
    result, plies = play_against_perfect(page, rs, start, "o", random.Random(seed))
    assert result == "o"
    assert plies <= plies_needed


def read_panel(page) -> tuple[tuple[str, int | None], dict[str, tuple[str, int | None]]]:
    page.wait_for_selector("#values-here[data-winner]", timeout=10000)
    here = page.eval_on_selector("#values-here", "el => [el.dataset.winner, el.dataset.plies]")
    rows = page.eval_on_selector_all(
        "#values-list li",
        "els => els.map(e => [e.dataset.action, e.dataset.winner, e.dataset.plies])",
    )

    def plies(text):
        return int(text) if text else None

    return (here[0], plies(here[1])), {a: (w, plies(p)) for a, w, p in rows}


@pytest.mark.parametrize(("ruleset", "seed"), [(SMALL, 6), (FOUR, 7)])
def test_action_values_match_the_solver(page, screenshot_dir, ruleset, seed):
    rs = Ruleset.from_id(ruleset)
    sol = solution(ruleset)
    rng = random.Random(seed)
    open_play(page, ruleset)
    page.check("#show-values")
    wait_for_table(page)
    pos, history = Position.initial(rs), []
    for ply in range(12):
        here, rows = read_panel(page)
        assert here == sol.value_of(pos), f"ply {ply}: {pos.text(rs)}"
        expected = {a.text(rs): (v, p) for a, v, p in sol.rated_actions(pos)}
        assert rows == expected, f"ply {ply}: {pos.text(rs)}"
        if ply == 1 and ruleset == FOUR:
            page.screenshot(path=str(screenshot_dir / "play-perfect-values.png"), full_page=True)
        action = rng.choice(legal_actions(rs, pos))
        out = apply_action(rs, pos, action, history)
        # Playing from the panel: its button plays that action.
        page.click(f'#values-list li[data-action="{action.text(rs)}"] button')
        assert board_position(page) == out.next.text(rs)
        if out.result is not None:
            break
        history.append(pos)
        pos = out.next


def test_unsolved_rulesets_offer_no_perfect_play(page):
    open_play(page, RESEARCH)
    assert page.is_disabled('#opponent option[value="perfect-o"]')
    assert page.is_disabled('#opponent option[value="perfect-x"]')
    links = page.eval_on_selector_all("#solved-note a", "els => els.map(e => e.textContent)")
    assert SMALL in links and FOUR in links
    page.check("#show-values")
    assert "No solver table" in page.text_content("#values-here")
    # Following a link switches to that solved ruleset, and perfect play becomes available.
    page.click(f'#solved-note a:text("{SMALL}")')
    page.wait_for_function(
        "id => document.getElementById('board').dataset.ruleset === id", arg=SMALL
    )
    assert not page.is_disabled('#opponent option[value="perfect-x"]')


def test_an_unreachable_position_has_no_value(page):
    open_play(page, SMALL, "o../o../... 3 1 x")  # o placed twice before x ever moved
    page.check("#show-values")
    wait_for_table(page)
    assert "cannot be reached" in page.text_content("#values-here")
    assert page.locator("#values-list li").count() == 0
