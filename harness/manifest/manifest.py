"""Signed YAML manifests: what a run produced and what it vouches for.

A manifest is a YAML mapping written once to bytes; those exact bytes are signed in a DSSE
envelope (:mod:`harness.manifest.dsse`). On disk it is two files side by side::

    NAME.yaml        the YAML, for people to read
    NAME.dsse.json   the envelope: the same bytes in base64, and the signature

Verifying takes the payload out of the envelope, checks the signature over it, and compares
it byte for byte with ``NAME.yaml`` when that file is there. The YAML is parsed only after
the signature holds, and never written back out, so nothing is lost or changed in a
round trip.

Every manifest has ``format`` (:data:`FORMAT`), ``kind`` (``verify``, ``seal``,
``audit``, ``results`` or ``solve``), ``signer`` (the key id), and ``files``: relative
path -> SHA-256 of every file it vouches for. See ``docs/verification.md`` for the fields
of each kind.

>>> from harness.manifest.keys import SigningKey
>>> from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
>>> key = SigningKey(Ed25519PrivateKey.generate())
>>> data, env = sign_manifest({"kind": "verify", "ruleset": "pop1-4x4", "files": {}}, key)
>>> data.splitlines()[0]
b'format: pop-harness/manifest/1'
>>> verify_envelope(env, key.public)["ruleset"]
'pop1-4x4'
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from harness.bounded import TooDeepError, load_yaml, read_regular
from harness.manifest import dsse
from harness.manifest.fsutil import sha256_file, write_atomic
from harness.manifest.keys import SigningKey

FORMAT = "pop-harness/manifest/1"
YAML_SUFFIX = ".yaml"
ENVELOPE_SUFFIX = ".dsse.json"
# results: the signed table of `results`; solve: a strong solve without a certificate
KINDS = ("verify", "seal", "audit", "results", "solve")


class ManifestError(ValueError):
    """A manifest that cannot be used: unreadable, unsigned, or not a manifest (one line)."""


class _Dumper(yaml.SafeDumper):
    """Plain block YAML: no anchors or aliases (a reader should see every value in place)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # Multi-line text (theorem statements, expected outputs) as literal blocks, verbatim.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _list_representer(dumper: yaml.SafeDumper, value: list) -> yaml.Node:
    # Short lists of plain values (axioms, imports) read best on one line: [a, b, c].
    flat = all(isinstance(v, str | int | float | bool) or v is None for v in value)
    short = flat and sum(len(str(v)) + 2 for v in value) <= 80
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=short)


_Dumper.add_representer(str, _str_representer)
_Dumper.add_representer(list, _list_representer)


def dump_yaml(doc: dict) -> bytes:
    """YAML bytes for ``doc`` in its own key order (UTF-8, block style, no aliases).

    >>> dump_yaml({"b": 1, "a": [1, 2], "s": "x\\ny"}).decode()
    'b: 1\\na: [1, 2]\\ns: |-\\n  x\\n  y\\n'
    """
    text = yaml.dump(
        doc,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=100,
    )
    return text.encode("utf-8")


def now_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def envelope_path(yaml_path: Path) -> Path:
    """``X.yaml`` -> ``X.dsse.json``."""
    name = yaml_path.name
    stem = name[: -len(YAML_SUFFIX)] if name.endswith(YAML_SUFFIX) else name
    return yaml_path.with_name(stem + ENVELOPE_SUFFIX)


def yaml_path_of(envelope: Path) -> Path:
    """``X.dsse.json`` -> ``X.yaml``."""
    name = envelope.name
    stem = name[: -len(ENVELOPE_SUFFIX)] if name.endswith(ENVELOPE_SUFFIX) else name
    return envelope.with_name(stem + YAML_SUFFIX)


# --------------------------------------------------------------------------------------------
# Making and writing


def sign_manifest(doc: dict, key: SigningKey) -> tuple[bytes, bytes]:
    """(YAML bytes, envelope bytes) for ``doc``, with ``format`` first and ``signer`` set."""
    if doc.get("kind") not in KINDS:
        raise ValueError(f"manifest kind must be one of {KINDS}, got {doc.get('kind')!r}")
    full = {"format": FORMAT, **{k: v for k, v in doc.items() if k != "format"}}
    full["signer"] = {"keyid": key.keyid, "algorithm": "ed25519", "envelope": "DSSE v1"}
    data = dump_yaml(full)
    return data, dsse.sign(data, dsse.MANIFEST_TYPE, key)


def write_manifest(yaml_path: Path, doc: dict, key: SigningKey) -> bytes:
    """Sign ``doc`` and write ``yaml_path`` and its envelope, each atomically; returns the YAML.

    The envelope is written last: a reader who finds it finds the matching YAML too.
    """
    data, envelope = sign_manifest(doc, key)
    write_atomic(yaml_path, data)
    write_atomic(envelope_path(yaml_path), envelope)
    return data


# --------------------------------------------------------------------------------------------
# Reading and verifying


def parse_payload(payload: bytes) -> dict:
    """Parse signed YAML bytes into a manifest mapping (ManifestError if it is not one)."""
    try:
        doc = load_yaml(payload.decode("utf-8"), what="signed payload")
    except TooDeepError as exc:
        raise ManifestError(f"signed payload is not a manifest ({exc})") from None
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ManifestError(f"signed payload is not YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ManifestError(f"signed payload is not a {FORMAT} manifest")
    if doc.get("kind") not in KINDS:
        raise ManifestError(f"manifest kind {doc.get('kind')!r} is not one of {', '.join(KINDS)}")
    if not isinstance(doc.get("files", {}), dict):
        raise ManifestError("manifest 'files' is not a mapping")
    return doc


def verify_envelope(envelope: bytes, public: Ed25519PublicKey) -> dict:
    """The manifest in ``envelope`` if it is signed by ``public``.

    Raises dsse.EnvelopeError (unreadable), dsse.SignatureError (not signed by that key) or
    ManifestError (signed, but not a manifest).
    """
    return parse_payload(dsse.verify(envelope, public, dsse.MANIFEST_TYPE))


def read_signed(path: Path, public: Ed25519PublicKey) -> tuple[dict, bytes]:
    """Verify the manifest at ``path`` (its YAML or its envelope); (manifest, YAML bytes).

    With the YAML next to the envelope, the two must be the same bytes; a YAML without an
    envelope is unsigned and refused.
    """
    path = Path(path)
    if path.name.endswith(ENVELOPE_SUFFIX):
        env_path, yml = path, yaml_path_of(path)
    else:
        env_path, yml = envelope_path(path), path
    if path == yml and not os.path.lexists(yml):
        raise ManifestError(f"{yml}: not found")  # the file asked for, not its envelope
    if not os.path.lexists(env_path):
        raise ManifestError(f"{env_path}: no signature envelope (an unsigned manifest is refused)")
    # Regular files only, never followed through a link, and bounded in size.
    envelope = read_regular(env_path, dsse.MAX_ENVELOPE_BYTES, "signature envelope")
    payload = dsse.verify(envelope, public, dsse.MANIFEST_TYPE)
    if os.path.lexists(yml):
        if read_regular(yml, dsse.MAX_ENVELOPE_BYTES, "manifest") != payload:
            raise dsse.SignatureError(
                f"{yml}: differs from the payload signed in {env_path.name} (edited after signing)"
            )
    elif path == yml:
        raise ManifestError(f"{yml}: not found")
    return parse_payload(payload), payload


def check_files(files: dict, root: Path) -> list[str]:
    """Differences between ``files`` (path -> SHA-256) and the files under ``root``.

    Paths are relative, '/'-separated, and must stay inside ``root``.
    """
    problems = []
    for rel, want in sorted(files.items()):
        if not isinstance(rel, str) or rel.startswith("/") or ".." in rel.split("/"):
            problems.append(f"{rel!r}: not a relative path inside the folder")
            continue
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
        elif sha256_file(path) != want:
            problems.append(f"{rel}: SHA-256 differs from the manifest")
    return problems


# --------------------------------------------------------------------------------------------
# What every manifest records about where it was made


def git_state(repo: Path) -> dict:
    """The solver commit: ``git describe`` with dirty flagged, the full revision, and ``dirty``.

    Outside a git checkout (an unpacked archive, a wheel) every field says so instead.
    """

    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(
                ["git", *args], cwd=repo, capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    revision = git("rev-parse", "HEAD")
    if revision is None:
        return {"describe": "not a git checkout", "revision": None, "dirty": None}
    describe = git("describe", "--always", "--dirty", "--tags", "--abbrev=12") or revision
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"describe": describe, "revision": revision, "dirty": bool(status)}


def environment() -> dict:
    """Versions of what ran: Python, numpy, the harness, and the platform (no host name)."""
    import numpy

    from harness import __version__

    return {
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "numpy": numpy.__version__,
        "harness": __version__,
        # platform.platform() names the OS, kernel release and machine, never the host.
        "platform": platform.platform(),
        "byteorder": sys.byteorder,
    }
