"""Fixtures for the site tests: a built site, a local static server, headless Chromium.

Browser tests use Debian's Chromium (never a downloaded browser) through Playwright for
Python; they are skipped, with the reason, when either is missing.

``verified_run`` makes real artifacts the way a user would, with the harness's own commands
in a temporary folder: a signing key, ``verify`` of a tiny research-family ruleset (x wins;
seconds), ``seal`` of it, ``verify`` of a drawn one (certified by two non-win sets) and one
with a 1 s budget (open, leaving the signed record of an open result). ``published_site``
is the site built from them.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harness.site.build import Sources, build_site
from tests.harness_cli import run_harness

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


WON = "pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"  # x wins in 7 plies
DRAWN = "pop1-3x4-c3-torus-continue-binempty-king-nozero-nojump"  # a draw, certified
FAILED_LOCAL = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"  # the stand-in's
OPENED = "pop1-6x6-c8-torus-continue-binempty-king-nozero-nojump"  # not run here


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    build_site(out)
    return out


@dataclass(frozen=True)
class VerifiedRun:
    root: Path
    key: Path  # private key (outside any git tree)
    public: Path
    work: Path  # verify --work
    manifests: Path
    dist: Path
    won: str
    drawn: str
    opened: str

    @property
    def manifest(self) -> dict:
        return yaml.safe_load((self.manifests / f"{self.won}.yaml").read_text())

    @property
    def archive(self) -> Path:
        return self.dist / f"{self.won}-{self.manifest['certificate']['hash'][:12]}.zip"

    def sources(self, **changes) -> Sources:
        from harness.manifest.keys import load_public

        fields = {
            "from_dir": self.work,
            "manifests_dir": self.manifests,
            "dist_dir": self.dist,
            "public_key": load_public(self.public),
        }
        fields.update(changes)
        return Sources(**fields)


def _harness(*args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    done = run_harness(*args, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.returncode in ok, f"harness {' '.join(args)}: exit {done.returncode}\n{done.stderr}"
    return done


@pytest.fixture(scope="session")
def verified_run(tmp_path_factory) -> VerifiedRun:
    root = tmp_path_factory.mktemp("artifacts")
    key = root / "keys" / "signing-key.pem"
    run = VerifiedRun(
        root, key, Path(f"{key}.pub"), root / "verify", root / "manifests", root / "dist",
        WON, DRAWN, OPENED,
    )  # fmt: skip
    _harness("keys", "generate", "--key", str(key))
    # The test key is the project key of these manifests: its public half in keys/.
    from harness.manifest.keys import load_private
    from harness.manifest.published import key_file_name

    (run.manifests / "keys").mkdir(parents=True)
    listed = run.manifests / "keys" / key_file_name(load_private(key).keyid)
    listed.write_bytes(Path(f"{key}.pub").read_bytes())
    common = ["--work", str(run.work), "--manifests", str(run.manifests), "--key", str(key)]
    common.append("--publish")
    # Exit 3: everything passed but Lean could not run here; 0 where a toolchain exists.
    _harness("verify", WON, *common, ok=(0, 3))
    # A draw is certified too (non-win sets), and published; it has no line to replay.
    _harness("verify", DRAWN, *common, ok=(0, 3))
    # A local run that failed (stand-in stages told to fail at certify), never published.
    from harness.manifest.keys import load_private as _load
    from harness.verify.pipeline import Pipeline
    from tests.verify.standin import RULESET as FAILED
    from tests.verify.standin import StandIn, tiny_lean_project

    Pipeline(
        FAILED,
        _load(key),
        runner=StandIn(fail="certify"),
        work_root=run.work,
        manifests=root / "unused",
        lean_project=tiny_lean_project(root / "lean-src"),
        say=lambda line: None,
    ).run()
    _harness(
        "seal", WON, "--work", str(run.work / WON),
        "--key", str(key), "--out", str(run.archive),
    )  # fmt: skip
    return run


@pytest.fixture(scope="session")
def published_site(tmp_path_factory, verified_run) -> Path:
    out = tmp_path_factory.mktemp("published") / "site"
    build_site(out, sources=verified_run.sources())
    return out


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class names it so
        pass


def _serve(folder: Path):
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def site_url(built_site):
    yield from _serve(built_site)


@pytest.fixture(scope="session")
def published_url(published_site):
    yield from _serve(published_site)


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


def _page(chromium, url):
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
        if not (request.url.startswith(url) or request.url.startswith("data:")):
            problems.append(f"request off the site: {request.url}")

    pg.on("request", check_request)
    pg.site_url = url
    yield pg
    context.close()
    assert not problems, "\n".join(problems)


@pytest.fixture
def page(chromium, site_url):
    """The site built without artifacts (play, rules, an empty results table)."""
    yield from _page(chromium, site_url)


@pytest.fixture
def published_page(chromium, published_url):
    """The site built from ``verified_run``: results, a replay, proof and archive."""
    yield from _page(chromium, published_url)


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
