"""Ed25519 signing keys for manifests: where they live, how they are made and read.

The private key is a PKCS#8 PEM file, written with mode 0600; the public key sits next to it
as ``<name>.pub`` (SubjectPublicKeyInfo PEM). The default location is outside every
repository, ``$XDG_CONFIG_HOME/pop-harness/signing-key.pem`` (``~/.config/...`` when
``XDG_CONFIG_HOME`` is unset), or ``$POP_HARNESS_KEY`` when set; ``--key`` overrides both.
:func:`generate` refuses to put a private key inside a git work tree, so it cannot be
committed by accident.

A key's id is the hex SHA-256 of its 32 raw public-key bytes; manifests and DSSE
signatures carry it so a reader can tell which key signed without trusting anything else.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "k.pem"
>>> key = generate(path)
>>> load_public(public_path(path)) == key.public, len(key.keyid)
(True, 64)
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from harness.bounded import TooLongError, UnsafeFileError, read_regular
from harness.manifest.fsutil import git_root, write_atomic

KEY_FILE = "signing-key.pem"

# The help of every --key option that takes a private key.
KEY_HELP = (
    "private signing key (default: $POP_HARNESS_KEY or ~/.config/pop-harness/signing-key.pem)"
)


class KeyFileError(ValueError):
    """A key that is missing, unreadable or not Ed25519 (one line, naming the file)."""


def default_key_path(env: dict[str, str] | None = None) -> Path:
    """The private key used when no ``--key`` is given.

    >>> default_key_path({"POP_HARNESS_KEY": "/k/x.pem"})
    PosixPath('/k/x.pem')
    >>> default_key_path({"XDG_CONFIG_HOME": "/cfg"})
    PosixPath('/cfg/pop-harness/signing-key.pem')
    """
    env = os.environ if env is None else env
    if env.get("POP_HARNESS_KEY"):
        return Path(env["POP_HARNESS_KEY"])
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "pop-harness" / KEY_FILE


def public_path(private: Path) -> Path:
    """Where the public half of ``private`` is stored: the same name plus ``.pub``."""
    return private.with_name(private.name + ".pub")


def raw_public(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def keyid(public: Ed25519PublicKey) -> str:
    """Hex SHA-256 of the raw public key."""
    return hashlib.sha256(raw_public(public)).hexdigest()


def public_pem(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


@dataclass(frozen=True)
class SigningKey:
    """A private key with its public half and id."""

    private: Ed25519PrivateKey
    path: Path | None = None

    @property
    def public(self) -> Ed25519PublicKey:
        return self.private.public_key()

    @property
    def keyid(self) -> str:
        return keyid(self.public)

    def sign(self, message: bytes) -> bytes:
        return self.private.sign(message)


def generate(path: Path, *, allow_in_repo: bool = False) -> SigningKey:
    """Make a new key at ``path`` (and ``path.pub``); never replaces an existing file.

    Raises :class:`KeyFileError` when either file exists or ``path`` lies in a git work tree.
    """
    path = Path(path)
    repo = git_root(path.parent if path.parent.exists() else _existing_parent(path))
    if repo is not None and not allow_in_repo:
        raise KeyFileError(
            f"{path}: refusing to write a private key inside the git work tree {repo}; "
            "choose a --key outside it (the default is ~/.config/pop-harness/)"
        )
    pub = public_path(path)
    for target in (path, pub):
        if target.exists():
            raise KeyFileError(f"{target}: already exists; not replacing a key (remove it first)")
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except (FileExistsError, NotADirectoryError):
        raise KeyFileError(f"{path}: a file stands where its folder must be") from None
    try:
        write_atomic(path, pem, mode=0o600, exclusive=True)
    except FileExistsError:
        raise KeyFileError(f"{path}: already exists; not replacing a key") from None
    write_atomic(pub, public_pem(private.public_key()), mode=0o644)
    return SigningKey(private, path)


def _existing_parent(path: Path) -> Path:
    for parent in Path(os.path.abspath(path)).parents:
        if parent.exists():
            return parent
    return Path("/")


MAX_KEY_BYTES = 64 << 10  # a PEM Ed25519 key is about 120 bytes


def _read(path: Path, what: str) -> bytes:
    try:
        return read_regular(path, MAX_KEY_BYTES, what)
    except FileNotFoundError:
        hint = " (run `python -m harness keys generate`)" if what == "private key" else ""
        raise KeyFileError(f"{path}: no {what} there{hint}") from None
    except UnsafeFileError as exc:
        raise KeyFileError(f"{path}: the {what} {exc.strerror}") from None
    except TooLongError:
        raise KeyFileError(
            f"{path}: too large for a {what} (over {MAX_KEY_BYTES:,} bytes)"
        ) from None
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read the {what}: {exc.strerror}") from None


def load_private(path: Path) -> SigningKey:
    """Read a PKCS#8 PEM Ed25519 private key."""
    data = _read(path, "private key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{path}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: not an Ed25519 key ({type(key).__name__})")
    return SigningKey(key, Path(path))


def load_public(path: Path) -> Ed25519PublicKey:
    """Read an Ed25519 public key: a public PEM, or a private PEM (its public half is used)."""
    data = _read(path, "public key")
    if b"PRIVATE KEY" in data:
        return load_private(path).public
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{path}: not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{path}: not an Ed25519 key ({type(key).__name__})")
    return key


def load_verifying_key(path: Path | None) -> Ed25519PublicKey:
    """The public key to verify with: ``path`` when given, else the default key's ``.pub``
    (or the default private key when only that exists)."""
    if path is not None:
        return load_public(path)
    default = default_key_path()
    pub = public_path(default)
    if pub.exists():
        return load_public(pub)
    if default.exists():
        return load_private(default).public
    raise KeyFileError(
        f"no public key given and none at {pub}; pass --key PUBLIC_KEY.pem "
        "(the signer's public key, published with the result)"
    )


def load_private_or_default(path: Path | None) -> SigningKey:
    """The signing key at ``path``, or at :func:`default_key_path` when none is given."""
    return load_private(path or default_key_path())


def signing_key_or_new(path: Path | None) -> SigningKey:
    """:func:`load_private_or_default`, making the default key first on a fresh machine (and
    saying so): what ``verify``, ``results`` and ``audit`` sign with."""
    if path is None and not default_key_path().exists():
        generate(default_key_path())
        print(f"made a new signing key {default_key_path()} (publish its .pub; never commit it)")
    return load_private_or_default(path)
