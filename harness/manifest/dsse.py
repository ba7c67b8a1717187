"""DSSE envelopes (Dead Simple Signing Envelope, v1) signed with Ed25519.

An envelope is JSON::

    {"payloadType": "application/vnd.pop-harness.manifest+yaml",
     "payload": "<base64 of the exact payload bytes>",
     "signatures": [{"keyid": "<hex sha256 of the raw public key>", "sig": "<base64>"}]}

The signature is over the pre-authentication encoding of the DSSE specification::

    PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body

with ``LEN`` the byte length in ASCII decimal and ``SP`` one space. Verification decodes the
payload bytes from the envelope and checks the signature over them *as they are*: nothing is
parsed and re-serialized before the signature holds, so what was signed is exactly what is
returned.

>>> from harness.manifest.keys import SigningKey
>>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
>>> key = SigningKey(Ed25519PrivateKey.generate())
>>> pae("t", b"hi")
b'DSSEv1 1 t 2 hi'
>>> env = sign(b"ruleset: x\\n", "t", key)
>>> verify(env, key.public, "t")
b'ruleset: x\\n'
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from harness.bounded import TooDeepError, loads_json
from harness.manifest.keys import SigningKey, keyid

MANIFEST_TYPE = "application/vnd.pop-harness.manifest+yaml"
# An envelope holds one manifest; anything far larger is not one of ours.
MAX_ENVELOPE_BYTES = 64 << 20


class EnvelopeError(ValueError):
    """The envelope cannot be read: not JSON, truncated, missing fields, bad base64."""


class SignatureError(ValueError):
    """The envelope is readable but no signature in it verifies with the given key."""


def pae(payload_type: str, payload: bytes) -> bytes:
    """The DSSE v1 pre-authentication encoding of ``payload`` with ``payload_type``."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def sign(payload: bytes, payload_type: str, key: SigningKey) -> bytes:
    """A DSSE envelope (JSON bytes, with a final newline) signing ``payload`` with ``key``."""
    envelope = {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [
            {
                "keyid": key.keyid,
                "sig": base64.b64encode(key.sign(pae(payload_type, payload))).decode("ascii"),
            }
        ],
    }
    return (json.dumps(envelope, indent=2) + "\n").encode("ascii")


def _b64(text: object, what: str) -> bytes:
    """Strict base64: standard or URL-safe alphabet (DSSE allows both), nothing else."""
    if not isinstance(text, str) or not text.isascii():
        raise EnvelopeError(f"{what} is not a base64 string")
    try:
        if "-" in text or "_" in text:
            if not re.fullmatch(r"[A-Za-z0-9_-]*={0,2}", text):
                raise binascii.Error("bad character")
            return base64.urlsafe_b64decode(text)
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise EnvelopeError(f"{what} is not valid base64 (truncated or altered?)") from None


def parse(envelope: bytes) -> tuple[str, bytes, list[tuple[str | None, bytes]]]:
    """Read an envelope without judging it: (payloadType, payload bytes, [(keyid, sig)])."""
    if len(envelope) > MAX_ENVELOPE_BYTES:
        raise EnvelopeError(f"envelope is {len(envelope)} bytes, over {MAX_ENVELOPE_BYTES}")
    try:
        doc = loads_json(envelope.decode("utf-8"))  # nesting bounded before parsing
    except UnicodeDecodeError:
        raise EnvelopeError("envelope is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise EnvelopeError(
            f"envelope is not complete JSON ({exc.msg} at char {exc.pos})"
        ) from None
    except TooDeepError as exc:
        raise EnvelopeError(f"envelope is not a DSSE envelope: {exc}") from None
    if not isinstance(doc, dict):
        raise EnvelopeError("envelope is not a JSON object")
    missing = [f for f in ("payloadType", "payload", "signatures") if f not in doc]
    if missing:
        raise EnvelopeError(f"envelope lacks {', '.join(missing)}")
    if not isinstance(doc["payloadType"], str):
        raise EnvelopeError("payloadType is not a string")
    payload = _b64(doc["payload"], "payload")
    sigs = doc["signatures"]
    if not isinstance(sigs, list) or not sigs:
        raise EnvelopeError("envelope has no signatures")
    out: list[tuple[str | None, bytes]] = []
    for i, s in enumerate(sigs):
        if not isinstance(s, dict) or "sig" not in s:
            raise EnvelopeError(f"signature {i} has no 'sig'")
        kid = s.get("keyid")
        if kid is not None and not isinstance(kid, str):
            raise EnvelopeError(f"signature {i} has a keyid that is not a string")
        out.append((kid, _b64(s["sig"], f"signature {i}")))
    return doc["payloadType"], payload, out


def verify(envelope: bytes, public: Ed25519PublicKey, payload_type: str | None) -> bytes:
    """The payload bytes, if a signature by ``public`` verifies over them.

    ``payload_type`` None accepts any type (it is still covered by the signature). Raises
    :class:`EnvelopeError` for an unreadable envelope and :class:`SignatureError` when the
    type differs or no signature verifies.
    """
    ptype, payload, sigs = parse(envelope)
    if payload_type is not None and ptype != payload_type:
        raise SignatureError(f"payloadType is {ptype!r}, expected {payload_type!r}")
    message = pae(ptype, payload)
    want = keyid(public)
    for _kid, sig in sigs:
        # The keyid is only a hint; a signature is tried whatever id it claims.
        try:
            public.verify(sig, message)
        except InvalidSignature:
            continue
        return payload
    ids = sorted({k for k, _ in sigs if k})
    signed_by = f"signed by key {', '.join(i[:16] for i in ids)}" if ids else "no keyid given"
    raise SignatureError(
        f"no signature verifies with key {want[:16]} ({signed_by}); "
        "wrong key, or the payload or signature was altered"
    )
