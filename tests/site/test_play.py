"""The Play page in headless Chromium: real clicks, drags and keys, checked against the
Python reference engine position by position."""

from __future__ import annotations

import random
from urllib.parse import quote

import pytest

from harness.rules import Action, Position, Ruleset, apply_action, legal_actions

pytestmark = pytest.mark.browser

RESEARCH = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"


def open_play(page, ruleset: str, position: str | None = None, animate: bool = False):
    url = f"{page.site_url}play.html#ruleset={quote(ruleset, safe='')}"
    if position is not None:
        url += f"&position={quote(position, safe='')}"
    page.goto(url)
    page.wait_for_function(
        "id => document.getElementById('board').dataset.ruleset === id", arg=ruleset
    )
    if not animate:
        page.uncheck("#animate")


def board_position(page) -> str:
    return page.get_attribute("#board", "data-position")


def status(page) -> str:
    return page.get_attribute("#status", "data-status")


def center(page, selector: str) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, f"{selector} is not on screen"
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def drag(page, source: str, target: str) -> None:
    x0, y0 = center(page, source)
    x1, y1 = center(page, target)
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, steps=4)
    page.mouse.move(x1, y1, steps=4)
    page.mouse.up()


def square(name: str) -> str:
    return f'#board [data-square="{name}"]'


def perform(page, rs: Ruleset, pos: Position, action: Action, style: int) -> None:
    """Carry out an action the way a person would; ``style`` picks click or drag."""
    mover = "xo"[pos.turn]
    if action.src is None:
        dst = action.text(rs)
        if style % 2:
            drag(page, f'[data-bin="{mover}"] [data-bin-checker]', square(dst))
        else:
            page.click(square(dst))
    else:
        src, dst = action.text(rs).split("-")
        if style % 2 and src != dst:  # a zero move cannot be dragged: it is click, click
            drag(page, square(src), square(dst))
        else:
            page.click(square(src))
            page.click(square(dst))


def wait_for_change(page, before_position: str, before_status: str) -> None:
    page.wait_for_function(
        """([p, s]) => {
            const b = document.getElementById('board').dataset.position;
            const t = document.getElementById('status').dataset.status;
            return b !== p || t !== s;
        }""",
        arg=[before_position, before_status],
        timeout=5000,
    )


def dom_board(page) -> str:
    """The board as drawn (checker elements), in the notation's row format."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#board .board-row')].map(row =>
            [...row.querySelectorAll('.sq')].map(sq => {
                const c = sq.querySelector('.checker:not(.arriving)');
                return c ? (c.classList.contains('x') ? 'x' : 'o') : '.';
            }).join('')).join('/')"""
    )


def wait_for_animations(page) -> None:
    page.wait_for_function(
        "() => !document.querySelector('#board .checker.arriving') &&"
        " document.getAnimations().length === 0",
        timeout=3000,
    )


# (ruleset, seed, animate): two games run with the pop animated, so that input arriving during
# an animation is exercised too.
GAMES = [
    (RESEARCH, 11, True),
    ("pop1-4x4-c3-torus-continue-binempty-king-nozero-nojump", 12, False),
    ("pop1-5x5-c4-klein-draw-always-queen-zero-jump", 13, False),
    ("pop1-4x5-c4-ringout-continue-binempty-rook-nozero-nojump", 14, False),
    ("pop1-4x4-c4-reincarnation-continue-always-anywhere-zero-nojump", 15, True),
    ("pop1-3x4-c3-blocked-draw-nomove-bishop-nozero-jump", 16, False),
]


@pytest.mark.parametrize(("ruleset", "seed", "animate"), GAMES, ids=[g[0] for g in GAMES])
def test_whole_games_agree_with_python(page, ruleset, seed, animate):
    rs = Ruleset.from_id(ruleset)
    rng = random.Random(seed)
    open_play(page, ruleset, animate=animate)
    pos = Position.initial(rs)
    history: list[Position] = []
    assert board_position(page) == pos.text(rs)
    for ply in range(60):
        action = rng.choice(legal_actions(rs, pos))
        expected = apply_action(rs, pos, action, history)
        before = (board_position(page), status(page))
        perform(page, rs, pos, action, style=rng.randrange(2))
        wait_for_change(page, *before)
        where = f"{ruleset} ply {ply}: {pos.text(rs)} then {action.text(rs)}"
        assert board_position(page) == expected.next.text(rs), where
        assert status(page) == (expected.result or ""), where
        # With the pop animated, every third action or so comes while it is still being drawn.
        if not animate or rng.randrange(3) or expected.result is not None:
            if animate:
                wait_for_animations(page)
            assert dom_board(page) == expected.next.text(rs).split()[0], where
        if expected.result is not None:
            assert page.is_visible("#banner")
            break
        history.append(pos)
        pos = expected.next


def test_random_mover_plays_legal_actions(page, screenshot_dir):
    ruleset = "pop1-4x4-c4-torus-continue-always-king-nozero-nojump"
    rs = Ruleset.from_id(ruleset)
    rng = random.Random(3)
    open_play(page, ruleset)
    page.select_option("#opponent", "random-o")
    pos = Position.initial(rs)
    history: list[Position] = []
    for _ in range(30):
        action = rng.choice(legal_actions(rs, pos))
        out = apply_action(rs, pos, action, history)
        perform(page, rs, pos, action, style=rng.randrange(2))
        history.append(pos)
        pos = out.next
        if out.result is not None:
            assert status(page) == out.result
            break
        # Wait for the random mover (o) to hand the turn back, or for the game to end.
        page.wait_for_function(
            """() => document.getElementById('status').dataset.status !== '' ||
                     document.getElementById('board').dataset.position.endsWith(' x')""",
            timeout=5000,
        )
        while pos.turn == 1:
            seen = board_position(page)
            replies = {
                apply_action(rs, pos, a, history).next.text(rs): a for a in legal_actions(rs, pos)
            }
            # o may have passed, so its own turn ended where x is to move again.
            assert seen in replies, f"o's reply {seen!r} is not reachable from {pos.text(rs)}"
            reply = apply_action(rs, pos, replies[seen], history)
            history.append(pos)
            pos = reply.next
            if reply.result is not None:
                assert status(page) == reply.result
                break
        if status(page):
            break
    page.screenshot(path=str(screenshot_dir / "play-vs-random.png"), full_page=True)


def test_keyboard_undo_redo_and_new_game(page):
    open_play(page, RESEARCH)
    start = board_position(page)
    page.focus(square("a1"))
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")  # place on b2
    after_b2 = "....../.x..../....../....../....../...... 7 8 o"
    assert board_position(page) == after_b2
    page.keyboard.press("ArrowRight")
    page.keyboard.press(" ")  # place on c2: pushes b2 to a2
    after_c2 = "....../x.o.../....../....../....../...... 7 7 x"
    assert board_position(page) == after_c2
    page.keyboard.press("u")
    assert board_position(page) == after_b2
    page.keyboard.press("u")
    assert board_position(page) == start
    assert page.is_disabled("#undo")
    page.keyboard.press("r")
    page.click("#redo")
    assert board_position(page) == after_c2
    page.click("#undo")
    page.click(square("f6"))  # a new action drops the redo line
    assert page.is_disabled("#redo")
    page.click("#new-game")
    assert board_position(page) == start


def test_keyboard_move_with_legal_destinations(page):
    ruleset = "pop1-4x4-c3-blocked-continue-always-rook-nozero-nojump"
    pos = "x.../..../..../o... 2 2 x"
    open_play(page, ruleset, pos)
    page.focus(square("a1"))
    page.keyboard.press("Enter")  # pick up a1
    dests = page.eval_on_selector_all("#board .sq.dest", "els => els.map(e => e.dataset.square)")
    assert sorted(dests) == ["a2", "a3", "b1", "c1", "d1"]
    page.keyboard.press("Escape")
    assert page.eval_on_selector_all("#board .sq.dest", "els => els.length") == 0
    page.keyboard.press("Enter")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")  # a1-c1
    assert board_position(page) == "..x./..../..../o... 2 2 o"


def test_paste_load_and_copy_position(page):
    ruleset = "pop1-5x5-c8-blocked-continue-binempty-king-nozero-nojump"
    open_play(page, ruleset)
    text = "...../..o../...../...../..... 8 7 x"
    page.fill("#position-text", text)
    page.click("#position-form button[type=submit]")
    assert board_position(page) == text
    page.click(square("c3"))
    assert board_position(page) == "..o../...../..x../...../..... 7 7 o"
    # A malformed position is refused with one line and changes nothing.
    page.fill("#position-text", "...../..o../..z../...../..... 8 7 x")
    page.click("#position-form button[type=submit]")
    assert page.is_visible("#error")
    assert "unknown character 'z'" in page.text_content("#error")
    assert board_position(page) == "..o../...../..x../...../..... 7 7 o"
    # Pasting onto the page (not into a field) loads a position too.
    pasted = "x..../...../...../...../..... 7 8 o"
    page.evaluate(
        """text => { const data = new DataTransfer(); data.setData('text/plain', text);
                     document.getElementById('board').dispatchEvent(new ClipboardEvent('paste',
                       { clipboardData: data, bubbles: true })); }""",
        pasted,
    )
    assert board_position(page) == pasted
    # Copy puts the current position (not the rejected text) on the clipboard.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("#position-copy")
    assert page.evaluate("() => navigator.clipboard.readText()") == board_position(page)


def test_ruleset_fields_and_identifier(page):
    open_play(page, RESEARCH)
    page.select_option("#field-edge", "klein")
    page.select_option("#field-rows", "4")
    assert page.get_attribute("#board", "data-ruleset") == (
        "pop1-4x6-c8-klein-continue-binempty-king-nozero-nojump"
    )
    assert page.locator("#board .sq").count() == 24
    page.fill("#ruleset-id", "pop1-9x9-c8-torus-continue-binempty-king-nozero-nojump")
    page.click("#ruleset-form button[type=submit]")
    assert "board" in page.text_content("#ruleset-error")
    assert page.get_attribute("#board", "data-ruleset").startswith("pop1-4x6")
    page.click("#research")
    assert page.get_attribute("#board", "data-ruleset") == RESEARCH
    assert page.locator("#board .sq").count() == 36


RESULTS = [
    # (name, ruleset, position, actions, status, banner words)
    ("win", "pop1-5x5-c8-blocked-continue-binempty-king-nozero-nojump",
     "xx.../...../...../...../..... 6 8 x", ["c1"], "x", "x wins"),
    ("draw-lines", "pop1-5x5-c8-blocked-continue-binempty-king-nozero-nojump",
     "oo.../..o../...../...../xxx.. 5 5 x", ["c3"], "draw", "Both players"),
    ("ringout-loss", "pop1-5x5-c3-ringout-continue-binempty-king-nozero-nojump",
     "..o../...../...../...../..... 3 2 x", ["c2"], "x", "fewer than three"),
    ("ringout-draw", "pop1-5x5-c3-ringout-continue-binempty-king-nozero-nojump",
     ".xo../...../...../...../..... 2 2 x", ["c2"], "draw", "below three"),
    ("stuck-draw", "pop1-5x5-c3-blocked-draw-nomove-king-nozero-nojump",
     "o...o/...../...../...../o.... 3 0 x", ["c3"], "draw", "no legal action"),
    ("stuck-both", "pop1-5x5-c3-blocked-continue-nomove-king-nozero-nojump",
     "x.o.o/...../...../...../o...x 1 0 x", ["c3"], "draw", "Neither player"),
    ("repetition", "pop1-5x5-c3-blocked-continue-always-king-nozero-nojump",
     "x..../...../...../...../....o 2 2 x", ["a1-a2", "e5-e4", "a2-a1", "e4-e5"], "draw",
     "repetition"),
]  # fmt: skip


@pytest.mark.parametrize("case", RESULTS, ids=[r[0] for r in RESULTS])
def test_result_banners(page, screenshot_dir, case):
    name, ruleset, position, actions, result, words = case
    rs = Ruleset.from_id(ruleset)
    open_play(page, ruleset, position, animate=True)
    pos = Position.from_text(rs, position)
    for i, text in enumerate(actions):
        perform(page, rs, pos, Action.from_text(rs, text), style=i)
        pos = Position.from_text(rs, board_position(page))
    page.wait_for_timeout(450)  # let the pop animation finish before the picture
    assert status(page) == result
    assert page.is_visible("#banner")
    assert words in page.text_content("#banner")
    page.screenshot(path=str(screenshot_dir / f"play-result-{name}.png"), full_page=True)


def test_lines_are_highlighted(page):
    open_play(page, "pop1-5x5-c8-torus-continue-binempty-king-nozero-nojump",
              "...xx/...../...../...../..... 6 8 x")  # fmt: skip
    page.click(square("a1"))
    lit = page.eval_on_selector_all("#board .sq.in-line", "els => els.map(e => e.dataset.square)")
    assert sorted(lit) == ["a1", "d1", "e1"]


def test_the_pop_is_animated(page, screenshot_dir):
    ruleset = "pop1-5x5-c8-reincarnation-continue-binempty-king-nozero-nojump"
    # Four pushes that succeed and one (c4 -> c5) that fails and nudges.
    open_play(page, ruleset, "...../.o.o./...../.ooo./..o.. 8 2 x", animate=True)
    page.screenshot(path=str(screenshot_dir / "play-before-pop.png"))
    page.click(square("c3"))
    # Freeze every animation half-way so the picture shows the pop in flight.
    running = page.evaluate(
        """() => { const all = document.getAnimations();
                   all.forEach(a => { a.pause(); a.currentTime = 60; }); return all.length; }"""
    )
    assert running >= 6  # the landing checker, four pushed ones and the nudged one
    page.screenshot(path=str(screenshot_dir / "play-mid-pop.png"))
    page.evaluate("() => document.getAnimations().forEach(a => a.play())")
    wait_for_animations(page)
    expected = "o...o/...../..x../..o../o.o.o 7 2 o"
    assert board_position(page) == expected
    assert dom_board(page) == expected.split()[0]
    page.screenshot(path=str(screenshot_dir / "play-after-pop.png"))


def test_hash_selects_ruleset_and_position(page, screenshot_dir):
    ruleset = "pop1-6x8-c10-klein-continue-always-queen-zero-jump"
    position = "x......./..o...../......../.....x../......../o....... 8 8 o"
    open_play(page, ruleset, position)
    assert page.get_attribute("#board", "data-ruleset") == ruleset
    assert board_position(page) == position
    page.screenshot(path=str(screenshot_dir / "play-hash-klein.png"), full_page=True)
    page.goto(f"{page.site_url}play.html#ruleset=pop1-nonsense")
    page.wait_for_selector("#ruleset-error:not([hidden])")
    assert "ruleset" in page.text_content("#ruleset-error")
    assert page.get_attribute("#board", "data-ruleset") == RESEARCH


def test_drag_in_progress_shows_destinations(page, screenshot_dir):
    ruleset = "pop1-6x6-c3-torus-continue-binempty-queen-nozero-nojump"
    open_play(page, ruleset, "....../.x..../...o../....../x...o./.x..o. 0 0 x")
    x0, y0 = center(page, square("b2"))
    x1, y1 = center(page, square("e2"))
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x1, y1, steps=6)
    dests = page.eval_on_selector_all("#board .sq.dest", "els => els.map(e => e.dataset.square)")
    assert "e2" in dests and "b2" not in dests
    page.screenshot(path=str(screenshot_dir / "play-dragging.png"))
    page.mouse.up()
    assert board_position(page).endswith(" o")
    assert board_position(page).split("/")[1] == "....x."
