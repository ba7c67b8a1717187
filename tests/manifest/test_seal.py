"""``seal``: deterministic archives of a verified run, with the re-run steps."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import HarnessError
from harness.manifest.dsse import verify
from harness.manifest.manifest import parse_payload, write_manifest
from harness.manifest.seal import build_archive
from tests.verify.runs import make_run
from tests.verify.standin import RULESET


def seal_args(run, out: Path, *extra: str) -> list[str]:
    return [
        "seal",
        RULESET,
        "--work",
        str(run.work),
        "--out",
        str(out),
        "--key",
        str(run.key.path),
        *extra,
    ]


def test_seal_is_deterministic_and_prints_the_sha256(verified, tmp_path, capsys):
    a, b = tmp_path / "a.zip", tmp_path / "b.zip"
    assert main(seal_args(verified, a)) == 0
    out = capsys.readouterr().out
    assert main(seal_args(verified, b)) == 0
    assert a.read_bytes() == b.read_bytes()
    digest = hashlib.sha256(a.read_bytes()).hexdigest()
    assert f"SHA-256 {digest}" in out
    assert "lean +leanprover/lean4:v4.34.0 -M8192 Check.lean" in out


def test_archive_layout_and_seal_manifest_cover_every_member(verified):
    data, name, doc = build_archive(verified.manifest, verified.work, verified.key)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        members = {n: zf.read(n) for n in names}
    assert names == sorted(names) and all(n.startswith(f"{name}/") for n in names)
    rel = {n[len(name) + 1 :] for n in names}
    assert {
        "CHECK.md",
        "MANIFEST.yaml",
        "MANIFEST.dsse.json",
        "formal/Game.lean",
        "formal/lean-toolchain",
        "certificate/index.yaml",
        "corpus/corpus.jsonl",
        "lean/Generated/Main.lean",
        "lean/Pop/Rules.lean",
        "manifests/verify.yaml",
        "manifests/verify.dsse.json",
    } <= rel
    # The signed seal manifest vouches for every other member, with its SHA-256.
    payload = verify(members[f"{name}/MANIFEST.dsse.json"], verified.key.public, None)
    assert payload == members[f"{name}/MANIFEST.yaml"]
    sealed = parse_payload(payload)
    assert sealed["kind"] == "seal" and sealed == {
        **doc,
        "format": sealed["format"],
        "signer": sealed["signer"],
    }
    assert set(sealed["files"]) == rel - {"MANIFEST.yaml", "MANIFEST.dsse.json"}
    for path, digest in sealed["files"].items():
        assert hashlib.sha256(members[f"{name}/{path}"]).hexdigest() == digest


def test_check_md_has_the_seed_form_steps(verified):
    data, name, doc = build_archive(verified.manifest, verified.work, verified.key)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        check = zf.read(f"{name}/CHECK.md").decode()
    c = doc["check"]
    assert c["model_sha256"] in check
    assert "elan toolchain install leanprover/lean4:v4.34.0" in check
    assert "#print axioms Generated.Main.initial_force_win" in check
    assert c["command"] in check
    for line in c["expected_output"].splitlines():
        assert line in check
    assert "not measured here" in check
    k = c["kernel"]
    assert f"The kernel checks {k['declarations']:,} declarations" in check
    assert f"{k['steps']:,} estimated" in check and "lake build Generated.Main" in check


def test_check_md_reports_our_time_and_memory_when_lean_ran(tmp_path, key):
    run = make_run(tmp_path, key, lean="pass")
    data, name, _ = build_archive(run.manifest, run.work, key)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        check = zf.read(f"{name}/CHECK.md").decode()
    assert "took 7.5 s and 512.0 MiB" in check and "not measured" not in check


def test_no_host_paths_in_the_archive(verified):
    data, _, _ = build_archive(verified.manifest, verified.work, verified.key)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        blob = b"".join(zf.read(n) for n in zf.namelist()) + b"".join(
            n.encode() for n in zf.namelist()
        )
    for host in (str(verified.root), str(Path.home()), "/tmp/"):
        assert host.encode() not in blob, host


def test_seal_refuses_a_run_whose_files_changed(verified):
    (verified.work / "corpus" / "corpus.jsonl").write_text("edited after verify\n")
    with pytest.raises(HarnessError, match="corpus/corpus.jsonl: SHA-256 differs"):
        build_archive(verified.manifest, verified.work, verified.key)


def test_seal_refuses_a_failed_run_and_a_foreign_signature(verified, other_key):
    with pytest.raises(HarnessError, match="no signature verifies"):
        build_archive(verified.manifest, verified.work, other_key)
    from harness.manifest.manifest import read_signed

    doc, _ = read_signed(verified.manifest, verified.key.public)
    doc["verdict"] = "FAIL"
    write_manifest(verified.manifest, doc, verified.key)
    with pytest.raises(HarnessError, match="verdict is FAIL"):
        build_archive(verified.manifest, verified.work, verified.key)


def test_seal_never_replaces_an_archive_without_force(verified, tmp_path, capsys):
    out = tmp_path / "a.zip"
    out.write_bytes(b"a good archive from before")
    assert main(seal_args(verified, out)) == 2
    assert "already exists" in capsys.readouterr().err
    assert out.read_bytes() == b"a good archive from before"
    assert main(seal_args(verified, out, "--force")) == 0
    assert zipfile.is_zipfile(out)


def test_seal_without_a_verify_run_says_what_to_do(tmp_path, key, capsys):
    args = ["seal", RULESET, "--work", str(tmp_path / "none"), "--key", str(key.path)]
    assert main(args) == 2
    assert "run `python -m harness verify" in capsys.readouterr().err
