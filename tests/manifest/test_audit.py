"""``audit``: our sealed archives and seed-style ones; PASS, FAIL, INCOMPLETE, unusable."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import struct
import warnings
import zipfile
from pathlib import Path

import pytest

from harness.cli import main
from harness.manifest.audit import Auditor, Expectations, LeanRun, fit_to_machine
from harness.manifest.keys import public_path
from harness.manifest.manifest import read_signed
from harness.manifest.seal import build_archive
from tests.verify.standin import StandIn

# --------------------------------------------------------------------------------------------
# Helpers


def fake_lean(output: str | None, exit_code: int = 0):
    """A stand-in for running ``lean Check.lean``: None means no toolchain here."""
    seen = {}

    def run(folder: Path, pin: str, memory: float, timeout: float) -> LeanRun:
        seen["check"] = (folder / "Check.lean").read_text()
        seen["pin"], seen["memory"] = pin, memory
        if output is None:
            return LeanRun(False, "no Lean toolchain here (lean not on PATH)")
        return LeanRun(
            True, "", ["lean", f"+{pin}", "Check.lean"], exit_code, 1.5, 300.0, output, "4.34.0"
        )

    run.seen = seen
    return run


def archive_of(run, tmp_path: Path) -> tuple[Path, str, dict]:
    data, name, doc = build_archive(run.manifest, run.work, run.key)
    path = tmp_path / "sealed.zip"
    path.write_bytes(data)
    return path, name, doc


def rewrite(src: Path, dst: Path, change) -> Path:
    """A copy of the zip at ``src`` with ``change(members)`` applied (a dict name -> bytes)."""
    with zipfile.ZipFile(src) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    change(members)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in members.items():
            zf.writestr(n, d)
    return dst


def audit(archive: Path, out: Path, run, *, lean=None, runner=None, **expect):
    digest = expect.pop("sha256", hashlib.sha256(archive.read_bytes()).hexdigest())
    verify_key = expect.pop("verify_key", run.key.public)
    auditor = Auditor(
        archive,
        out,
        verify_key=verify_key,
        sign_key=run.key,
        expect=Expectations(archive_sha256=digest, **expect),
        runner=runner or StandIn(),
        lean_runner=lean or fake_lean(None),
    )
    return auditor.run()


def statuses(doc: dict) -> dict[str, str]:
    return {c["check"]: c["status"] for c in doc["checks"]}


# --------------------------------------------------------------------------------------------
# Our archives


def test_pass_when_every_check_ran_and_agreed(verified_lean, tmp_path):
    path, name, doc = archive_of(verified_lean, tmp_path)
    lean = fake_lean(doc["check"]["expected_output"])
    verdict, code, report = audit(path, tmp_path / "audit", verified_lean, lean=lean)
    assert (verdict, code) == ("PASS", 0), report["differences"]
    assert set(statuses(report).values()) == {"passed"}
    # Lean ran on the sealed model file plus the published #print axioms lines.
    check = lean.seen["check"]
    assert check.endswith(
        "#print axioms Generated.Main.initial_force_win\n"
        "#print axioms Generated.Corpus.consistent\n"
    )
    assert lean.seen["pin"] == "leanprover/lean4:v4.34.0" and lean.seen["memory"] == 8.0
    # The audit manifest is signed, and vouches for what it ran.
    signed, _ = read_signed(tmp_path / "audit" / "audit.yaml", verified_lean.key.public)
    assert signed["kind"] == "audit" and signed["verdict"] == "PASS"
    assert "check/Check.lean" in signed["files"]


def test_incomplete_when_lean_cannot_run_here(verified, tmp_path):
    path, _, _ = archive_of(verified, tmp_path)
    verdict, code, report = audit(path, tmp_path / "audit", verified)
    assert (verdict, code) == ("INCOMPLETE", 3)
    assert statuses(report)["lean"] == "not run"
    assert [c for c, s in statuses(report).items() if s != "passed"] == ["lean"]
    assert report["not_run"] == ["lean: no Lean toolchain here (lean not on PATH)"]


def test_incomplete_without_a_key_or_a_published_sha256(verified, tmp_path):
    path, _, doc = archive_of(verified, tmp_path)
    lean = fake_lean(
        doc["check"]["expected_output"].replace(
            "[propext, Classical.choice, Quot.sound]", "[propext, Classical.choice, Quot.sound]"
        )
    )
    verdict, code, report = audit(
        path, tmp_path / "a", verified, verify_key=None, sha256=None, lean=lean
    )
    assert (verdict, code) == ("INCOMPLETE", 3)
    s = statuses(report)
    assert s["manifest signature"] == "not run" and s["archive sha256"] == "not run"


def _flip_member_byte(members, name, suffix):
    key = next(n for n in members if n.endswith(suffix))
    data = bytearray(members[key])
    data[len(data) // 2] ^= 0x20
    members[key] = bytes(data)


MUTATIONS = {
    "changed member": (
        lambda m: _flip_member_byte(m, "", "corpus/corpus.jsonl"),
        "corpus/corpus.jsonl: SHA-256 differs",
    ),
    "changed model": (
        lambda m: _flip_member_byte(m, "", "formal/Game.lean"),
        "formal/Game.lean: SHA-256 differs",
    ),
    "missing member": (
        lambda m: m.pop(next(n for n in m if n.endswith("index.yaml"))),
        "certificate/index.yaml: listed in the manifest but missing",
    ),
    "extra member": (
        lambda m: m.__setitem__(
            next(iter(m)).split("/")[0] + "/extra.lean", b"axiom cheat : False"
        ),
        "extra.lean: in the archive but not in the manifest",
    ),
    "edited manifest yaml": (
        lambda m: _flip_member_byte(m, "", "/MANIFEST.yaml"),
        "MANIFEST.yaml differs from the signed one",
    ),
    "truncated envelope": (
        lambda m: m.__setitem__(
            next(n for n in m if n.endswith("MANIFEST.dsse.json")),
            m[next(n for n in m if n.endswith("MANIFEST.dsse.json"))][:500],
        ),
        "not complete JSON",
    ),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_tampered_archives_fail_with_every_difference(verified, tmp_path, mutation):
    change, message = MUTATIONS[mutation]
    path, _, _ = archive_of(verified, tmp_path)
    bad = rewrite(path, tmp_path / "bad.zip", change)
    outside = sorted(p for p in verified.root.rglob("*"))
    verdict, code, report = audit(bad, tmp_path / "audit", verified)
    assert (verdict, code) == ("FAIL", 1)
    assert any(message in d for d in report["differences"]), report["differences"]
    assert (tmp_path / "audit" / "audit.yaml").is_file()
    # Everything the audit wrote is inside its output folder.
    new = sorted(set(verified.root.rglob("*")) - set(outside))
    assert new and all(p.is_relative_to(tmp_path / "audit") for p in new)


def test_a_verify_manifest_signed_by_someone_else_fails(tmp_path, key, other_key):
    """The seal is ours, but the run it seals was signed by another key: the chain breaks."""
    from harness.manifest.archive import write_deterministic
    from harness.manifest.manifest import sign_manifest
    from harness.manifest.seal import ENVELOPE_NAME, MANIFEST_NAME, collect, seal_doc
    from tests.verify.runs import make_run

    run = make_run(tmp_path, other_key)
    doc, yml = read_signed(run.manifest, other_key.public)
    env = run.manifest.with_name(run.manifest.name.replace(".yaml", ".dsse.json")).read_bytes()
    members = collect(doc, run.work, yml, env)
    name = next(iter(members)).split("/")[0]
    data, envelope = sign_manifest(seal_doc(doc, members, name, yml), key)
    members[f"{name}/{MANIFEST_NAME}"], members[f"{name}/{ENVELOPE_NAME}"] = data, envelope
    path = tmp_path / "mixed.zip"
    with open(path, "wb") as fh:
        write_deterministic(fh, members)
    run.key = key
    verdict, _, report = audit(path, tmp_path / "audit", run)
    assert verdict == "FAIL"
    assert statuses(report)["manifest signature"] == "passed"
    assert statuses(report)["verify manifest"] == "failed"
    assert "no signature verifies" in " ".join(report["differences"])


def test_a_bit_flip_in_the_raw_archive_fails(verified, tmp_path):
    path, _, _ = archive_of(verified, tmp_path)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = next(i for i in zf.infolist() if i.filename.endswith("formal/Game.lean"))
    data[info.header_offset + 30 + len(info.filename) + info.compress_size // 2] ^= 0x01
    bad = tmp_path / "flipped.zip"
    bad.write_bytes(bytes(data))
    verdict, code, report = audit(bad, tmp_path / "audit", verified)
    assert (verdict, code) == ("FAIL", 1)
    text = " ".join(report["differences"])
    assert "formal/Game.lean" in text and ("corrupt" in text or "differs" in text)


def test_wrong_key_and_wrong_sha256_fail(verified, other_key, tmp_path):
    path, _, _ = archive_of(verified, tmp_path)
    verdict, code, report = audit(
        path, tmp_path / "a", verified, verify_key=other_key.public, sha256="0" * 64
    )
    assert (verdict, code) == ("FAIL", 1)
    s = statuses(report)
    assert s["manifest signature"] == "failed" and s["archive sha256"] == "failed"


@pytest.mark.parametrize(
    "output, exit_code, message",
    [
        ("'Generated.Main.initial_force_win' depends on axioms: [sorryAx]\n", 0, "sorryAx"),
        ("Check.lean:10:4: error: unknown identifier 'x'\n", 1, "Lean error"),
    ],
)
def test_lean_output_that_differs_fails(verified_lean, tmp_path, output, exit_code, message):
    path, _, _ = archive_of(verified_lean, tmp_path)
    verdict, code, report = audit(
        path, tmp_path / "a", verified_lean, lean=fake_lean(output, exit_code)
    )
    assert (verdict, code) == ("FAIL", 1)
    assert message in " ".join(report["differences"])


def test_python_check_rejection_fails(verified, tmp_path):
    path, _, _ = archive_of(verified, tmp_path)
    verdict, _, report = audit(path, tmp_path / "a", verified, runner=StandIn(fail="check"))
    assert verdict == "FAIL" and statuses(report)["python check"] == "failed"
    detail = next(c["detail"] for c in report["checks"] if c["check"] == "python check")
    assert detail == "rejected: check stand-in was told to fail"


# --------------------------------------------------------------------------------------------
# Hostile archives through the command line: exit 2, one line, nothing written


def _zip(entries) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate names we want
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in entries:
                zf.writestr(name, data)
    return buf.getvalue()


def _symlink_zip() -> bytes:
    info = zipfile.ZipInfo("x/formal/Game.lean")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return _zip([(info, b"/etc/passwd")])


def _huge_zip() -> bytes:
    """A small member whose header claims about 3.75 GiB: refused before anything is read."""
    data = bytearray(_zip([("x/formal/Game.lean", b"theorem t : True := trivial\n")]))
    record = data.find(b"PK\x01\x02")
    struct.pack_into("<L", data, record + 24, 0xF0000000)
    return bytes(data)


HOSTILE = {
    "huge member": (_huge_zip(), "bytes uncompressed, over"),
    "path traversal": (
        _zip([("x/formal/Game.lean", b""), ("x/../../evil.sh", b"boom")]),
        "climbs out",
    ),
    "absolute path": (_zip([("/tmp/evil.sh", b"boom")]), "absolute path"),
    "symlink": (_symlink_zip(), "symbolic link"),
    "duplicate names": (
        _zip([("x/formal/Game.lean", b"a"), ("x/formal/Game.lean", b"b")]),
        "duplicate name",
    ),
    "zip bomb": (_zip([("x/formal/Game.lean", bytes(32 << 20))]), "compression ratio"),
    # Incompressible content, so that cutting at 1000 bytes lands inside the member.
    "truncated": (
        _zip(
            [
                (
                    "x/formal/Game.lean",
                    b"".join(hashlib.sha256(bytes([i])).digest() for i in range(64)),
                )
            ]
        )[:1000],
        "not a readable zip",
    ),
    "no known layout": (_zip([("readme.txt", b"hi")]), "neither a pop-harness archive"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_archives_are_unusable_and_nothing_is_written(tmp_path, key, kind, capsys):
    data, message = HOSTILE[kind]
    archive = tmp_path / "in" / "hostile.zip"
    archive.parent.mkdir()
    archive.write_bytes(data)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    out = tmp_path / "audit-out"
    code = main(["audit", str(archive), "--out", str(out), "--sign-key", str(key.path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert not out.exists()


def test_a_traversal_member_in_a_sealed_archive_is_refused(verified, tmp_path, capsys):
    path, name, _ = archive_of(verified, tmp_path)
    bad = rewrite(
        path, tmp_path / "bad.zip", lambda m: m.__setitem__(f"{name}/../../escaped.txt", b"boom")
    )
    code = main(
        ["audit", str(bad), "--out", str(tmp_path / "o"), "--sign-key", str(verified.key.path)]
    )
    assert code == 2 and "climbs out" in capsys.readouterr().err
    assert not (tmp_path.parent / "escaped.txt").exists()
    assert not (tmp_path / "o").exists()


def test_missing_archive_and_bad_options_are_unusable(tmp_path, key, capsys):
    assert main(["audit", str(tmp_path / "nope.zip"), "--sign-key", str(key.path)]) == 2
    assert "no such archive" in capsys.readouterr().err
    (tmp_path / "a.zip").write_bytes(b"x")
    assert (
        main(["audit", str(tmp_path / "a.zip"), "--sha256", "xyz", "--sign-key", str(key.path)])
        == 2
    )
    assert "--sha256: expected 64 hex digits" in capsys.readouterr().err


def test_an_earlier_audit_is_not_replaced_without_force(verified, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("harness.manifest.audit.HarnessRunner", StandIn)
    monkeypatch.setattr("harness.manifest.audit.run_lean_file", fake_lean(None))
    path, _, _ = archive_of(verified, tmp_path)
    out = tmp_path / "o"
    args = [
        "audit",
        str(path),
        "--out",
        str(out),
        "--sign-key",
        str(verified.key.path),
        "--key",
        str(public_path(verified.key.path)),
    ]
    assert main(args) == 3
    first = (out / "audit.yaml").read_bytes()
    assert main(args) == 2
    assert "exists from an earlier audit" in capsys.readouterr().err
    assert (out / "audit.yaml").read_bytes() == first
    assert main([*args, "--force"]) == 3


# --------------------------------------------------------------------------------------------
# Seed-style archives

SEED_MODEL = b"theorem consistent : True := trivial\ntheorem faithful : True := trivial\n"
SEED_EXPECTED = (
    "GUARD_HITS a1_up=209,bar_clock=1007\n"
    "'consistent' depends on axioms: [propext]\n"
    "'faithful' depends on axioms: [propext]\n"
)


def seed_archive(tmp_path: Path, *, toolchain_at: str | None = "archive/sk48-1/lean-toolchain"):
    entries = [
        ("archive/sk48-1/formal/Game.lean", SEED_MODEL),
        ("archive/sk48-1/record/run.jsonl", b"{}\n"),
    ]
    if toolchain_at:
        entries.append((toolchain_at, b"leanprover/lean4:v4.34.0\n"))
    path = tmp_path / "sk48.zip"
    path.write_bytes(_zip(entries))
    return path


def seed_audit(tmp_path, key, lean, **expect):
    path = seed_archive(
        tmp_path, toolchain_at=expect.pop("toolchain_at", "archive/sk48-1/lean-toolchain")
    )
    expect.setdefault("archive_sha256", hashlib.sha256(path.read_bytes()).hexdigest())
    expect.setdefault("model_sha256", hashlib.sha256(SEED_MODEL).hexdigest())
    expect.setdefault("expected_output", SEED_EXPECTED)
    auditor = Auditor(
        path,
        tmp_path / "audit",
        verify_key=None,
        sign_key=key,
        expect=Expectations(**expect),
        runner=StandIn(),
        lean_runner=lean,
    )
    return auditor.run()


def test_seed_style_pass(tmp_path, key):
    lean = fake_lean(SEED_EXPECTED)
    verdict, code, report = seed_audit(tmp_path, key, lean)
    assert (verdict, code) == ("PASS", 0), report["differences"]
    # Theorems came from the expected output; the copy is Game.lean plus their prints.
    assert lean.seen["check"] == (
        SEED_MODEL.decode() + "\n#print axioms consistent\n#print axioms faithful\n"
    )
    # the seeds' -M60000, but no more than this machine can give
    assert lean.seen["memory"] == fit_to_machine(60.0) <= 60.0
    assert report["archive"]["style"] == "seed"


def test_seed_style_model_sha256_mismatch_fails(tmp_path, key):
    verdict, code, report = seed_audit(
        tmp_path, key, fake_lean(SEED_EXPECTED), model_sha256="ab" * 32
    )
    assert (verdict, code) == ("FAIL", 1)
    assert "formal/Game.lean" in report["differences"][0]


def test_seed_style_guard_hits_and_axioms_are_compared(tmp_path, key):
    output = SEED_EXPECTED.replace("a1_up=209", "a1_up=208").replace(
        "'faithful' depends on axioms: [propext]", "'faithful' depends on axioms: [sorryAx]"
    )
    verdict, _, report = seed_audit(tmp_path, key, fake_lean(output))
    text = " ".join(report["differences"])
    assert verdict == "FAIL"
    assert "GUARD_HITS a1_up=208, expected 209" in text
    assert "faithful: axioms [sorryAx], expected [propext]" in text


def test_seed_style_without_toolchain_file_fails(tmp_path, key):
    verdict, _, report = seed_audit(tmp_path, key, fake_lean(SEED_EXPECTED), toolchain_at=None)
    assert verdict == "FAIL" and "no lean-toolchain" in " ".join(report["differences"])


def test_seed_style_without_published_values_is_incomplete(tmp_path, key):
    verdict, code, report = seed_audit(
        tmp_path, key, fake_lean(None), model_sha256=None, expected_output=None, archive_sha256=None
    )
    assert (verdict, code) == ("INCOMPLETE", 3)
    assert {"archive sha256", "model sha256", "lean"} <= {
        c["check"] for c in report["checks"] if c["status"] == "not run"
    }


def test_real_lean_runner_uses_a_lean_on_path(tmp_path, monkeypatch):
    """run_lean_file with a stand-in `lean` executable: version check, -M, Check.lean."""
    from harness.manifest.audit import run_lean_file

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "lean"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then\n'
        '  echo "Lean (version 4.34.0, x86_64, Release)"; exit 0\n'
        "fi\n"
        'echo "args: $*"; cat Check.lean | grep -c "#print axioms"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setenv("ELAN_HOME", str(tmp_path / "no-elan"))
    folder = tmp_path / "check"
    folder.mkdir()
    (folder / "Check.lean").write_text("#print axioms a\n#print axioms b\n")
    run = run_lean_file(folder, "leanprover/lean4:v4.34.0", 1.0, 30)
    assert run.ran and run.exit_code == 0
    assert "args: -M1024 Check.lean" in run.output and run.output.strip().endswith("2")
    other = run_lean_file(folder, "leanprover/lean4:v4.20.0", 1.0, 30)
    assert not other.ran and "the archive pins leanprover/lean4:v4.20.0" in other.reason
