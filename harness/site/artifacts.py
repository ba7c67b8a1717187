"""What the site publishes about results, read from the artifacts the other stages wrote.

* ``MANIFESTS/*.yaml`` (``manifests/`` by default): the signed verify manifests of published
  results (``python -m harness verify`` writes one per run that did not fail);
* ``MANIFESTS/open/*.yaml``: the signed records of attempts whose budget ran out
  (``verify --budget``), published as open results;
* ``FROM/RULESET/`` (``out/verify`` by default): the verified run's files: the certificate the
  replay is derived from and the Lean model as verified. Used only when every file the
  manifest vouches for still has the SHA-256 it records;
* ``FROM/RULESET.partial/manifest.yaml``: the signed record of a run that failed (a ruleset
  attempted but not proved: no forced win found, a budget ran out, a check failed);
* ``DIST/RULESET-<hash>.zip`` (``dist/`` by default): the sealed archive
  (``python -m harness seal``), copied into the site for download with its SHA-256.

Nothing is made up: a missing artifact is reported as missing, and the pages say so.
"""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.cli import HarnessError
from harness.manifest.manifest import check_files

ARCHIVE_SEAL = "MANIFEST.yaml"


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
    work: Path | None = None  # the verified run's folder, if its files match the manifest
    notes: list[str] = field(default_factory=list)  # what is missing, in one line each
    archive: Archive | None = None
    signature: str = "not checked"  # "verified with key …" when the build was given a key

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
        return self.ruleset

    @property
    def page(self) -> str | None:
        return f"replay-{self.ruleset}.html" if self.status != "open" else None

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
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise HarnessError(f"site: {path}: not a readable manifest ({first})") from None
    if not isinstance(doc, dict) or "kind" not in doc:
        raise HarnessError(f"site: {path}: not a manifest (no 'kind')")
    return doc


def _envelope(path: Path) -> Path | None:
    env = path.with_name(path.name.removesuffix(".yaml") + ".dsse.json")
    return env if env.is_file() else None


def _check_signature(result: Result, public) -> None:
    from harness.manifest.keys import keyid
    from harness.manifest.manifest import read_signed

    try:
        read_signed(result.manifest_path, public)
    except Exception as exc:  # noqa: BLE001 - every reason is reported the same way
        raise HarnessError(
            f"site: {result.manifest_path}: signature does not verify with the given key "
            f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
        ) from None
    result.signature = f"verified at build time with key {keyid(public)[:16]}…"


def _attach_work(result: Result, from_dir: Path | None) -> None:
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
    data = path.read_bytes()
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.namelist()
            seal = yaml.safe_load(zf.read(f"{name}/{ARCHIVE_SEAL}").decode("utf-8"))
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, yaml.YAMLError, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, f"the archive {path.name} cannot be read ({first}); it is not published"
    sealed = (seal or {}).get("certificate") if isinstance(seal, dict) else None
    if (seal or {}).get("kind") != "seal" or (sealed or {}).get("hash") != cert_hash:
        return None, f"the archive {path.name} does not seal this result's certificate"
    sha = hashlib.sha256(data).hexdigest()
    return Archive(path, name, sha, len(data), len(members), seal), ""


def collect_results(
    manifests_dir: Path | None,
    from_dir: Path | None,
    dist_dir: Path | None,
    public_key=None,
) -> list[Result]:
    """Every ruleset attempted, published results first, each ordered by ruleset id."""
    for what, folder in (("--manifests", manifests_dir), ("--from", from_dir)):
        if folder is not None and folder.exists() and not folder.is_dir():
            raise HarnessError(f"site: {what} {folder} is not a folder")
    published: dict[str, Result] = {}
    if manifests_dir is not None and manifests_dir.is_dir():
        for path in sorted(manifests_dir.glob("*.yaml")):
            doc = _load_yaml(path)
            if doc.get("kind") != "verify":
                continue
            ruleset = str(doc.get("ruleset"))
            if path.name != f"{ruleset}.yaml":
                raise HarnessError(f"site: {path}: names ruleset {ruleset}, not its file name")
            published[ruleset] = Result(ruleset, doc, path, _envelope(path), True)
    attempted: dict[str, Result] = {}
    if manifests_dir is not None and (manifests_dir / "open").is_dir():
        # Published attempts whose budget ran out (verify --budget): open results.
        for path in sorted((manifests_dir / "open").glob("*.yaml")):
            doc = _load_yaml(path)
            ruleset = str(doc.get("ruleset"))
            if doc.get("kind") == "verify" and doc.get("verdict") == "OPEN":
                if path.name != f"{ruleset}.yaml":
                    raise HarnessError(f"site: {path}: names ruleset {ruleset}, not its file name")
                if ruleset not in published:
                    attempted[ruleset] = Result(ruleset, doc, path, _envelope(path), True)
    if from_dir is not None and from_dir.is_dir():
        for path in sorted(from_dir.glob("*.partial/manifest.yaml")):
            doc = _load_yaml(path)
            ruleset = str(doc.get("ruleset"))
            # A failed run leaves its folder behind; a later good run of the same ruleset
            # stands for it in the table.
            if doc.get("kind") == "verify" and doc.get("verdict") in ("FAIL", "OPEN"):
                if ruleset not in published and ruleset not in attempted:
                    attempted[ruleset] = Result(ruleset, doc, path, _envelope(path), False)
    for result in published.values():
        if public_key is not None:
            _check_signature(result, public_key)
        _attach_work(result, from_dir)
        _attach_archive(result, dist_dir)
    for result in attempted.values():
        if public_key is not None:
            _check_signature(result, public_key)
    return sorted(published.values(), key=lambda r: r.ruleset) + sorted(
        attempted.values(), key=lambda r: r.ruleset
    )
