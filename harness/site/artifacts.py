"""What the site publishes about results, read from what is published.

By default the site is built from the repository's publication alone, so a fresh clone shows
every published result with its replay, nothing re-run:

* ``MANIFESTS/*.yaml`` (``manifests/``): the signed verify manifests of published results;
* ``MANIFESTS/archives/RULESET-<12 hex>.zip``: the sealed archive of each. The replay's
  certificate and the Lean model as verified are read from it: every member used must have
  the SHA-256 the published manifest vouches for, or it is not used;
* ``MANIFESTS/open/*.yaml``: the signed records of attempts whose budget ran out;
* ``MANIFESTS/keys/*.pub``: the publisher keys. Each manifest's signature is checked with
  the key its signer names; a published record that does not verify stops the build. The
  keys are copied into the site (``keys/``) and linked from every "Check it yourself".

With ``include_local`` (``site --include-local``) the user's own runs are shown too, each
marked as a local run and never mixed in unmarked: ``FROM/RULESET/`` (``out/verify``; the run
folder with its manifest), ``FROM/RULESET.partial/manifest.yaml`` (a run that failed) and
``DIST/RULESET-<hash>.zip`` (``dist/``, what ``seal`` writes).

Nothing is made up: a missing artifact is reported as missing, and the pages say so.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.bounded import MAX_DOCUMENT, load_yaml, read_yaml
from harness.errors import HarnessError
from harness.manifest.fsutil import sha256_file
from harness.manifest.manifest import check_files
from harness.manifest.published import ARCHIVES_DIR, KEYS_DIR, OPEN_DIR, PublisherKey

ARCHIVE_SEAL = "MANIFEST.yaml"
# What a replay page needs from a run: the certificate, and the Lean model as verified.
REPLAY_PREFIXES = ("certificate/", "lean/Pop/")


@dataclass(frozen=True)
class Sources:
    """Where the artifacts are; None: not available.

    ``manifests_dir`` is the publication (records, ``archives/``, ``open/``, ``keys/``);
    ``from_dir`` and ``dist_dir`` are the user's local runs and archives, read only with
    ``include_local``. ``public_key``: an Ed25519 public key every published manifest must
    verify with (otherwise each is checked with the published key its signer names).
    """

    from_dir: Path | None = None
    manifests_dir: Path | None = None
    dist_dir: Path | None = None
    public_key: object | None = None
    include_local: bool = False


@dataclass
class Archive:
    path: Path
    name: str  # the folder inside the zip
    sha256: str
    size: int
    members: int
    seal: dict


@dataclass
class Result:
    """One ruleset attempted: its manifest and whatever else exists about the run."""

    ruleset: str
    manifest: dict
    manifest_path: Path
    envelope_path: Path | None
    published: bool  # in MANIFESTS: a result, or (under open/) an attempt whose budget ran out
    work: Path | None = None  # certificate/ and lean/ as verified (from the archive or run)
    notes: list[str] = field(default_factory=list)  # what is missing, in one line each
    archive: Archive | None = None
    signature: str = "not checked"  # "verified with key …" when it was checked
    publisher_key: PublisherKey | None = None  # the published key that signed it

    @property
    def local(self) -> bool:
        """A run on this machine (``--include-local``), not a publication."""
        return not self.published

    @property
    def verdict(self) -> str:
        return str(self.manifest.get("verdict"))

    @property
    def status(self) -> str:
        """``proved`` (Lean checked it), ``certified`` (Python checker; Lean not run) or
        ``open`` (no proof: a step failed)."""
        if self.verdict == "PASS":
            return "proved"
        if self.verdict == "INCOMPLETE":
            return "certified"
        return "open"

    @property
    def slug(self) -> str:
        return self.ruleset if self.published else f"local-{self.ruleset}"

    @property
    def page(self) -> str | None:
        return f"replay-{self.slug}.html" if self.status != "open" else None

    @property
    def failed_step(self) -> dict | None:
        for step in self.manifest.get("steps") or []:
            if step.get("status") in ("failed", "budget"):
                return step
        return None

    @property
    def seconds_spent(self) -> float | None:
        secs = [s.get("seconds") for s in self.manifest.get("steps") or []]
        secs = [s for s in secs if isinstance(s, int | float)]
        return round(sum(secs), 1) if secs else None


def _load_yaml(path: Path) -> dict:
    try:
        doc = read_yaml(path, what="manifest")
    except (OSError, ValueError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        first = first.removeprefix(f"{path}: ")  # the path is said once
        raise HarnessError(f"site: {path}: not a readable manifest ({first})") from None
    if not isinstance(doc, dict) or "kind" not in doc:
        raise HarnessError(f"site: {path}: not a manifest (no 'kind')")
    return doc


def _envelope(path: Path) -> Path | None:
    env = path.with_name(path.name.removesuffix(".yaml") + ".dsse.json")
    return env if env.is_file() else None


def _check_signature(result: Result, public, keys: dict[str, PublisherKey]) -> None:
    """A published record must verify: with ``public`` when the build was given one, else
    with the published key its signer names. An unknown signer is reported, not trusted."""
    from harness.manifest.keys import keyid
    from harness.manifest.manifest import read_signed
    from harness.manifest.published import claimed_signer

    claimed = claimed_signer(result.envelope_path) if result.envelope_path else None
    if public is None:
        found = keys.get(claimed or "")
        if found is None:
            result.signature = (
                f"not checked: the key it names ({(claimed or '?')[:16]}…) is not among the "
                "published keys"
            )
            return
        public, result.publisher_key = found.public, found
    else:
        result.publisher_key = keys.get(keyid(public))
    try:
        read_signed(result.manifest_path, public)
    except Exception as exc:  # noqa: BLE001 - every reason is reported the same way
        raise HarnessError(
            f"site: {result.manifest_path}: signature does not verify with the "
            f"{'given' if result.publisher_key is None else 'published'} key "
            f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
        ) from None
    result.signature = f"verified at build time with key {keyid(public)[:16]}…"


def _attach_work(result: Result, from_dir: Path | None) -> None:
    """A local run's folder, used when every file its manifest vouches for is unchanged."""
    if from_dir is None:
        result.notes.append("no verified run folder was given (--from), so there is no replay")
        return
    work = from_dir / result.ruleset
    if not work.is_dir():
        result.notes.append(
            f"the verified run's files ({from_dir.name}/{result.ruleset}/) are not here, so "
            "the certified line cannot be replayed"
        )
        return
    files = result.manifest.get("files") or {}
    problems = check_files(files, work) if files else ["the manifest lists no files"]
    if problems:
        result.notes.append(
            f"the run folder {from_dir.name}/{result.ruleset}/ does not match the manifest "
            f"({problems[0]}), so it is not used"
        )
        return
    result.work = work


def _attach_archive(result: Result, dist_dir: Path | None) -> None:
    """The sealed archive of this result: ``seal``'s default name first, then any zip whose
    name starts with the ruleset id (``seal --out``), whichever seals this certificate."""
    cert = result.manifest.get("certificate") or {}
    name = f"{result.ruleset}-{str(cert.get('hash'))[:12]}"
    candidates: list[Path] = []
    if dist_dir is not None and dist_dir.is_dir():
        candidates = [dist_dir / f"{name}.zip"] + sorted(dist_dir.glob(f"{result.ruleset}*.zip"))
    seen: set[Path] = set()
    problems = []
    for path in candidates:
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        archive, problem = _read_archive(path, name, cert.get("hash"))
        if archive is not None:
            result.archive = archive
            return
        problems.append(problem)
    if problems:
        result.notes.append(problems[0])
        return
    result.notes.append(
        f"no sealed archive {name}.zip was found"
        + (f" in {dist_dir}" if dist_dir is not None else "")
        + f" (python -m harness seal {result.ruleset})"
    )


def _read_archive(path: Path, name: str, cert_hash) -> tuple[Archive | None, str]:
    from harness.manifest.archive import SafeArchive

    try:
        with SafeArchive(path) as ar:
            members = ar.names
            seal = load_yaml(ar.read(f"{name}/{ARCHIVE_SEAL}", MAX_DOCUMENT).decode("utf-8"))
        sha, size = sha256_file(path), path.lstat().st_size
    except (KeyError, ValueError, yaml.YAMLError, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, f"the archive {path.name} cannot be read ({first}); it is not published"
    sealed = (seal or {}).get("certificate") if isinstance(seal, dict) else None
    if (seal or {}).get("kind") != "seal" or (sealed or {}).get("hash") != cert_hash:
        return None, f"the archive {path.name} does not seal this result's certificate"
    return Archive(path, name, sha, size, len(members), seal), ""


def _work_from_archive(result: Result, scratch: Path) -> None:
    """Read the replay's files out of the published archive into ``scratch``: only members
    whose SHA-256 is the one the published manifest vouches for (read with the archive
    stage's safe reader: no traversal, no bombs)."""
    from harness.manifest.archive import ArchiveError, SafeArchive

    archive = result.archive
    if archive is None:
        return
    files = result.manifest.get("files") or {}
    wanted = {rel: h for rel, h in files.items() if rel.startswith(REPLAY_PREFIXES)}
    target = scratch / result.slug
    try:
        with SafeArchive(archive.path) as ar:
            for rel, digest in sorted(wanted.items()):
                data = ar.read(f"{archive.name}/{rel}")
                if hashlib.sha256(data).hexdigest() != digest:
                    raise ArchiveError(f"{rel}: SHA-256 differs from the published manifest")
                path = target / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
    except (ArchiveError, KeyError, OSError) as exc:
        result.notes.append(
            f"the archive {archive.path.name} does not hold the published certificate "
            f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}), so there is "
            "no replay"
        )
        return
    if not any(rel.startswith("certificate/") for rel in wanted):
        result.notes.append("the published manifest vouches for no certificate files")
        return
    result.work = target


def _records(folder: Path, verdicts: tuple[str, ...] | None) -> dict[str, tuple[dict, Path]]:
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        doc = _load_yaml(path)
        if doc.get("kind") != "verify" or (verdicts and doc.get("verdict") not in verdicts):
            continue
        ruleset = str(doc.get("ruleset"))
        if path.name != f"{ruleset}.yaml":
            raise HarnessError(f"site: {path}: names ruleset {ruleset}, not its file name")
        out[ruleset] = (doc, path)
    return out


def collect_results(sources: Sources, scratch: Path | None = None) -> list[Result]:
    """Every ruleset attempted: published results, then published open attempts, then (with
    ``include_local``) the local runs, each ordered by ruleset id. ``scratch`` is a folder
    for the files read out of archives (it must outlive the page rendering)."""
    from harness.manifest.published import publisher_keys

    manifests_dir, from_dir = sources.manifests_dir, sources.from_dir
    for what, folder in (("--manifests", manifests_dir), ("--from", from_dir)):
        if folder is not None and folder.exists() and not folder.is_dir():
            raise HarnessError(f"site: {what} {folder} is not a folder")
    keys = publisher_keys(manifests_dir / KEYS_DIR) if manifests_dir is not None else {}
    published: list[Result] = []
    attempted: list[Result] = []
    if manifests_dir is not None and manifests_dir.is_dir():
        records = _records(manifests_dir, None)
        for ruleset, (doc, path) in records.items():
            published.append(Result(ruleset, doc, path, _envelope(path), True))
        if (manifests_dir / OPEN_DIR).is_dir():
            for ruleset, (doc, path) in _records(manifests_dir / OPEN_DIR, ("OPEN",)).items():
                if ruleset not in records:
                    attempted.append(Result(ruleset, doc, path, _envelope(path), True))
    for result in published:
        _check_signature(result, sources.public_key, keys)
        _attach_archive(result, manifests_dir / ARCHIVES_DIR)
        if scratch is not None:
            _work_from_archive(result, scratch)
    for result in attempted:
        _check_signature(result, sources.public_key, keys)
    local: list[Result] = []
    if sources.include_local and from_dir is not None and from_dir.is_dir():
        for ruleset, (doc, path) in _records_in_runs(from_dir).items():
            result = Result(ruleset, doc, path, _envelope(path), False)
            result.signature = "a local run: signed with this machine's key, not published"
            if result.status != "open":
                _attach_work(result, from_dir)
                _attach_archive(result, sources.dist_dir)
            local.append(result)
    return published + attempted + local


def _records_in_runs(from_dir: Path) -> dict[str, tuple[dict, Path]]:
    """The local runs in ``from_dir``: a finished run's ``RULESET/manifest.yaml`` stands for
    the ruleset; else a failed or open run's ``RULESET.partial/manifest.yaml``."""
    out: dict[str, tuple[dict, Path]] = {}
    for pattern, verdicts in (
        ("*/manifest.yaml", ("PASS", "INCOMPLETE")),
        ("*.partial/manifest.yaml", ("FAIL", "OPEN")),
    ):
        for path in sorted(from_dir.glob(pattern)):
            doc = _load_yaml(path)
            ruleset = str(doc.get("ruleset"))
            folder = path.parent.name.removesuffix(".partial")
            if doc.get("kind") != "verify" or doc.get("verdict") not in verdicts:
                continue
            if folder != ruleset:
                raise HarnessError(f"site: {path}: names ruleset {ruleset}, not its folder")
            out.setdefault(ruleset, (doc, path))
    return dict(sorted(out.items()))
