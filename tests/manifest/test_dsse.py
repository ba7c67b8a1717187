"""DSSE envelopes: the PAE of the spec, exact bytes, and every way an envelope can be bad."""

from __future__ import annotations

import base64
import json

import pytest

from harness.manifest import dsse


def test_pae_matches_the_dsse_specification():
    # The example of the DSSE protocol document.
    assert (
        dsse.pae("http://example.com/HelloWorld", b"hello world")
        == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )
    # Lengths are of bytes, not characters.
    assert dsse.pae("t", "é".encode()) == b"DSSEv1 1 t 2 \xc3\xa9"


def test_round_trip_returns_the_exact_bytes(key):
    # Odd but valid YAML: comments, quoting, trailing spaces. Re-serializing would lose them.
    payload = b"# note\nruleset:   'pop1'   \nlist: [1,2]\n"
    env = dsse.sign(payload, dsse.MANIFEST_TYPE, key)
    assert dsse.verify(env, key.public, dsse.MANIFEST_TYPE) == payload


def test_wrong_key_is_a_signature_error(key, other_key):
    env = dsse.sign(b"a: 1\n", dsse.MANIFEST_TYPE, key)
    with pytest.raises(dsse.SignatureError, match="no signature verifies"):
        dsse.verify(env, other_key.public, dsse.MANIFEST_TYPE)


def test_altered_payload_or_type_is_a_signature_error(key):
    env = json.loads(dsse.sign(b"value: x\n", dsse.MANIFEST_TYPE, key))
    forged = dict(env, payload=base64.b64encode(b"value: o\n").decode())
    with pytest.raises(dsse.SignatureError):
        dsse.verify(json.dumps(forged).encode(), key.public, dsse.MANIFEST_TYPE)
    # The type is signed too: relabelling the same payload breaks the signature.
    other = dict(env, payloadType="text/plain")
    with pytest.raises(dsse.SignatureError):
        dsse.verify(json.dumps(other).encode(), key.public, None)
    with pytest.raises(dsse.SignatureError, match="payloadType"):
        dsse.verify(json.dumps(other).encode(), key.public, dsse.MANIFEST_TYPE)


def test_every_truncation_is_refused(key):
    env = dsse.sign(b"ruleset: pop1\n" * 5, dsse.MANIFEST_TYPE, key)
    for cut in range(0, len(env) - 2, 7):
        with pytest.raises((dsse.EnvelopeError, dsse.SignatureError)):
            dsse.verify(env[:cut], key.public, dsse.MANIFEST_TYPE)


@pytest.mark.parametrize(
    "doc, message",
    [
        ([], "not a JSON object"),
        ({"payloadType": "t", "payload": ""}, "lacks signatures"),
        ({"payloadType": "t", "payload": "!!", "signatures": [{"sig": "AA=="}]}, "base64"),
        ({"payloadType": "t", "payload": "", "signatures": []}, "no signatures"),
        ({"payloadType": "t", "payload": "", "signatures": [{"keyid": "k"}]}, "no 'sig'"),
        ({"payloadType": 3, "payload": "", "signatures": [{"sig": ""}]}, "not a string"),
    ],
)
def test_malformed_envelopes_are_envelope_errors(key, doc, message):
    with pytest.raises(dsse.EnvelopeError, match=message):
        dsse.verify(json.dumps(doc).encode(), key.public, None)


def test_url_safe_base64_is_accepted(key):
    payload = bytes(range(250, 256)) * 3  # encodes with '+' and '/' in the standard alphabet
    env = json.loads(dsse.sign(payload, "t", key))
    env["payload"] = base64.urlsafe_b64encode(payload).decode()
    env["signatures"][0]["sig"] = base64.urlsafe_b64encode(
        base64.b64decode(env["signatures"][0]["sig"])
    ).decode()
    assert dsse.verify(json.dumps(env).encode(), key.public, "t") == payload
