"""The Replay, Results and Rules pages in headless Chromium, on a site built from a real verify
and seal run: the controls and keys, every replayed position against the Python engine, the
rules marked beside each step, and screenshots of each page."""

from __future__ import annotations

import json
import time

import pytest

from harness.rules import Action, Position, Ruleset, apply_action

pytestmark = pytest.mark.browser


def open_replay(page, ruleset: str) -> dict:
    page.goto(f"{page.site_url}replay-{ruleset}.html")
    page.wait_for_function("() => document.getElementById('replay-board').dataset.position")
    return json.loads(page.text_content("#replay-data"))


def step_index(page) -> int:
    return int(page.get_attribute("#replay-board", "data-step"))


def shown(page) -> str:
    return page.get_attribute("#replay-board", "data-position")


def python_line(ruleset: str, actions: list[str]):
    """(position text, outcome) after each action, by the reference engine alone."""
    rs = Ruleset.from_id(ruleset)
    pos, history = Position.initial(rs), []
    frames = [(pos.text(rs), None, None, pos)]
    for text in actions:
        action = Action.from_text(rs, text)
        turn = apply_action(rs, pos, action, history)
        frames.append((turn.next.text(rs), turn, action, pos))
        history.append(pos)
        pos = turn.next
    return rs, frames


def classes(page, cls: str) -> list[str]:
    return sorted(
        page.eval_on_selector_all(
            f"#replay-board .sq.{cls}", "els => els.map(e => e.dataset.square)"
        )
    )


def square_name(rs, sq: int) -> str:
    return f"{chr(97 + sq % rs.cols)}{sq // rs.cols + 1}"


def test_every_replayed_step_matches_the_python_engine(published_page, verified_run):
    page = published_page
    data = open_replay(page, verified_run.won)
    actions = [s["action"] for s in data["steps"]]
    rs, frames = python_line(verified_run.won, actions)
    # The page opens on the first position, the empty board.
    assert shown(page) == frames[0][0] and step_index(page) == 0
    for k in range(1, len(frames)):
        page.keyboard.press("ArrowRight")
        assert step_index(page) == k
        text, turn, action, before = frames[k]
        assert shown(page) == text, f"ply {k}"
        # The square played is circled; the squares whose content changed are outlined.
        assert classes(page, "clicked") == [square_name(rs, action.dst)]
        after = Position.from_text(rs, text)
        changed = [
            square_name(rs, sq)
            for sq in range(rs.rows * rs.cols)
            if (before.board[0] >> sq & 1, before.board[1] >> sq & 1)
            != (after.board[0] >> sq & 1, after.board[1] >> sq & 1)
        ]
        assert classes(page, "changed") == sorted(changed), f"ply {k}"
        # Beside the step: the rule branches, the same as the Python engine reports.
        listed = page.eval_on_selector_all(
            "#rp-branches li", "els => els.map(e => e.dataset.branch)"
        )
        assert sorted(listed) == sorted(turn.branches), f"ply {k}"
        marked = page.eval_on_selector_all(".rule.hit", "els => els.map(e => e.dataset.rule)")
        expected = sorted({data["branch_rule"][b] for b in turn.branches})
        assert sorted(marked) == expected, f"ply {k}"
        chips = page.eval_on_selector_all(
            ".rule .chip.hit", "els => els.map(e => e.dataset.branch)"
        )
        assert sorted(chips) == sorted(turn.branches)
    winner = verified_run.manifest["certificate"]["winner"]
    assert page.get_attribute("#rp-status", "data-status") == winner
    assert frames[-1][1].result == winner
    assert page.is_disabled("#rp-next") and page.is_disabled("#rp-last")
    assert page.is_hidden("#rp-error")


def test_controls_keys_and_speeds(published_page, verified_run, screenshot_dir):
    page = published_page
    data = open_replay(page, verified_run.won)
    last = len(data["steps"])
    assert page.is_disabled("#rp-prev") and page.is_disabled("#rp-first")
    page.click("#rp-next")
    page.click("#rp-next")
    assert step_index(page) == 2
    page.click("#rp-prev")
    assert step_index(page) == 1
    page.click("#rp-last")
    assert step_index(page) == last
    page.click("#rp-first")
    assert step_index(page) == 0
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert step_index(page) == 1
    page.click(f'#rp-line button[data-goto="{last - 1}"]')
    assert step_index(page) == last - 1
    page.screenshot(path=str(screenshot_dir / "replay-step.png"), full_page=False)
    page.click("#rp-first")

    # Space plays at the chosen speed and pauses; Play at the end starts again.
    page.click('.speed[data-speed="12"]')
    assert page.get_attribute('.speed[data-speed="12"]', "aria-checked") == "true"
    assert page.get_attribute('.speed[data-speed="2"]', "aria-checked") == "false"
    page.focus("body")
    start = time.monotonic()
    page.keyboard.press(" ")
    assert page.text_content("#rp-play") == "Pause"
    page.wait_for_function(
        f"() => document.getElementById('replay-board').dataset.step === '{last}'"
    )
    elapsed = time.monotonic() - start
    # 12 steps/s: the whole line in well under the 0.5 s per step that 2 steps/s would take.
    assert elapsed < last * 0.5, f"{last} steps took {elapsed:.2f} s at 12 steps/s"
    page.wait_for_function("() => document.getElementById('rp-play').textContent === 'Play'")

    page.click('.speed[data-speed="2"]')
    start = time.monotonic()
    page.click("#rp-play")  # at the end: starts again from the empty board
    page.wait_for_timeout(700)
    page.keyboard.press(" ")  # pause
    paused = step_index(page)
    elapsed = time.monotonic() - start
    # Timers may fire late on a busy machine, never early: at most 2 steps per second.
    assert 1 <= paused <= int(elapsed * 2) + 1, f"2 steps/s gave {paused} in {elapsed:.2f} s"
    page.wait_for_timeout(700)
    assert step_index(page) == paused, "Space paused the replay"

    page.click('.speed[data-speed="5"]')
    assert page.get_attribute('.speed[data-speed="5"]', "aria-checked") == "true"
    # Keys do nothing while the board is scrolled out of view.
    page.eval_on_selector("#check", "el => el.scrollIntoView()")
    page.keyboard.press("ArrowRight")
    assert step_index(page) == paused


def test_screenshots_of_each_page(published_page, verified_run, screenshot_dir):
    page = published_page
    page.goto(f"{page.site_url}index.html")
    page.screenshot(path=str(screenshot_dir / "index.png"), full_page=True)
    page.goto(f"{page.site_url}results.html")
    assert page.locator("#results-table tbody tr").count() == 2  # published only
    page.screenshot(path=str(screenshot_dir / "results.png"), full_page=True)
    page.goto(f"{page.site_url}rules.html")
    page.screenshot(path=str(screenshot_dir / "rules.png"), full_page=True)
    page.locator(".edge-grid").screenshot(path=str(screenshot_dir / "rules-edges.png"))
    open_replay(page, verified_run.won)
    page.click("#rp-last")
    page.screenshot(path=str(screenshot_dir / "replay-full.png"), full_page=True)
    page.locator("#proof").screenshot(path=str(screenshot_dir / "replay-proof.png"))
    page.locator("#check").screenshot(path=str(screenshot_dir / "replay-check.png"))
    # Following a branch link lands on its rule, which is marked.
    link = page.locator("#rp-branches a").first
    rule = link.get_attribute("href")
    link.click()
    assert page.evaluate("() => location.hash") == rule
    assert "hit" in page.get_attribute(rule, "class")
    page.locator(rule).screenshot(path=str(screenshot_dir / "replay-rule.png"))
