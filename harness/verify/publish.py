"""Publication: a run is not a publication.

``verify`` writes a run under ``out/verify/RULESET/`` (its manifest signed with the user's
key) and, when the ruleset has a published record in ``manifests/``, compares itself with
it: **REPRODUCED** when the certificate hash, the model hash (the SHA-256 of the sealed model
file ``formal/Game.lean``) and the result (value and plies) agree, **DIFFERS** with the
fields that differ otherwise. Only ``verify --publish`` or ``publish`` write to
``manifests/``, and only with a project key: one whose public half is in ``manifests/keys/``
(a maintainer adds a new key there on purpose, in a commit of its own).

A publication is three things, all under ``MANIFESTS``::

    RULESET.yaml, RULESET.dsse.json          the verify manifest, as the run signed it
    archives/RULESET-<12 hex>.zip            the sealed archive (python -m harness seal)
    keys/<16 hex of the key id>.pub          the publisher's public key (already there)

Publishing a result removes an earlier archive of the same ruleset, the record of an open
attempt (``open/RULESET.yaml``) and that of a strong solve without a certificate
(``solved/RULESET.yaml``), which a certified result supersedes.

>>> print(Comparison("DIFFERS", Path("manifests/x.yaml"), ["result x in 5 plies, published x in 7"]
...                  ).line())
DIFFERS from manifests/x.yaml: result x in 5 plies, published x in 7
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.bounded import load_yaml, read_regular, read_text
from harness.errors import HarnessError
from harness.manifest import dsse
from harness.manifest.fsutil import write_atomic
from harness.manifest.keys import SigningKey
from harness.manifest.manifest import ManifestError, read_signed
from harness.manifest.published import (
    ARCHIVES_DIR,
    KEYS_DIR,
    OPEN_DIR,
    SOLVED_DIR,
    PublisherKey,
    UnlistedSigner,
    key_file_name,
    publisher_keys,
    read_envelope,
    read_published_record,
    record_path,
)


@dataclass
class Comparison:
    status: str  # REPRODUCED | DIFFERS
    published: Path
    differences: list[str] = field(default_factory=list)
    signer: str | None = None  # the published record's key id (16 hex), when it verified

    def line(self) -> str:
        by = f" (signed by {self.signer}…)" if self.signer else ""
        if self.status == "REPRODUCED":
            return (
                "REPRODUCED: certificate hash, model hash and result agree with "
                f"{self.published.as_posix()}{by}"
            )
        return f"DIFFERS from {self.published.as_posix()}{by}: " + "; ".join(self.differences)

    def as_dict(self) -> dict:
        return {
            "status": self.status,
            "published": self.published.as_posix(),
            "signer": self.signer,
            "differences": list(self.differences),
        }


def _facts(doc: dict) -> dict[str, object]:
    result = doc.get("result") or {}
    return {
        "certificate hash": (doc.get("certificate") or {}).get("hash"),
        "model hash": (doc.get("check") or {}).get("model_sha256"),
        "result": f"{result.get('value')} in {result.get('plies')} plies",
    }


def compare(doc: dict, published: Path, keys: dict[str, PublisherKey]) -> Comparison:
    """Compare a run's manifest ``doc`` with the published record at ``published``; the
    record's signature must verify with the publisher key its signer names in ``keys``."""
    published = Path(published)
    try:
        theirs, key = read_published_record(published, keys)
    except UnlistedSigner as exc:
        who = (exc.claimed or "?")[:16]
        return Comparison(
            "DIFFERS", published, [f"the published record's signer {who}… is not a key in keys/"]
        )
    except (OSError, ValueError, dsse.EnvelopeError, dsse.SignatureError, ManifestError) as exc:
        return Comparison("DIFFERS", published, [f"the published record does not verify: {exc}"])
    ours, want = _facts(doc), _facts(theirs)
    differences = [
        f"{name} {ours[name]}, published {want[name]}" for name in ours if ours[name] != want[name]
    ]
    return Comparison("DIFFERS" if differences else "REPRODUCED", published, differences, key.short)


def require_project_key(key: SigningKey, manifests: Path) -> PublisherKey:
    """The project key entry for ``key``, or a one-line error saying how to make it one."""
    folder = Path(manifests) / KEYS_DIR
    listed = publisher_keys(folder).get(key.keyid)
    if listed is None:
        raise HarnessError(
            f"--publish: the signing key {key.keyid[:16]}… is not a project key: its public "
            f"half is not in {folder}/ (a maintainer adds it there as "
            f"{folder / key_file_name(key.keyid)}, in its own commit)"
        )
    return listed


def publish_run(
    ruleset: str, run: Path, manifests: Path, key: SigningKey
) -> tuple[list[Path], list[Path]]:
    """Publish the verified run in ``run`` (``out/verify/RULESET``): its manifest and its
    sealed archive into ``manifests``. Returns (files written, files removed)."""
    from harness.manifest.seal import build_archive

    require_project_key(key, manifests)
    manifests = Path(manifests)
    local = Path(run) / "manifest.yaml"
    if not local.is_file():
        raise HarnessError(f"{local}: no verified run to publish (run `verify {ruleset}` first)")
    try:
        doc, data = read_signed(local, key.public)
    except (ValueError, dsse.EnvelopeError) as exc:
        raise HarnessError(f"{local}: {exc}") from None
    if doc.get("kind") != "verify" or doc.get("ruleset") != ruleset:
        raise HarnessError(f"{local}: not a verify manifest of {ruleset}")
    solved = manifests / SOLVED_DIR / f"{ruleset}.yaml"  # a solve record it now certifies
    _same_value_as_solved(doc, solved)
    archive, name, _ = build_archive(local, Path(run), key)
    target = record_path(manifests, ruleset)
    zip_path = manifests / ARCHIVES_DIR / f"{name}.zip"
    removed = [
        p for p in sorted((manifests / ARCHIVES_DIR).glob(f"{ruleset}-*.zip")) if p != zip_path
    ]
    removed += [p for p in _open_record(manifests, ruleset) if p.exists()]
    removed += [p for p in (solved, solved.with_name(f"{ruleset}.dsse.json")) if p.exists()]
    write_atomic(zip_path, archive, mode=0o644)
    write_atomic(target, data)
    envelope = read_envelope(Path(run) / "manifest.dsse.json")
    write_atomic(target.with_name(f"{ruleset}.dsse.json"), envelope)
    for stale in removed:
        stale.unlink()
    return [target, target.with_name(f"{ruleset}.dsse.json"), zip_path], removed


def _same_value_as_solved(doc: dict, solved: Path) -> None:
    """Refuse a certified result whose value differs from the ruleset's published solve
    record: one of the two solvers is wrong, and that is for a person to find out."""
    if not solved.exists():
        return
    try:
        theirs = load_yaml(read_text(solved, dsse.MAX_ENVELOPE_BYTES, "solve record"))
        said = (theirs.get("result") or {}) if isinstance(theirs, dict) else {}
    except (OSError, ValueError, yaml.YAMLError):
        said = {}
    ours = doc.get("result") or {}
    if (said.get("value"), said.get("plies")) != (ours.get("value"), ours.get("plies")):
        raise HarnessError(
            f"{solved}: says {said.get('value')} in {said.get('plies')} plies, the certified "
            f"run {ours.get('value')} in {ours.get('plies')}: find which solver is wrong "
            "before publishing either"
        )


def publish_open(ruleset: str, partial: Path, manifests: Path, key: SigningKey) -> Path | None:
    """Publish the signed record of an attempt whose budget ran out, unless a result of the
    ruleset is published (an open attempt never displaces one). Returns where it went."""
    require_project_key(key, manifests)
    if record_path(manifests, ruleset).exists():
        return None
    yml, env = _open_record(manifests, ruleset)
    manifest = read_regular(Path(partial) / "manifest.yaml", dsse.MAX_ENVELOPE_BYTES, "manifest")
    write_atomic(yml, manifest)
    write_atomic(env, read_envelope(Path(partial) / "manifest.dsse.json"))
    return yml


def _open_record(manifests: Path, ruleset: str) -> tuple[Path, Path]:
    folder = Path(manifests) / OPEN_DIR
    return folder / f"{ruleset}.yaml", folder / f"{ruleset}.dsse.json"
