"""The site as a visitor meets it, in headless Chromium, built from the repository's own
publication (``manifests/``, nothing re-run): every page at a desktop (1280×800) and a phone
(390×844) width without sideways scrolling, zero axe-core violations on every page, the
replay's first position, the rules' code side by side, the focus ring, the marks
on pushed checkers, and a click made during an animation.

axe-core comes from npm (``package.json``, ``npm ci``); the tests that need it skip, saying
so, when ``node_modules/axe-core`` is missing. Screenshots of every page at both widths go
to ``out/screenshots/`` (``NAME-1280.png``, ``NAME-390.png``, full page; ``NAME-390-top.png``
the first screen), and the axe counts per page to ``out/screenshots/axe.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest

from harness.rules import Action, Position, Ruleset, apply_action, legal_actions
from harness.site.artifacts import Sources
from harness.site.build import build_site

from .conftest import CHROMIUM_ARGS, REPO, SCREENSHOTS, _page, _serve  # noqa: F401

pytestmark = pytest.mark.browser

AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = {"desktop": (1280, 800), "phone": (390, 844)}
PUBLISHED = sorted(p.stem for p in (REPO / "manifests").glob("*.yaml"))
RESEARCH = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"
LOADED = "id => document.getElementById('board').dataset.ruleset === id"


@pytest.fixture(scope="module")
def repo_site(tmp_path_factory) -> Path:
    """The site as a fresh clone builds it: from manifests/ alone."""
    out = tmp_path_factory.mktemp("repo-site") / "site"
    build_site(out, sources=Sources(manifests_dir=REPO / "manifests"))
    return out


@pytest.fixture(scope="module")
def repo_url(repo_site):
    yield from _serve(repo_site)


@pytest.fixture
def visitor(chromium, repo_url, request):
    """A page at the width named by the test's ``width`` parameter (desktop by default)."""
    width = getattr(request, "param", "desktop")
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h})
    pg = context.new_page()
    problems: list[str] = []
    pg.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
    pg.site_url = repo_url
    pg.width = w
    yield pg
    context.close()
    assert not problems, "\n".join(problems)


def pages(site: Path) -> list[str]:
    return sorted(p.name for p in site.glob("*.html"))


def test_every_published_result_has_its_replay(repo_site):
    assert PUBLISHED, "nothing published in manifests/"
    for ruleset in PUBLISHED:
        html = (repo_site / f"replay-{ruleset}.html").read_text()
        assert 'id="replay-data"' in html, f"{ruleset}: no replay"
        assert "cannot be shown" not in html
    assert (repo_site / "rules-exact.html").is_file()


@pytest.mark.parametrize("visitor", ["desktop", "phone"], indirect=True)
def test_every_page_fits_the_width_and_has_no_axe_violation(visitor, repo_site):
    if not AXE.is_file():
        pytest.skip("axe-core is not installed: run `npm ci` (package.json pins it)")
    page = visitor
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    axe = AXE.read_text(encoding="utf-8")
    counts, wide = {}, {}
    for name in pages(repo_site):
        page.goto(page.site_url + name)
        page.wait_for_load_state("load")
        page.wait_for_timeout(200)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        if width > page.width:
            wide[name] = width
        stem = name.removesuffix(".html")
        page.screenshot(path=str(SCREENSHOTS / f"{stem}-{page.width}.png"), full_page=True)
        page.screenshot(path=str(SCREENSHOTS / f"{stem}-{page.width}-top.png"))
        page.add_script_tag(content=axe)
        found = page.evaluate(
            """async () => (await axe.run(document)).violations.map(v =>
                 ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' '))}))"""
        )
        counts[name] = found
    record = SCREENSHOTS / "axe.json"
    old = json.loads(record.read_text()) if record.is_file() else {}
    old[str(page.width)] = {name: len(v) for name, v in counts.items()}
    record.write_text(json.dumps(old, indent=1, sort_keys=True))
    assert not wide, f"pages wider than {page.width} px: {wide}"
    bad = {name: v for name, v in counts.items() if v}
    assert not bad, json.dumps(bad, indent=1)[:3000]


@pytest.mark.parametrize("visitor", ["desktop", "phone"], indirect=True)
def test_python_and_lean_side_by_side_on_a_desktop(visitor):
    page = visitor
    page.goto(f"{page.site_url}replay-{PUBLISHED[0]}.html")
    boxes = page.evaluate(
        """() => { const r = document.querySelector('.rule');
             const b = s => r.querySelector(s).getBoundingClientRect();
             return [b('.code-python'), b('.code-lean')].map(x => [x.left, x.top]); }"""
    )
    (py_left, py_top), (lean_left, lean_top) = boxes
    if page.width >= 900:
        assert py_top == lean_top and lean_left > py_left, boxes
    else:
        assert lean_top > py_top and lean_left == py_left, boxes


@pytest.mark.parametrize("visitor", ["desktop", "phone"], indirect=True)
def test_the_replay_opens_on_the_first_position_with_the_board_in_view(visitor):
    """At 1280x800 and 390x844: the empty board first, back controls off and forward on,
    the board above the fold, the rules' code folded until asked for."""
    page = visitor
    ruleset = PUBLISHED[0]
    page.goto(f"{page.site_url}replay-{ruleset}.html")
    page.wait_for_function("() => document.getElementById('replay-board').dataset.position")
    data = json.loads(page.text_content("#replay-data"))
    board = "#replay-board"
    assert page.get_attribute(board, "data-step") == "0"
    rs = Ruleset.from_id(ruleset)
    assert page.get_attribute(board, "data-position") == Position.initial(rs).text(rs)
    assert page.is_disabled("#rp-first") and page.is_disabled("#rp-prev")
    assert page.is_enabled("#rp-next") and page.is_enabled("#rp-last")
    box = page.locator(board).bounding_box()
    if page.width >= 900:  # the whole board in the first screen of a desktop
        assert box["y"] >= 0 and box["y"] + box["height"] <= 800, box
    else:  # on a phone, the board starts in the first screen
        assert 0 <= box["y"] < 844, box
    page.click("#rp-next")
    assert page.get_attribute(board, "data-step") == "1"
    assert page.get_attribute(board, "data-position") == data["steps"][0]["after"]
    assert page.is_enabled("#rp-prev")
    page.click("#rp-last")
    assert page.is_disabled("#rp-next") and page.is_disabled("#rp-last")
    assert "end of the line" in page.text_content("#rp-counter")
    page.click("#rp-play")  # from the end: the first position again
    assert page.get_attribute(board, "data-step") in ("0", "1")
    page.keyboard.press(" ")
    code = page.locator("#rule-list pre").first
    assert not code.is_visible()
    page.locator("#rule-list details.code-fold > summary").first.click()
    assert code.is_visible()


@pytest.mark.parametrize("visitor", ["desktop", "phone"], indirect=True)
def test_a_bad_ruleset_on_play_is_said_beside_its_field(visitor):
    page = visitor
    page.goto(f"{page.site_url}play.html#ruleset={RESEARCH}")
    page.wait_for_function(LOADED, arg=RESEARCH)
    field = page.locator("#ruleset-id")
    field.scroll_into_view_if_needed()
    field.fill("pop1-4x4-c8-moebius-continue-binempty-king-nozero-nojump")
    page.click("#ruleset-form button[type=submit]")
    error = page.locator("#ruleset-error")
    assert error.is_visible() and "moebius" in error.text_content()
    assert field.get_attribute("aria-invalid") == "true"
    f, e = field.bounding_box(), error.bounding_box()
    assert 0 <= e["y"] - (f["y"] + f["height"]) < 80, (f, e)  # right under the field
    viewport = page.viewport_size["height"]
    assert e["y"] + e["height"] <= viewport, (e, viewport)  # and on screen
    assert page.get_attribute("#board", "data-ruleset") == RESEARCH  # the game goes on
    field.fill(RESEARCH.replace("c8", "c4"))
    page.click("#ruleset-form button[type=submit]")
    assert not error.is_visible() and field.get_attribute("aria-invalid") is None


def test_the_home_page_says_what_is_proven_and_shows_every_value(visitor):
    page = visitor
    page.goto(f"{page.site_url}index.html")
    text = page.text_content("#proven-today + .proven-today")
    assert f"{len(PUBLISHED)} results are published" in text
    assert "Lean kernel has checked 0" in text or "Lean kernel checked all" in text
    cells = page.locator("#index-results td[data-ruleset]").all()
    shown = {c.get_attribute("data-ruleset"): c.get_attribute("data-value") for c in cells}
    assert set(PUBLISHED) <= set(shown)
    values = [shown[r] for r in PUBLISHED]
    assert set(values) == {"x", "o", "draw"}
    draw = page.locator("#index-results td[data-value=draw] a").first
    assert draw.text_content().startswith("draw")
    assert draw.get_attribute("href").startswith("replay-")


def _pushed_by_python(rs: Ruleset, pos: Position, action: Action) -> list[str]:
    out = apply_action(rs, pos, action, [])
    after = out.next
    return sorted(
        f"{chr(97 + p.dst % rs.cols)}{p.dst // rs.cols + 1}"
        for p in out.pops
        if p.kind == "push" and (after.board[0] | after.board[1]) >> p.dst & 1
    )


def test_pushed_checkers_stay_marked_after_the_pop(visitor):
    page = visitor
    ruleset = "pop1-5x5-c8-reincarnation-continue-binempty-king-nozero-nojump"
    start = "...../.o.o./...../.ooo./..o.. 8 2 x"
    rs = Ruleset.from_id(ruleset)
    expected = _pushed_by_python(rs, Position.from_text(rs, start), Action.from_text(rs, "c3"))
    assert expected == ["a1", "a5", "e1", "e5"]
    page.goto(
        f"{page.site_url}play.html#ruleset={quote(ruleset, safe='')}"
        f"&position={quote(start, safe='')}"
    )
    page.wait_for_function(
        "id => document.getElementById('board').dataset.ruleset === id", arg=ruleset
    )
    page.click('#board [data-square="c3"]')
    page.wait_for_function("() => document.getAnimations().length === 0", timeout=5000)
    marked = page.eval_on_selector_all(
        "#board .sq.pushed", "els => els.map(e => e.dataset.square).sort()"
    )
    assert marked == expected
    page.screenshot(path=str(SCREENSHOTS / "play-pushed-marks.png"))
    # And on the replay: the marks are the pops of the step shown.
    page.goto(f"{page.site_url}replay-{PUBLISHED[0]}.html")
    data = json.loads(page.text_content("#replay-data"))
    rs = Ruleset.from_id(data["ruleset"])
    for k, step in enumerate(data["steps"], start=1):
        page.click("#rp-next")
        want = _pushed_by_python(
            rs, Position.from_text(rs, step["before"]), Action.from_text(rs, step["action"])
        )
        got = page.eval_on_selector_all(
            "#replay-board .sq.pushed", "els => els.map(e => e.dataset.square).sort()"
        )
        assert got == want, f"ply {k}"


def test_a_click_during_the_pop_animation_is_applied(visitor):
    """The defect from the issue: o's placement on d5, clicked while x's pop still animated,
    was lost. Animations are slowed tenfold so the click surely lands inside one."""
    page = visitor
    start = "..o..o/o...x./..o.x./x...../..o.x./....x. 3 3 x"
    rs = Ruleset.from_id(RESEARCH)
    pos = Position.from_text(rs, start)
    d5 = Action.from_text(rs, "d5")
    # x's first placement that pops something and leaves d5 free for o.
    for action in legal_actions(rs, pos):
        out = apply_action(rs, pos, action, [])
        if out.result is None and out.pops and d5 in legal_actions(rs, out.next):
            break
    else:
        pytest.fail("no suitable placement for x")
    expected = apply_action(rs, out.next, d5, [pos]).next.text(rs)
    page.goto(
        f"{page.site_url}play.html#ruleset={quote(RESEARCH, safe='')}"
        f"&position={quote(start, safe='')}"
    )
    page.wait_for_function(
        "id => document.getElementById('board').dataset.ruleset === id", arg=RESEARCH
    )
    assert page.is_checked("#animate")
    cdp = page.context.new_cdp_session(page)
    cdp.send("Animation.enable")
    cdp.send("Animation.setPlaybackRate", {"playbackRate": 0.1})
    page.click(f'#board [data-square="{action.text(rs)}"]')
    running = page.evaluate("() => document.getAnimations().length")
    assert running > 0, "the pop is animated"
    # Watch the board from the pointerdown to the click: a redraw in between (what lost the
    # click) shows up as elements added or removed.
    page.evaluate(
        """() => {
          window.__changes = null;
          const board = document.getElementById('board');
          const seen = new MutationObserver((m) => { window.__changes += m.length; });
          window.addEventListener('pointerdown', () => {
            window.__changes = 0;
            seen.observe(board, {childList: true, subtree: true});
          }, {capture: true, once: true});
          window.addEventListener('click', () => {
            seen.takeRecords().forEach(() => window.__changes++);
            seen.disconnect();
          }, {capture: true, once: true});
        }"""
    )
    box = page.locator('#board [data-square="d5"]').bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    assert page.evaluate("() => window.__changes") == 0, "the board was redrawn mid-click"
    assert page.get_attribute("#board", "data-position") == expected


def _marker_colours(page) -> set[str]:
    """Every colour the board markers use (borders, outlines, shadows, backgrounds)."""
    return set(
        page.evaluate(
            """() => {
              const out = new Set();
              const grab = (style) => {
                for (const p of ['borderTopColor', 'outlineColor', 'backgroundColor']) {
                  const v = style[p]; if (v && v !== 'rgba(0, 0, 0, 0)') out.add(v);
                }
                const shadow = style.boxShadow || '';
                for (const m of shadow.matchAll(/rgba?\\([^)]*\\)/g)) out.add(m[0]);
              };
              const probe = document.createElement('div');
              probe.className = 'board'; document.body.append(probe);
              const row = document.createElement('div'); row.className = 'board-row';
              probe.append(row);
              for (const cls of ['landed', 'vacated', 'selected', 'dest', 'in-line', 'pushed',
                                 'changed', 'clicked', 'from', 'hover']) {
                const sq = document.createElement('div'); sq.className = 'sq ' + cls;
                row.append(sq);
                grab(getComputedStyle(sq));
                grab(getComputedStyle(sq, '::after'));
                grab(getComputedStyle(sq, '::before'));
              }
              probe.remove();
              return [...out];
            }"""
        )
    )


def test_keyboard_focus_is_visible_and_unlike_any_marker(visitor):
    page = visitor
    page.goto(f"{page.site_url}play.html")
    page.wait_for_function("() => document.getElementById('board').dataset.ruleset")
    page.focus('#board .sq[tabindex="0"]')
    page.keyboard.press("ArrowRight")  # a keyboard move: :focus-visible applies
    ring = page.evaluate(
        """() => { const s = getComputedStyle(document.activeElement);
                   return [document.activeElement.matches(':focus-visible'), s.outlineStyle,
                           s.outlineWidth, s.outlineColor]; }"""
    )
    visible, style, width, colour = ring
    assert visible and style == "solid" and float(width.removesuffix("px")) >= 3
    markers = _marker_colours(page)
    assert colour not in markers, (colour, markers)
    page.screenshot(path=str(SCREENSHOTS / "play-focus.png"))
    # On the replay page the same ring, on its buttons.
    page.goto(f"{page.site_url}replay-{PUBLISHED[0]}.html")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    other = page.evaluate(
        "() => [document.activeElement.matches(':focus-visible'),"
        " getComputedStyle(document.activeElement).outlineColor]"
    )
    assert other == [True, colour]
