"""Every edge surface in the Lean model: the tables ``Geo.of`` against the reference engine's
geometry, the line maps against its line list, and 4x4 certificates of each edge rendered."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from harness.cert.format import read_index
from harness.lean import certdata as lean_certdata
from harness.lean import corpus_module as lean_corpus_module
from harness.lean import model as M
from harness.lean import readback, sizing
from harness.lean import render as R
from harness.lean.codec import Cfg
from harness.rules import Ruleset
from harness.rules.geometry import geometry_for

CERTS = Path(__file__).parent / "certs"
EDGES = ("reincarnation", "ringout", "blocked", "torus", "klein")
BOARDS = ((3, 3), (3, 5), (4, 4), (5, 3), (6, 6), (4, 7), (8, 8))


@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("rows,cols", BOARDS)
def test_geo_rays_match_the_reference_geometry(rows, cols, edge):
    geo = M.geo_of(Cfg(rows, cols, 8, edge))
    ref = geometry_for(rows, cols, edge)
    for land in range(rows * cols):
        expected = []
        for ray in ref.pop_rays[land]:
            if ray.target is not None:
                expected.append(("push", ray.neighbour, ray.target))
            elif edge != "blocked":  # a blocked checker stays: the direction does nothing
                expected.append(("fall", ray.neighbour))
        assert list(geo.rays[land]) == expected, (land, edge)
    for src in range(rows * cols):
        assert [t for t, _ in geo.king[src]] == list(ref.king_targets[src])


@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("rows,cols", BOARDS)
def test_line_maps_find_exactly_the_reference_lines(rows, cols, edge):
    cfg = Cfg(rows, cols, 8, edge)
    ref = geometry_for(rows, cols, edge)
    rng = random.Random(f"{rows}{cols}{edge}")
    n = rows * cols
    boards = [rng.getrandbits(n) & rng.getrandbits(n) for _ in range(300)]
    boards += [line.mask for line in ref.lines]  # every single line, alone
    boards += [line.mask ^ (1 << line.squares[1]) for line in ref.lines]  # and one short
    for b in boards:
        expected = any(b & line.mask == line.mask for line in ref.lines)
        assert M.has_line(cfg, b) == expected, (bin(b), edge)


def test_popcount_is_exact_on_64_bits():
    rng = random.Random(7)
    for b in [0, 1, (1 << 64) - 1] + [rng.getrandbits(64) for _ in range(500)]:
        assert M.popcount(b) == bin(b).count("1")


def _copy(name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(CERTS / name, dst)
    return dst


@pytest.mark.parametrize(
    "name", ["pop1-4x4-c3-ringout", "pop1-4x4-c8-blocked", "pop1-4x4-c8-klein"]
)
def test_render_a_4x4_certificate_of_each_edge(tmp_path, name):
    """Certificates written by ``harness certify``; the 4x4 torus is the published one."""
    cert_dir = _copy(name, tmp_path)
    summary = R.render(cert_dir, tmp_path / "Generated", check=True)
    edge = name.split("-")[-1]
    cert = (tmp_path / "Generated" / "Cert.lean").read_text()
    assert f"def cfg : Cfg := ⟨4, 4, {name.split('-')[2][1:]}, .{edge}⟩" in cert
    assert ("fall" in cert) == (edge == "ringout")
    assert "theorem geo_eq : geo = Geo.of cfg" in cert
    assert all(d["estimated_steps"] <= sizing.BUDGET for d in summary["declarations"])
    assert summary["theorem"]["statement"].startswith(
        "theorem initial_force_win : ForceWin (Geo.of ⟨4, 4"
    )
    decoded = readback.read_back(tmp_path / "Generated")
    assert decoded.canonical() == lean_certdata.read_certificate(cert_dir).canonical()


def test_published_4x4_torus_renders_and_checks(tmp_path):
    import zipfile

    root = Path(__file__).resolve().parents[2] / "manifests" / "archives"
    (archive,) = root.glob("pop1-4x4-c8-torus-*.zip")
    with zipfile.ZipFile(archive) as z:
        z.extractall(tmp_path)
    (cert_dir,) = tmp_path.glob("*/certificate")
    summary = R.render(cert_dir, tmp_path / "Generated", check=True)
    assert summary["declarations"]
    assert max(d["estimated_steps"] for d in summary["declarations"]) <= sizing.BUDGET


def test_a_reincarnation_certificate_renders_and_a_bogus_one_is_rejected(tmp_path):
    """No small reincarnation board has a forced win within 15 plies (``harness certify``
    finds none on 3x3 to 4x5), so this renders a one-entry certificate whose claim is false:
    the renderer accepts the ruleset, writes the fall rays, and the mirror rejects the claim."""
    rs = Ruleset.from_id("pop1-4x4-c4-reincarnation-continue-binempty-king-nozero-nojump")
    cfg = Cfg.of(rs)
    from harness.cert.format import Entry, Shard, write_certificate

    root = "..../..../..../.... 4 4 x"
    write_certificate(tmp_path / "cert", rs.id, "x", root, [Shard(8, [Entry(root, "a1", 0)])])
    R.render(tmp_path / "cert", tmp_path / "Generated")
    text = (tmp_path / "Generated" / "Cert.lean").read_text()
    assert ".fall" in text and ".reincarnation⟩" in text
    cert = lean_certdata.read_certificate(tmp_path / "cert")
    lean_certdata.expand(cert)
    ok, reason = R.mirror_check(cert)
    assert not ok and "rejected" in reason
    # Landing on b2, the checker on a1 is pushed up-left, off the board: it falls.
    assert M.geo_of(cfg).rays[5][0] == ("fall", 0)


def test_render_refuses_rulesets_outside_the_model_naming_the_field(tmp_path):
    cert_dir = _copy("pop1-4x4-c8-klein", tmp_path)
    index = (cert_dir / "index.yaml").read_text()
    (cert_dir / "index.yaml").write_text(index.replace("-king-", "-queen-"))
    with pytest.raises(lean_certdata.RenderError, match="field 'pattern'") as info:
        R.render(cert_dir, tmp_path / "Generated")
    assert "\n" not in str(info.value)
    assert read_index  # the index reader is the one the renderer uses


def test_render_json_lists_every_declaration(tmp_path):
    cert_dir = _copy("pop1-4x4-c8-klein", tmp_path)
    R.render(cert_dir, tmp_path / "Generated", chunk=16)
    summary = json.loads((tmp_path / "Generated" / "render.json").read_text())
    decls = summary["declarations"]
    assert {tuple(sorted(d)) for d in decls} == {
        ("entries", "estimated_steps", "module", "theorem")
    }
    shard_parts = [d for d in decls if ".Shard" in d["module"]]
    # The shards' declarations cover every rendered entry exactly once.
    total = summary["entries"] + summary["aliases"]
    assert sum(d["entries"] for d in shard_parts) == total
    for mod in summary["modules"]:
        if mod["kind"] != "shard":
            continue
        text = (tmp_path / "Generated" / mod["file"]).read_text()
        names = [
            d["theorem"].rsplit(".", 1)[1] for d in shard_parts if d["module"] == mod["module"]
        ]
        assert names == [f"part{i}" for i in range(mod["declarations"])]
        for name in names:
            assert f"theorem {name} : " in text
            assert text.count(f" {name} ") + text.count(f"({name} ") >= 1
        assert "noncomputable def tree : Tree" in text
    kinds = {d["theorem"].rsplit(".", 1)[1] for d in decls if ".Shard" not in d["module"]}
    assert kinds == {"geo_eq", "root_checked"}


def test_the_lean_corpus_holds_6x6_and_8x8_records_of_every_edge_and_the_mirror_agrees():
    from harness.lean.codec import action_code, position_key

    records = lean_corpus_module.model_records()
    text, info, decls = lean_corpus_module.render_corpus_text(records, "Generated")
    for edge in EDGES:
        assert f"⟨6, 6, 8, .{edge}⟩" in info["cfgs"] and f"⟨8, 8, 16, .{edge}⟩" in info["cfgs"]
    assert len(decls) >= 10
    assert lean_corpus_module.model_records() == records  # deterministic
    checked = 0
    for rec in records:
        if "repetition_draw" in rec["branches"]:
            continue
        cfg = Cfg.of(Ruleset.from_id(rec["ruleset"]))
        s = M.pos_decode(cfg, position_key(cfg, rec["position"]))
        assert M.legal(cfg, s) == sorted(action_code(cfg, a) for a in rec["actions"])
        out = M.step(cfg, s, action_code(cfg, rec["action"]))
        assert M.pos_encode(cfg, out.next) == position_key(cfg, rec["next"]), rec
        assert (
            lean_corpus_module.RESULT_CODES[rec["result"]]
            == {None: 0, 0: 1, 1: 2, M.DRAW: 3}[out.result]
        )
        checked += 1
    assert checked == info["records"]
