"""The site builder and ``python -m harness site``: output, atomic replacement, bad input."""

from __future__ import annotations

import argparse
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.rules import RESEARCH_RULESET
from harness.site import build as build_mod
from harness.site.build import MARKER, build_site
from harness.site.cli import register_site

STATIC = Path(build_mod.__file__).parent / "static"


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.attrs: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.attrs.append((tag, dict(attrs)))


def _elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    c = _Collector()
    c.feed(html)
    return c.attrs


def test_build_writes_pages_and_engine(tmp_path):
    out = tmp_path / "site"
    files = build_site(out)
    names = {p.relative_to(out).as_posix() for p in files}
    assert {"index.html", "play.html", "static/pop.js", "static/play.js", MARKER} <= names
    assert (out / "static" / "pop.js").read_bytes() == (STATIC / "pop.js").read_bytes()
    index = (out / "index.html").read_text()
    assert 'href="play.html"' in index


def test_play_page_keeps_the_test_contract(tmp_path):
    build_site(tmp_path / "site")
    elements = _elements((tmp_path / "site" / "play.html").read_text())
    by_id = {a.get("id"): a for _, a in elements if a.get("id")}
    assert "data-ruleset" in by_id["board"] and "data-position" in by_id["board"]
    assert "data-status" in by_id["status"]
    assert {a.get("data-bin") for _, a in elements if "data-bin" in a} == {"x", "o"}
    assert by_id["play"]["data-default-ruleset"] == RESEARCH_RULESET.id


def test_nothing_is_fetched_from_the_network(tmp_path):
    out = tmp_path / "site"
    build_site(out)
    remote = re.compile(r"""(?:src|href|import|url)\s*\(?\s*=?\s*["']?(?:https?:)?//""", re.I)
    for path in out.rglob("*"):
        if path.suffix in {".html", ".js", ".css"}:
            text = path.read_text()
            assert not remote.search(text), f"{path.name} refers to a remote resource"
    for tag, attrs in _elements((out / "play.html").read_text()):
        for key in ("src", "href"):
            value = attrs.get(key)
            if value:
                assert not re.match(r"^(https?:)?//", value), f"<{tag} {key}={value}>"


def test_js_engine_defaults_match_python():
    text = (STATIC / "pop.js").read_text()
    found = re.search(r'DEFAULT_RULESET_ID = "([^"]+)"', text)
    assert found and found.group(1) == RESEARCH_RULESET.id


def test_rebuild_replaces_an_earlier_build(tmp_path):
    out = tmp_path / "site"
    build_site(out)
    (out / "stale.html").write_text("old")
    build_site(out)
    assert not (out / "stale.html").exists()
    assert (out / "play.html").exists()
    # No temporary folders are left beside the site.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_refuses_a_foreign_folder_and_a_file(tmp_path):
    foreign = tmp_path / "docs"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(HarnessError, match="not built by this command"):
        build_site(foreign)
    assert (foreign / "notes.txt").read_text() == "mine"
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(HarnessError, match="not a folder"):
        build_site(a_file)


def test_failed_render_leaves_the_old_site(tmp_path, monkeypatch):
    out = tmp_path / "site"
    build_site(out)
    before = (out / "play.html").read_text()
    broken = build_mod.Page("play", "play.html", "Play", "missing.html.j2")
    with pytest.raises(HarnessError, match="missing.html.j2"):
        build_site(out, pages=(broken,))
    assert (out / "play.html").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_cli_builds_the_site(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    register_site(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["site", "--out", str(tmp_path / "s")])
    assert args.func(args) == 0
    assert (tmp_path / "s" / "play.html").exists()
    assert "wrote" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        parser.parse_args(["site"])  # --out is required
