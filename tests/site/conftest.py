"""Fixtures for the site tests: a built site, a local static server, headless Chromium.

Browser tests use Debian's Chromium (never a downloaded browser) through Playwright for
Python; they are skipped, with the reason, when either is missing.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import threading
from pathlib import Path

import pytest

from harness.site.build import build_site

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "out" / "screenshots"


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    build_site(out)
    return out


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class names it so
        pass


@pytest.fixture(scope="session")
def site_url(built_site):
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def chromium():
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("Playwright for Python is not installed (pip install playwright)")
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(chromium, site_url):
    """A fresh page that fails the test on any script error or any request off the site."""
    context = chromium.new_context(viewport={"width": 1200, "height": 900})
    pg = context.new_page()
    problems: list[str] = []
    pg.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
    pg.on(
        "console",
        lambda msg: (
            problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None
        ),
    )

    def check_request(request):
        if not (request.url.startswith(site_url) or request.url.startswith("data:")):
            problems.append(f"request off the site: {request.url}")

    pg.on("request", check_request)
    pg.site_url = site_url
    yield pg
    context.close()
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
