"""Results, Replay and Rules pages built from real artifacts (no browser): every figure comes from
the signed manifest, the replay line from the certificate, the code from the sources; missing
or altered artifacts are reported on the page, never papered over."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from html import escape as html_escape
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from harness.cert.format import read_index, read_shard
from harness.errors import HarnessError
from harness.manifest.keys import generate
from harness.rules import Action, Position, Ruleset, apply_action, legal_actions
from harness.rules.corpus import BRANCHES
from harness.rules.symmetry import canonical
from harness.site import codeview
from harness.site.build import build_site
from harness.site.diagrams import CELL, MARGIN, edge_diagram

from .conftest import REPO

ENGINE = (REPO / "harness/rules/engine.py").read_text()
GEOMETRY = (REPO / "harness/rules/geometry.py").read_text()
LEAN = (REPO / "lean/Pop/Rules.lean").read_text()


class _Tree(HTMLParser):
    """Element attributes and the text under each id'd element."""

    def __init__(self):
        super().__init__()
        self.elements: list[tuple[str, dict]] = []
        self.text_by_id: dict[str, str] = {}
        self._open: list[str | None] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag not in ("br", "img", "input", "meta", "link", "rect", "path", "circle", "line"):
            self._open.append(a.get("id"))
            if a.get("id"):
                self.text_by_id.setdefault(a["id"], "")

    def handle_endtag(self, tag):
        if self._open:
            self._open.pop()

    def handle_data(self, data):
        for ident in self._open:
            if ident:
                self.text_by_id[ident] += data


def parse(path: Path) -> _Tree:
    t = _Tree()
    t.feed(path.read_text(encoding="utf-8"))
    return t


def replay_file(site: Path, ruleset: str) -> Path:
    return site / f"replay-{ruleset}.html"


def replay_data(site: Path, ruleset: str) -> dict:
    html = replay_file(site, ruleset).read_text()
    m = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S)
    assert m, "the replay page embeds its line"
    return json.loads(m.group(1))


# --- the results table -----------------------------------------------------------------------


def _rows(html_path: Path) -> dict[tuple[str, str], dict]:
    tree = parse(html_path)
    return {
        (a["data-ruleset"], a["data-origin"]): a
        for t, a in tree.elements
        if t == "tr" and "data-ruleset" in a
    }


def _row(html: str, ruleset: str, origin: str) -> str:
    row = html[html.index(f'data-ruleset="{ruleset}" data-status') :]
    while f'data-origin="{origin}"' not in row[: row.index(">")]:
        row = row[1:]
        row = row[row.index(f'data-ruleset="{ruleset}" data-status') :]
    return row[: row.index("</tr>")]


def test_results_table_reads_the_manifests(published_site, verified_run):
    """By default only what is published: the failed local run is not listed."""
    doc = verified_run.manifest
    rows = _rows(published_site / "results.html")
    assert set(rows) == {(verified_run.won, "published"), (verified_run.drawn, "published")}
    expected = {"PASS": "proved", "INCOMPLETE": "certified"}[doc["verdict"]]
    assert rows[(verified_run.won, "published")]["data-status"] == expected
    html = (published_site / "results.html").read_text()
    row = _row(html, verified_run.won, "published")
    assert f'<span data-field="plies">{doc["result"]["plies"]}</span>' in row
    assert f'<span data-field="entries">{doc["certificate"]["entries"]}</span>' in row
    assert f"replay-{verified_run.won}.html" in row and "local run" not in row
    # Manifests are published beside the pages, byte for byte, with the publisher key.
    copied = published_site / "results" / verified_run.won / "manifest.yaml"
    assert copied.read_bytes() == (verified_run.manifests / f"{verified_run.won}.yaml").read_bytes()
    keys = list((published_site / "keys").glob("*.pub"))
    assert [k.read_bytes() for k in keys] == [verified_run.public.read_bytes()]
    assert f'href="keys/{keys[0].name}"' in html


def test_local_runs_are_shown_only_when_asked_and_marked(tmp_path, verified_run):
    out = tmp_path / "site"
    build_site(out, sources=verified_run.sources(include_local=True))
    rows = _rows(out / "results.html")
    from .conftest import FAILED_LOCAL

    assert set(rows) == {
        (verified_run.won, "published"),
        (verified_run.drawn, "published"),
        (verified_run.won, "local"),
        (verified_run.drawn, "local"),
        (FAILED_LOCAL, "local"),
    }
    assert rows[(FAILED_LOCAL, "local")]["data-status"] == "open"
    html = (out / "results.html").read_text()
    # The open row says where the run stopped, as its signed record does.
    failed = yaml.safe_load(
        (verified_run.work / f"{FAILED_LOCAL}.partial" / "manifest.yaml").read_text()
    )
    step = next(s for s in failed["steps"] if s["status"] == "failed")
    open_row = _row(html, FAILED_LOCAL, "local")
    assert f"<code>{step['step']}</code>" in open_row
    assert html_escape(step["detail"])[:40] in open_row
    assert "Replay" not in open_row and "local run" in open_row
    local_row = _row(html, verified_run.won, "local")
    assert "local run" in local_row and f"replay-local-{verified_run.won}.html" in local_row
    local_page = out / f"replay-local-{verified_run.won}.html"
    assert "not a published result" in parse(local_page).text_by_id["local-note"]
    index = (out / "index.html").read_text()
    assert index.count("local run") == 3
    # A published draw has its page, with the drawn line read from its archive.
    draw = parse(replay_file(out, verified_run.drawn)).text_by_id
    assert "A draw" in draw["lead"] and replay_data(out, verified_run.drawn)["steps"]


def test_nothing_published_says_so(built_site):
    tree = parse(built_site / "results.html")
    assert "no-results" in tree.text_by_id
    assert not list(built_site.glob("replay-*.html"))


# --- the replay line -------------------------------------------------------------------------


def _certificate(run_dir: Path, rs: Ruleset) -> dict[Position, tuple[Action, int]]:
    """The certificate's entries by canonical image, read here independently of the site."""
    out = {}
    index = read_index(run_dir / "certificate")
    for shard in index["shards"]:
        for e in read_shard(run_dir / "certificate" / shard["file"]):
            image, sym = canonical(rs, Position.from_text(rs, e.position))
            out[image] = (sym.action(Action.from_text(rs, e.action)), e.rank)
    return out


def _entry(entries, rs, pos):
    image, sym = canonical(rs, pos)
    if image not in entries:
        return None
    action, rank = entries[image]
    return sym.inverse().action(action), rank


def test_replay_line_follows_the_certificate(published_site, verified_run):
    rs = Ruleset.from_id(verified_run.won)
    data = replay_data(published_site, rs.id)
    entries = _certificate(verified_run.work / rs.id, rs)
    winner = verified_run.manifest["certificate"]["winner"]
    assert data["winner"] == winner
    pos, history = Position.initial(rs), []
    assert data["steps"], "a won ruleset has a line"
    for step in data["steps"]:
        assert step["before"] == pos.text(rs)
        action = Action.from_text(rs, step["action"])
        if "xo"[pos.turn] == winner:
            certified, rank = _entry(entries, rs, pos)
            assert action == certified, f"ply {step['ply']}: not the certificate's action"
            assert step["rank"] == rank
        else:
            # The longest defence: no reply leads to a higher-ranked entry.
            ranks = []
            for reply in legal_actions(rs, pos):
                out = apply_action(rs, pos, reply, history)
                ranks.append(0 if out.result else _entry(entries, rs, out.next)[1])
            chosen = apply_action(rs, pos, action, history)
            got = 0 if chosen.result else _entry(entries, rs, chosen.next)[1]
            assert got == max(ranks), f"ply {step['ply']}: a longer defence exists"
        out = apply_action(rs, pos, action, history)
        assert step["after"] == out.next.text(rs)
        assert step["result"] == out.result
        assert step["branches"] == sorted(out.branches)
        history.append(pos)
        pos = out.next
    assert data["steps"][-1]["result"] == winner
    assert len(data["steps"]) == verified_run.manifest["result"]["plies"]
    assert set(data["branch_rule"]) == set(BRANCHES)


def test_replay_page_proof_and_check_it_yourself(published_site, verified_run):
    doc = verified_run.manifest
    page = replay_file(published_site, verified_run.won)
    tree = parse(page)
    text = tree.text_by_id
    assert text["theorem-statement"].startswith(doc["final_theorem"]["statement"])
    if doc["lean"]["status"] == "passed":
        assert text["theorem-axioms"].split(", ") == doc["final_theorem"]["axioms"]
        assert "lean-not-run" not in text
    else:
        assert "Lean has not run on this result" in text["lean-not-run"]
        pinned = ", ".join(doc["final_theorem"]["axioms_pinned"])
        assert text["theorem-axioms-pinned"] == pinned
    data = verified_run.archive.read_bytes()
    assert text["archive-sha256"] == hashlib.sha256(data).hexdigest()
    href = next(a["href"] for t, a in tree.elements if a.get("id") == "archive-link")
    assert (published_site / href).read_bytes() == data
    assert text["model-sha256"] == doc["check"]["model_sha256"]
    assert text["rerun-command"] == doc["check"]["command"]
    assert text["expected-output"] == doc["check"]["expected_output"]
    figures = page.read_text()
    assert f'<td data-field="positions">{doc["result"]["positions"]:,}</td>' in figures
    assert "signature verified at build time" in figures
    # The archive's size in binary units, and the publisher key linked from here.
    size = len(data) / 1024
    assert f"{size:.1f} KiB · " in figures
    assert 'class="publisher-key" href="keys/' in figures
    # Plain words for visitors: no tool's error text.
    assert "PATH" not in text["what-is-checked"] and "elan" not in text["lead"]
    assert "Not checked yet" in text["what-is-checked"] or doc["lean"]["status"] == "passed"
    # How it plays, before the rules in code, as the seed pages have it.
    html = page.read_text()
    assert html.index('id="how-it-plays"') < html.index('id="rule-list"')


def _manifests_copy(tmp_path: Path, verified_run, archives: bool) -> Path:
    folder = tmp_path / "manifests"
    shutil.copytree(verified_run.manifests, folder)
    if not archives:
        shutil.rmtree(folder / "archives")
    return folder


def test_missing_artifacts_are_reported(tmp_path, verified_run):
    # Manifests only: no archive, so no certificate to replay.
    out = tmp_path / "only-manifests"
    manifests = _manifests_copy(tmp_path, verified_run, archives=False)
    build_site(out, sources=verified_run.sources(manifests_dir=manifests))
    tree = parse(replay_file(out, verified_run.won))
    assert "cannot be shown" in tree.text_by_id["no-replay"]
    assert "no-archive" in tree.text_by_id
    assert "archive-link" not in tree.text_by_id
    assert "replay-data" not in replay_file(out, verified_run.won).read_text()


def test_the_replay_comes_from_the_archive_alone(tmp_path, verified_run):
    """No run folder at all: the certificate is read out of the published archive."""
    out = tmp_path / "site"
    build_site(out, sources=verified_run.sources(from_dir=None, dist_dir=None))
    assert replay_data(out, verified_run.won)["steps"]
    assert "(as verified)" in replay_file(out, verified_run.won).read_text()


def test_an_archive_member_that_changed_is_not_used(tmp_path, verified_run):
    import zipfile

    manifests = _manifests_copy(tmp_path, verified_run, archives=True)
    (zip_path,) = (manifests / "archives").glob(f"{verified_run.won}-*.zip")
    with zipfile.ZipFile(zip_path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    shard = next(n for n in members if "/certificate/shard-" in n)
    members[shard] = members[shard] + b"\0"
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in members.items():
            zf.writestr(n, d)
    out = tmp_path / "site"
    build_site(out, sources=verified_run.sources(manifests_dir=manifests))
    text = parse(replay_file(out, verified_run.won)).text_by_id["no-replay"]
    assert "SHA-256 differs from the published manifest" in text


def test_a_run_folder_that_changed_is_not_used(tmp_path, verified_run):
    work = tmp_path / "verify"
    shutil.copytree(verified_run.work, work)
    shard = sorted((work / verified_run.won / "certificate").glob("shard-*.jsonl.gz"))[0]
    shard.write_bytes(shard.read_bytes() + b"\0")
    out = tmp_path / "site"
    build_site(out, sources=verified_run.sources(from_dir=work, include_local=True))
    page = out / f"replay-local-{verified_run.won}.html"
    text = parse(page).text_by_id["no-replay"]
    assert "does not match the manifest" in text and shard.name in text


def test_an_archive_of_another_result_is_not_published(tmp_path, verified_run):
    manifests = _manifests_copy(tmp_path, verified_run, archives=True)
    (zip_path,) = (manifests / "archives").glob(f"{verified_run.won}-*.zip")
    zip_path.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip
    out = tmp_path / "site"
    build_site(out, sources=verified_run.sources(manifests_dir=manifests))
    tree = parse(replay_file(out, verified_run.won))
    assert "cannot be read" in tree.text_by_id["no-archive"]
    assert not list((out / "results" / verified_run.won).rglob("*.zip"))


def test_a_signature_from_another_key_stops_the_build(tmp_path, verified_run):
    other = generate(tmp_path / "other.pem")
    with pytest.raises(HarnessError, match="signature does not verify"):
        build_site(tmp_path / "site", sources=verified_run.sources(public_key=other.public))
    assert not (tmp_path / "site").exists()


def test_cli_names_a_missing_folder():
    done = subprocess.run(
        [sys.executable, "-m", "harness", "site", "--out", "/tmp/never-built",
         "--include-local", "--from", "/nonexistent/verify"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--from /nonexistent/verify" in done.stderr
    assert not Path("/tmp/never-built").exists()


# --- the rule list ---------------------------------------------------------------------------


def test_every_branch_has_exactly_one_rule_and_words():
    names = [b for r in codeview.RULES for b in r.branches]
    assert sorted(names) == sorted(BRANCHES)
    assert set(codeview.BRANCH_WORDS) == set(BRANCHES)


def test_rule_code_is_cut_from_the_sources():
    rules = codeview.rule_list(None)
    for rule in rules:
        assert rule["python"], rule["id"]
        for py in rule["python"]:
            first = py["code"].splitlines()[0].strip()
            assert first in ENGINE or first in GEOMETRY, py["label"]
            # Every line of the extract is a line of the source (dedented).
            source = ENGINE if "engine.py" in py["label"] else GEOMETRY
            stripped = {ln.strip() for ln in source.splitlines()}
            assert all(ln.strip() in stripped for ln in py["code"].splitlines()), py["label"]
        for ln in rule["lean"]:
            assert ln["code"] in LEAN, ln["label"]
            assert re.search(r"^(def|inductive|structure|theorem) ", ln["code"], re.M)
    by_id = {r["id"]: r for r in rules}
    # A declaration is cut whole: pushAll's last alternative is the fall.
    push_all = by_id["push"]["lean"][2]["code"]
    assert push_all.startswith("/--") and "def pushAll" in push_all
    assert push_all.splitlines()[-1].strip().startswith("| .fall n :: rs, b =>")
    assert "# 5.3 Repetition" in by_id["repetition"]["python"][0]["code"]
    assert "# Stuck" not in by_id["ringout"]["python"][0]["code"]  # a section stops at the next


def test_a_missing_function_stops_the_build(monkeypatch):
    broken = codeview.Rule("x", "x", "x", ("place",), (codeview.PyRef(codeview.ENGINE, "nope"),))
    monkeypatch.setattr(codeview, "RULES", (broken,))
    with pytest.raises(HarnessError, match="no function nope"):
        codeview.rule_list(None)
    with pytest.raises(HarnessError, match="no Lean declaration nope"):
        codeview.lean_code("nope", LEAN)


# --- the Rules page --------------------------------------------------------------------------


def _has_checker_at(svg: str, square: str, rows: int = 4) -> bool:
    c, r = ord(square[0]) - 97, int(square[1:]) - 1
    x, y = MARGIN + c * CELL + CELL / 2, MARGIN + r * CELL + CELL / 2
    return f'<circle cx="{x}" cy="{y}" r="{CELL * 0.36}"' in svg


@pytest.mark.parametrize(
    ("edge", "lands"),
    [
        ("torus", "d4"),
        ("klein", "a4"),
        ("blocked", "c1"),
        ("ringout", None),
        ("reincarnation", None),
    ],
)
def test_edge_diagrams_follow_the_geometry(edge, lands):
    svg = edge_diagram(edge).svg
    assert _has_checker_at(svg, "b2")  # x, the lander
    squares = [f"{chr(97 + c)}{r + 1}" for r in range(4) for c in range(4)]
    solid = [s for s in squares if s != "b2" and _has_checker_at(svg, s)]
    assert solid == ([lands] if lands else [])


def test_rules_page_has_every_edge(built_site):
    tree = parse(built_site / "rules.html")
    edges = [a["data-edge"] for t, a in tree.elements if t == "figure" and "data-edge" in a]
    assert edges == ["reincarnation", "ringout", "blocked", "torus", "klein"]
    html = (built_site / "rules.html").read_text()
    assert html.count("<svg") == 7  # five edges and the pop before and after


# --- solver tables ---------------------------------------------------------------------------


def test_shipped_tables_match_the_solver(built_site):
    import random

    import numpy as np

    from harness.site.solved import site_keys
    from harness.solver.retrograde import solve

    for meta_path in sorted((built_site / "static" / "solved").glob("*.json")):
        meta = json.loads(meta_path.read_text())
        rs = Ruleset.from_id(meta["ruleset"])
        raw = (meta_path.parent / meta["table"]).read_bytes()
        assert hashlib.sha256(raw).hexdigest() == meta["sha256"]
        n, kb = meta["classes"], meta["key_bytes"]
        keys = np.frombuffer(raw[: n * kb], dtype="<u4" if kb == 4 else "<f8").astype(np.int64)
        values = np.frombuffer(raw[n * kb :], dtype="<u2")
        assert bool((np.diff(keys) > 0).all())
        sol = solve(rs)
        assert (meta["value"], meta["plies"], meta["positions"]) == (
            sol.value, sol.plies, sol.positions,
        )  # fmt: skip
        rng = random.Random(7)
        for _ in range(30):
            pos, history = Position.initial(rs), []
            while True:
                me, them = pos.board[pos.turn], pos.board[1 - pos.turn]
                key = site_keys(rs, [me], [them], [pos.bins[pos.turn]], [pos.bins[1 - pos.turn]])
                i = int(np.searchsorted(keys, key[0]))
                assert keys[i] == key[0]
                outcome, plies = int(values[i]) >> 14, int(values[i]) & 0x3FFF
                mover, other = "xo"[pos.turn], "xo"[1 - pos.turn]
                got = ({0: "draw", 1: mover, 2: other}[outcome], plies if outcome else None)
                assert got == sol.value_of(pos), pos.text(rs)
                out = apply_action(rs, pos, rng.choice(legal_actions(rs, pos)), history)
                if out.result:
                    break
                history.append(pos)
                pos = out.next


def test_an_open_attempt_published_under_manifests_open_is_listed_as_open(tmp_path):
    # A verify run whose certify budget ran out (stand-in stages), then the site's reader.
    from harness.site.artifacts import collect_results
    from harness.verify.pipeline import Pipeline
    from tests.verify.runs import make_project_key
    from tests.verify.standin import RULESET, StandIn, tiny_lean_project

    key = generate(tmp_path / "keys" / "k.pem")
    make_project_key(tmp_path / "manifests", key)
    report = Pipeline(
        RULESET,
        key,
        runner=StandIn(budget="certify"),
        work_root=tmp_path / "out",
        manifests=tmp_path / "manifests",
        lean_project=tiny_lean_project(tmp_path / "lean"),
        budget=600,
        publish=True,
        say=lambda line: None,
    ).run()
    assert report.verdict == "OPEN"
    from harness.site.artifacts import Sources

    results = collect_results(Sources(manifests_dir=tmp_path / "manifests", public_key=key.public))
    assert [(r.ruleset, r.status, r.page) for r in results] == [(RULESET, "open", None)]
    assert results[0].failed_step["step"] == "certify"
    assert "budget exhausted" in results[0].failed_step["detail"]
    assert results[0].seconds_spent == pytest.approx(600.5, abs=1)


def test_the_draw_has_a_replay_page_with_a_drawn_line_and_both_theorems(
    published_site, verified_run
):
    page = (published_site / f"replay-{verified_run.drawn}.html").read_text()
    assert "<strong>A draw</strong>" in page and "A drawn line" in page
    assert "initial_draw" in page and "Side.x" in page and "Side.o" in page
    data = json.loads(re.search(r'id="replay-data">(.*?)</script>', page, re.S).group(1))
    assert data["steps"] and data["steps"][-1]["result"] == "draw"
    assert all(s["result"] is None for s in data["steps"][:-1])
