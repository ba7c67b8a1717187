"""The published folder (``manifests/``) as readers see it: where a record, its archives and
the publishers' keys lie, and which key an envelope says signed it (a hint, verified
separately). ``verify``, ``audit``, ``results`` and the site read it; only
:mod:`harness.verify.publish` writes it.

>>> key_file_name("c94b13b79e960cc6" + "0" * 48)
'c94b13b79e960cc6.pub'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from harness.bounded import read_regular
from harness.manifest import dsse
from harness.manifest.keys import KeyFileError, keyid, load_public

KEYS_DIR = "keys"


ARCHIVES_DIR = "archives"


OPEN_DIR = "open"


KEYID_FILE_HEX = 16  # manifests/keys/<first 16 hex digits of the key id>.pub


@dataclass(frozen=True)
class PublisherKey:
    """A public key a publisher put in a ``keys/`` folder."""

    path: Path
    public: Ed25519PublicKey
    keyid: str

    @property
    def short(self) -> str:
        return self.keyid[:KEYID_FILE_HEX]


def publisher_keys(*folders: Path | None) -> dict[str, PublisherKey]:
    """Every readable Ed25519 ``*.pub`` in ``folders``, by full key id (first folder wins)."""
    found: dict[str, PublisherKey] = {}
    for folder in folders:
        if folder is None or not Path(folder).is_dir():
            continue
        for path in sorted(Path(folder).glob("*.pub")):
            try:
                public = load_public(path)
            except KeyFileError:
                continue  # not a key: it vouches for nothing
            found.setdefault(keyid(public), PublisherKey(path, public, keyid(public)))
    return found


def key_file_name(key_id: str) -> str:
    """The name a public key is published under.

    >>> key_file_name("c94b13b79e960cc6" + "0" * 48)
    'c94b13b79e960cc6.pub'
    """
    return f"{key_id[:KEYID_FILE_HEX]}.pub"


def claimed_signer(envelope: Path) -> str | None:
    """The key id the envelope file's first signature names (None when unreadable)."""
    try:
        return claimed_signer_of(read_envelope(Path(envelope)))
    except (OSError, ValueError):
        return None


def claimed_signer_of(envelope: bytes) -> str | None:
    """The key id an envelope's first signature names: a hint, verified separately."""
    try:
        _, _, sigs = dsse.parse(envelope)
    except dsse.EnvelopeError:
        return None
    return sigs[0][0] if sigs else None


def record_path(manifests: Path, ruleset: str) -> Path:
    return Path(manifests) / f"{ruleset}.yaml"


def read_envelope(path: Path) -> bytes:
    """The bytes of a signature envelope: a regular file within the envelope bound."""
    return read_regular(path, dsse.MAX_ENVELOPE_BYTES, "signature envelope")
