"""Hostile input to the manifest readers (issue 14): nesting bombs in envelopes, special
files, a missing manifest named as such, and a fuzz target over the envelope and payload
readers asserting clean rejection within bounded memory."""

from __future__ import annotations

import base64
import json
import os
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.manifest import dsse
from harness.manifest.audit import fit_to_machine
from harness.manifest.keys import public_path
from harness.manifest.manifest import ManifestError, envelope_path, read_signed, write_manifest

DOC = {"kind": "verify", "verdict": "PASS", "ruleset": "pop1-4x4", "files": {}}


def _cli(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out + out.err


def test_a_missing_yaml_is_named_not_its_envelope(tmp_path, key, capsys):
    path = tmp_path / "gone.yaml"
    code, out = _cli(["manifest", "verify", str(path), "--key", str(public_path(key.path))], capsys)
    assert code == 2 and out.count("\n") == 1
    assert f"{path}: not found" in out and ".dsse.json" not in out


def test_a_deeply_nested_envelope_is_one_line_and_exit_2(tmp_path, key, capsys):
    path = tmp_path / "m.yaml"
    write_manifest(path, DOC, key)
    envelope_path(path).write_bytes(b"[" * 2000 + b"]" * 2000)
    code, out = _cli(
        ["manifest", "verify", str(envelope_path(path)), "--key", str(public_path(key.path))],
        capsys,
    )
    assert code == 2 and out.count("\n") == 1 and "nested deeper than 64" in out
    assert "Traceback" not in out and "RecursionError" not in out


def test_a_deeply_nested_signed_payload_is_refused(key):
    payload = b"- " * 3000 + b"x\n"
    envelope = dsse.sign(payload, dsse.MANIFEST_TYPE, key)
    from harness.manifest.manifest import verify_envelope

    with pytest.raises(ManifestError, match="nested"):
        verify_envelope(envelope, key.public)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_special_envelope_is_refused_without_blocking(tmp_path, key, capsys, kind):
    path = tmp_path / "m.yaml"
    write_manifest(path, DOC, key)
    env = envelope_path(path)
    env.unlink()
    if kind == "fifo":
        os.mkfifo(env)
    else:
        env.symlink_to("/dev/zero")
    code, out = _cli(["manifest", "verify", str(path), "--key", str(public_path(key.path))], capsys)
    assert code == 2 and out.count("\n") == 1, out
    assert "not a regular file" in out or "symbolic link" in out or "no signature" in out


def test_the_audit_memory_default_fits_the_machine():
    from harness.lean.child import physical_memory

    physical = physical_memory()
    if physical is None:
        pytest.skip("this system does not report its physical memory")
    assert fit_to_machine(60.0) <= physical * 0.75 / (1 << 30) + 0.1
    assert fit_to_machine(0.5) == 0.5  # a small archive -M is kept as it is


# --- fuzz: the envelope and payload readers ----------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


envelopes = st.one_of(
    st.binary(max_size=300),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.builds(
        lambda ptype, payload, sigs: json.dumps(
            {"payloadType": ptype, "payload": payload, "signatures": sigs}
        ).encode(),
        st.sampled_from([dsse.MANIFEST_TYPE, "x", ""]) | st.text(max_size=5),
        st.binary(max_size=200).map(_b64) | st.text(max_size=20),
        st.lists(
            st.fixed_dictionaries(
                {"sig": st.binary(max_size=70).map(_b64) | st.text(max_size=10)},
                optional={"keyid": st.text(max_size=16) | st.integers()},
            ),
            max_size=3,
        ),
    ),
    st.integers(0, 5000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(0, 5000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(envelopes)
def test_fuzz_envelope_reader_rejects_cleanly_in_bounded_memory(key, data):
    tracemalloc.start()
    try:
        try:
            dsse.verify(data, key.public, dsse.MANIFEST_TYPE)
        except (dsse.EnvelopeError, dsse.SignatureError):
            pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.one_of(
        st.binary(max_size=300),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.integers(0, 300).map(lambda n: b"- " * n + b"x"),  # deeper: the test above
        st.integers(0, 3000).map(lambda n: b"[" * n + b"]" * n),
    )
)
def test_fuzz_signed_payload_reader_rejects_cleanly(key, payload):
    from harness.manifest.manifest import verify_envelope

    envelope = dsse.sign(payload, dsse.MANIFEST_TYPE, key)
    tracemalloc.start()
    try:
        try:
            verify_envelope(envelope, key.public)
        except ManifestError:
            pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def test_read_signed_of_a_fuzzed_envelope_on_disk_is_clean(tmp_path, key):
    path = tmp_path / "m.yaml"
    write_manifest(path, DOC, key)
    env = envelope_path(path)
    raw = bytearray(env.read_bytes())
    for i in range(0, len(raw), max(1, len(raw) // 50)):
        flipped = bytearray(raw)
        flipped[i] ^= 0xFF
        env.write_bytes(bytes(flipped))
        with pytest.raises((dsse.EnvelopeError, dsse.SignatureError, ManifestError)):
            read_signed(path, key.public)
