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

import harness
from harness.bounded import read_regular
from harness.manifest import dsse
from harness.manifest.keys import (
    KeyFileError,
    default_key_path,
    keyid,
    load_private,
    load_public,
    public_path,
)

KEYS_DIR = "keys"


ARCHIVES_DIR = "archives"


OPEN_DIR = "open"


SOLVED_DIR = "solved"  # strong solves published without a certificate (kind: solve)


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


# The published folder of the checkout the running package comes from (absent in a wheel).
CHECKOUT_MANIFESTS = Path(harness.__file__).resolve().parents[1] / "manifests"


def key_folders(record: Path | None = None) -> list[Path]:
    """Where the signer of ``record`` (a manifest or an archive) is looked for, in order:
    the ``keys/`` of the published folder it lies in (``manifests/X.yaml``,
    ``manifests/archives/X.zip``, ``manifests/open/X.yaml`` and ``manifests/solved/X.yaml``
    all give ``manifests/keys``), ``manifests/keys`` of the
    working folder, and that of the checkout the running package comes from. Each folder
    once; folders that do not exist are left out.
    """
    folders = []
    if record is not None:
        here = Path(record).absolute().parent
        folders.append(here / KEYS_DIR)
        if here.name in (ARCHIVES_DIR, OPEN_DIR, SOLVED_DIR):
            folders.append(here.parent / KEYS_DIR)
    folders += [Path("manifests", KEYS_DIR).absolute(), CHECKOUT_MANIFESTS / KEYS_DIR]
    unique = dict.fromkeys(f.resolve() for f in folders if f.is_dir())
    return list(unique)


def own_key() -> PublisherKey | None:
    """The user's own key (the public half of :func:`default_key_path`), when there is one."""
    private = default_key_path()
    try:
        public = load_public(public_path(private))
    except (KeyFileError, OSError):
        try:
            public = load_private(private).public
        except (KeyFileError, OSError):
            return None
    return PublisherKey(public_path(private), public, keyid(public))


def signer_key(claimed: str | None, record: Path | None = None) -> PublisherKey | None:
    """The public key with the id an envelope claims: from :func:`key_folders` of ``record``,
    else the user's own key; None when neither holds it (or nothing is claimed)."""
    if claimed is None:
        return None
    found = publisher_keys(*key_folders(record)).get(claimed)
    if found is not None:
        return found
    mine = own_key()
    return mine if mine is not None and mine.keyid == claimed else None


class UnlistedSigner(ValueError):
    """A record's envelope names a key that is not among the publisher keys given (its id,
    or None when the envelope names none, is :attr:`claimed`)."""

    def __init__(self, claimed: str | None):
        super().__init__(f"signer {(claimed or '?')[:16]}… is not among the publisher keys")
        self.claimed = claimed


def read_published_record(path: Path, keys: dict[str, PublisherKey]) -> tuple[dict, PublisherKey]:
    """The signed record at ``path`` and the key in ``keys`` that its envelope names and that
    verifies it. :class:`UnlistedSigner` when no such key is listed; the errors of
    :func:`harness.manifest.manifest.read_signed` when the signature does not hold."""
    from harness.manifest.manifest import envelope_path, read_signed

    claimed = claimed_signer(envelope_path(Path(path)))
    key = keys.get(claimed or "")
    if key is None:
        raise UnlistedSigner(claimed)
    doc, _ = read_signed(Path(path), key.public)
    return doc, key


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
