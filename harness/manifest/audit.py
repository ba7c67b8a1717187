"""``python -m harness audit ARCHIVE``: re-check a sealed archive, ours or seed-style.

Two layouts are understood:

- **ours** (written by ``seal``): one folder with ``MANIFEST.yaml``/``MANIFEST.dsse.json``.
  The audit checks the archive's SHA-256 (``--sha256``), the manifest's signature (``--key``,
  the publisher's public key), that ``MANIFEST.yaml`` is the signed payload byte for byte,
  the SHA-256 of every member against the manifest (members missing, extra or changed are
  each a difference), re-checks the certificate with ``python -m harness check``, and runs
  the re-run steps of ``CHECK.md`` where Lean is installed, comparing axioms and GUARD_HITS
  with what the manifest recorded.
- **seed-style**: a ``*/formal/Game.lean`` with a ``lean-toolchain`` beside it or above it.
  The published steps give the SHA-256 of ``Game.lean`` (``--model-sha256``), the theorems
  whose axioms to print (``--theorem``, repeatable) and the expected output (``--expect
  FILE``: the lines the page shows). The audit checks the SHA-256, writes ``Check.lean`` =
  ``Game.lean`` + one ``#print axioms`` line per theorem, runs ``lean +TOOLCHAIN -M…`` under
  an OS memory cap, and compares the output with the expected lines.

Verdicts: **PASS** every check ran and passed (exit 0); **FAIL** a check failed, every
difference listed (exit 1); **INCOMPLETE** nothing failed but something could not be run,
e.g. Lean without a toolchain (exit 3). An archive that cannot be read safely at all (not a
zip, path traversal, absolute paths, symlinks, duplicate names, zip bombs) is unusable input
(exit 2): nothing is extracted and nothing is written.

The audit manifest (``OUT/audit.yaml`` + ``OUT/audit.dsse.json``) is signed with the
auditor's key. Everything the audit writes stays inside ``OUT``.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.atomic import make_folder, name_error, remove_made
from harness.bounded import read_yaml
from harness.errors import EXIT_BUDGET, EXIT_FAILED, EXIT_OK, EXIT_USAGE, HarnessError
from harness.lean.parse import parse_output
from harness.lean.toolchain import (
    elan_home,
    find_tool,
    parse_lean_version,
    pinned_version,
    toolchain_dir_name,
)
from harness.manifest import dsse
from harness.manifest.archive import ArchiveError, IntegrityError, Limits, SafeArchive
from harness.manifest.fsutil import scrub_paths, sha256_bytes, sha256_file, write_atomic
from harness.manifest.keys import SigningKey
from harness.manifest.manifest import ManifestError, environment, now_utc, parse_payload
from harness.manifest.manifest import write_manifest as write_signed
from harness.manifest.rerender import RENDER_REPORT, rerender
from harness.manifest.seal import ENVELOPE_NAME, MANIFEST_NAME
from harness.verify.stages import HarnessRunner

EXIT_PASS, EXIT_FAIL, EXIT_UNUSABLE, EXIT_INCOMPLETE = EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_BUDGET
VERDICT_EXIT = {"PASS": EXIT_PASS, "FAIL": EXIT_FAIL, "INCOMPLETE": EXIT_INCOMPLETE}
GIB = 1 << 30
DEFAULT_MEMORY_GIB = 60.0  # the seeds' -M60000; RLIMIT_AS needs headroom over the peak RSS
DEFAULT_TIMEOUT = 3600.0
_MODEL_RE = re.compile(r"^(?:.+/)?formal/Game\.lean$")
_PIN_RE = re.compile(r"^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?(?::[A-Za-z0-9_.+-]+)?$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class UnusableInput(HarnessError):
    """The archive or the options cannot be audited at all (exit 2)."""

    exit_code = EXIT_UNUSABLE


@dataclass
class Check:
    name: str
    status: str  # passed | failed | not run
    detail: str = ""

    def row(self) -> dict:
        return {"check": self.name, "status": self.status, "detail": self.detail}


@dataclass
class Expectations:
    """What the published steps promise for a seed-style archive (all optional)."""

    archive_sha256: str | None = None
    model_sha256: str | None = None
    theorems: list[str] = field(default_factory=list)
    expected_output: str | None = None


@dataclass
class LeanRun:
    """How one ``lean Check.lean`` went, or why it did not run."""

    ran: bool
    reason: str = ""
    command: list[str] = field(default_factory=list)
    exit_code: int | None = None
    seconds: float | None = None
    peak_mib: float | None = None
    output: str = ""
    version: str | None = None
    timed_out: bool = False


LeanRunner = Callable[[Path, str, float, float], LeanRun]


def normalize_hex(text: str | None, what: str) -> str | None:
    """Lower-case 64-digit hex, or UnusableInput naming ``what``.

    >>> normalize_hex(" AB" + "0" * 62, "--sha256")
    'ab00000000000000000000000000000000000000000000000000000000000000'
    """
    if text is None:
        return None
    value = text.strip().lower()
    if not _HEX64.match(value):
        raise UnusableInput(f"{what}: expected 64 hex digits (a SHA-256), got {text!r}")
    return value


# --------------------------------------------------------------------------------------------
# Running Lean on one file


def find_lean(pin: str) -> tuple[list[str] | None, str, str | None]:
    """(command prefix, reason when none, version) for checking a file with toolchain ``pin``.

    With elan and the pinned toolchain installed: ``lean +PIN``, as the published steps say.
    Without elan, a ``lean`` on PATH is used only if it is the pinned release.
    """
    lean = find_tool("lean")
    if lean is None:
        return (
            None,
            (
                "no Lean toolchain here (lean not on PATH); install elan, then "
                f"`elan toolchain install {pin}`"
            ),
            None,
        )
    elan = find_tool("elan")
    if elan is not None:
        if not (elan_home() / "toolchains" / toolchain_dir_name(pin)).is_dir():
            why = f"elan is installed but {pin} is not; run `elan toolchain install {pin}`"
            return None, why, None
        return [str(lean), f"+{pin}"], "", pinned_version(pin)
    import subprocess

    try:
        line = subprocess.run(
            [str(lean), "--version"], capture_output=True, text=True, timeout=60
        ).stdout.strip()
        version = parse_lean_version(line)
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        return None, f"{lean} does not report a version ({exc})", None
    want = pinned_version(pin)
    if want is not None and version != want:
        return None, f"lean on PATH is {version}, the archive pins {pin}; install elan", version
    return [str(lean)], "", version


def address_space_cap(memory_gib: float) -> int:
    """RLIMIT_AS for a run with ``-M`` of ``memory_gib``: half again, and at least 4 GiB more.

    >>> address_space_cap(8) // GIB, address_space_cap(60) // GIB
    (12, 90)
    """
    return int(memory_gib * GIB + max(4 * GIB, memory_gib * GIB / 2))


def run_lean_file(folder: Path, pin: str, memory_gib: float, timeout: float) -> LeanRun:
    """Run ``lean [+PIN] -M… Check.lean`` in ``folder`` under an address-space cap."""
    from harness.lean.child import run_limited

    prefix, reason, version = find_lean(pin)
    if prefix is None:
        return LeanRun(False, reason, version=version)
    command = [*prefix, f"-M{int(memory_gib * 1024)}", "Check.lean"]
    # -M is Lean's own (soft) limit on what it allocates; the OS cap is on address space,
    # which runs well above resident memory, so it gets headroom over -M.
    cap = address_space_cap(memory_gib)
    result = run_limited(command, cwd=folder, memory_bytes=cap, timeout=timeout)
    return LeanRun(
        True,
        "",
        command,
        result.exit_code,
        round(result.seconds, 1),
        result.peak_mib,
        result.output,
        version,
        result.timed_out,
    )


def compare_output(actual: str, expected: str | None, theorems: list[str]) -> list[str]:
    """Differences between Lean's output and the expected lines: errors, axioms (as sets),
    GUARD_HITS (as name -> count). Empty when they agree.

    >>> compare_output("'t' depends on axioms: [propext]", "'t' depends on axioms: [propext]",
    ...                ["t"])
    []
    >>> compare_output("'t' depends on axioms: [sorryAx]", "'t' depends on axioms: [propext]",
    ...                ["t"])
    ['t: axioms [sorryAx], expected [propext]']
    """
    got = parse_output(actual)
    problems = [f"Lean error: {m.one_line()}" for m in got.errors]
    problems += [f"unreadable Lean output: {p}" for p in got.problems]
    for name in theorems:
        if name not in got.axioms:
            problems.append(f"{name}: no `#print axioms` answer in Lean's output")
    if expected is None:
        return problems
    want = parse_output(expected)
    for name, axioms in sorted(want.axioms.items()):
        have = got.axioms.get(name)
        if have is not None and sorted(have) != sorted(axioms):
            problems.append(f"{name}: axioms [{', '.join(have)}], expected [{', '.join(axioms)}]")
        elif have is None and name not in theorems:
            problems.append(f"{name}: no `#print axioms` answer in Lean's output")
    for name in sorted(set(got.axioms) - set(want.axioms)):
        problems.append(f"{name}: axioms printed but not expected")
    if want.guard_lines != got.guard_lines:
        problems.append(f"{got.guard_lines} GUARD_HITS lines printed, expected {want.guard_lines}")
    for name in sorted(set(want.guard_hits) | set(got.guard_hits)):
        w, g = want.guard_hits.get(name), got.guard_hits.get(name)
        if w != g:
            problems.append(f"GUARD_HITS {name}={g}, expected {w}")
    return problems


# --------------------------------------------------------------------------------------------
# The audit


class Auditor:
    """One audit of one archive into the folder ``out``."""

    def __init__(
        self,
        archive: Path,
        out: Path,
        *,
        verify_key=None,
        publisher_keys: dict | None = None,
        sign_key: SigningKey,
        expect: Expectations | None = None,
        memory_gib: float | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        runner: HarnessRunner | None = None,
        lean_runner: LeanRunner | None = None,
        limits: Limits | None = None,
        force: bool = False,
    ) -> None:
        self.archive = Path(archive)
        self.out = Path(out)
        self.verify_key = verify_key
        # Without an explicit key: the publisher key the archive's signature names, among
        # those a repository or site publishes (keyid -> harness.manifest.published.PublisherKey).
        self.publisher_keys = publisher_keys or {}
        self.key_note = "signed by the given key"
        self.sign_key = sign_key
        self.expect = expect or Expectations()
        self.memory_gib = memory_gib
        self.timeout = timeout
        self.work_placed = False  # whether this audit has put its work folder in place
        self.runner = runner or HarnessRunner()
        self.lean_runner = lean_runner or run_lean_file
        self.limits = limits
        self.force = force
        self.checks: list[Check] = []
        self.info: dict = {}

    def _add(self, name: str, status: str, detail: str = "") -> None:
        self.checks.append(Check(name, status, detail))

    # -- entry point -----------------------------------------------------------------------

    def run(self) -> tuple[str, int, dict]:
        """(verdict, exit code, audit manifest). Raises UnusableInput for exit 2."""
        if not os.path.lexists(self.archive):
            raise UnusableInput(f"{self.archive}: no such archive")
        self._check_out()
        digest = sha256_file(self.archive)
        try:
            ar = SafeArchive(self.archive, self.limits)
        except ArchiveError as exc:
            raise UnusableInput(f"{self.archive}: {exc}") from None
        with ar:
            style, root = self._style(ar)
            # Only now, with an archive that is safe to read, is anything written.
            made = make_folder(self.out)
            try:
                self._audit(ar, style, root, digest)
                return self._finish()
            except BaseException as exc:
                # Broken off (a full disk, Ctrl-C): what this audit made goes, and the error
                # names the folder.
                shutil.rmtree(self.out / "check", ignore_errors=True)
                if self.work_placed:
                    shutil.rmtree(self.out / "work", ignore_errors=True)
                remove_made(made)
                named = name_error(exc, self.out)
                if named is exc:
                    raise
                raise named from exc

    def _audit(self, ar: SafeArchive, style: str, root: str, digest: str) -> None:
        if (self.out / "check").exists():  # only with --force: a previous audit's run
            shutil.rmtree(self.out / "check")
        self.info["archive"] = {
            "file": self.archive.name,
            "sha256": digest,
            "expected_sha256": self.expect.archive_sha256,
            "members": len(ar.names),
            "style": style,
        }
        if self.expect.archive_sha256 is None:
            self._add(
                "archive sha256",
                "not run",
                f"no --sha256 given; the archive's SHA-256 is {digest}",
            )
        elif digest == self.expect.archive_sha256:
            self._add("archive sha256", "passed", digest)
        else:
            self._add(
                "archive sha256", "failed", f"{digest}, published {self.expect.archive_sha256}"
            )
        work = Path(tempfile.mkdtemp(prefix=".work.", dir=self.out))
        try:
            if style == "pop-harness":
                self._ours(ar, root, work)
            else:
                self._seed(ar, root, work)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        keep = self.out / "work"
        if keep.exists():
            shutil.rmtree(keep)
        os.replace(work, keep)
        self.work_placed = True

    def _check_out(self) -> None:
        if self.out.exists() and not self.out.is_dir():
            raise UnusableInput(f"{self.out}: exists and is not a folder")
        for name in ("audit.yaml", "audit.dsse.json", "work", "check"):
            if (self.out / name).exists() and not self.force:
                raise UnusableInput(
                    f"{self.out / name}: exists from an earlier audit; choose another --out "
                    "or pass --force to replace it"
                )

    def _style(self, ar: SafeArchive) -> tuple[str, str]:
        roots = {n.split("/", 1)[0] for n in ar.names}
        ours = [
            r
            for r in roots
            if f"{r}/{ENVELOPE_NAME}" in ar.names or f"{r}/{MANIFEST_NAME}" in ar.names
        ]
        if len(ours) == 1 and len(roots) == 1:
            return "pop-harness", ours[0]
        if ours:
            raise UnusableInput(f"{self.archive}: several top folders; a sealed archive has one")
        models = [n for n in ar.names if _MODEL_RE.match(n)]
        if not models:
            raise UnusableInput(
                f"{self.archive}: neither a pop-harness archive ({MANIFEST_NAME}) nor "
                "seed-style (*/formal/Game.lean)"
            )
        if len(models) > 1:
            raise UnusableInput(f"{self.archive}: several formal/Game.lean files: {models[:3]}")
        return "seed", models[0]

    # -- reading members -------------------------------------------------------------------

    def _read(self, ar: SafeArchive, name: str, what: str) -> bytes | None:
        if name not in ar.names:
            self._add(what, "failed", f"{name}: missing from the archive")
            return None
        try:
            return ar.read(name)
        except (IntegrityError, ArchiveError) as exc:
            self._add(what, "failed", str(exc))
            return None

    # -- our archives ----------------------------------------------------------------------

    def _ours(self, ar: SafeArchive, root: str, work: Path) -> None:
        envelope = self._read(ar, f"{root}/{ENVELOPE_NAME}", "manifest signature")
        if envelope is None:
            return
        doc = self._signed_manifest(envelope)
        if doc is None:
            return
        yml = self._read(ar, f"{root}/{MANIFEST_NAME}", "manifest yaml")
        if yml is not None:
            if yml == self.info["payload"]:
                self._add("manifest yaml", "passed", "MANIFEST.yaml is the signed payload")
            else:
                self._add("manifest yaml", "failed", "MANIFEST.yaml differs from the signed one")
        self.info["manifest"] = {
            "ruleset": doc.get("ruleset"),
            "verdict": doc.get("verdict"),
            "certificate_hash": (doc.get("certificate") or {}).get("hash"),
            "signer": (doc.get("signer") or {}).get("keyid"),
            "created": doc.get("created"),
        }
        if doc.get("kind") != "seal":
            self._add("manifest kind", "failed", f"a {doc.get('kind')} manifest, not a seal")
            return
        good = self._members(ar, root, doc, work / root)
        self._verify_manifest(doc, work / root, good)
        self._python_check(doc, work / root, good)
        if "rerendered" in doc:
            self._rerender(doc, work / root, good, work / ".rerender")
        check = doc.get("check") or {}
        expected = check.get("expected_output")
        self._lean(
            work / root,
            good,
            model=check.get("model_file"),
            model_sha=check.get("model_sha256"),
            toolchain_file=check.get("toolchain_file"),
            theorems=list(check.get("print_axioms") or []),
            expected=expected,
            memory=self.memory_gib or _memory_of(check.get("command")),
            recorded=doc,
        )

    def _signed_manifest(self, envelope: bytes) -> dict | None:
        try:
            ptype, payload, _ = dsse.parse(envelope)
        except dsse.EnvelopeError as exc:
            self._add("manifest signature", "failed", f"{ENVELOPE_NAME}: {exc}")
            return None
        if self.verify_key is None:
            self._choose_publisher_key(envelope)
        if self.verify_key is None:
            self._add("manifest signature", "not run", self.key_note)
        else:
            try:
                dsse.verify(envelope, self.verify_key, dsse.MANIFEST_TYPE)
            except (dsse.EnvelopeError, dsse.SignatureError) as exc:
                self._add("manifest signature", "failed", f"{ENVELOPE_NAME}: {exc}")
                return None
            self._add("manifest signature", "passed", self.key_note)
        self.info["payload"] = payload
        try:
            return parse_payload(payload)
        except ManifestError as exc:
            self._add("manifest yaml", "failed", str(exc))
            return None

    def _choose_publisher_key(self, envelope: bytes) -> None:
        """The published key the envelope's signature names, if one is known; says which."""
        from harness.manifest.published import claimed_signer_of

        claimed = claimed_signer_of(envelope)
        found = self.publisher_keys.get(claimed or "")
        if found is None:
            where = sorted({k.path.parent.as_posix() for k in self.publisher_keys.values()})
            self.key_note = (
                f"the archive names signer {(claimed or '?')[:16]}…, and no published key "
                f"with that id was found{' in ' + ', '.join(where) if where else ''}; pass "
                "--key PUBLISHER.pub (from the repository's manifests/keys/ or the site's keys/)"
            )
            return
        self.verify_key = found.public
        self.info["publisher_key"] = {"keyid": found.keyid, "file": found.path.name}
        self.key_note = f"signed by publisher key {found.short}… ({found.path.as_posix()})"

    def _members(self, ar: SafeArchive, root: str, doc: dict, dest: Path) -> set[str]:
        """Compare every member with the manifest; extract those that match. Returns the
        relative paths that are present and unchanged."""
        files = doc.get("files") or {}
        present = {n[len(root) + 1 :] for n in ar.names}
        own = {MANIFEST_NAME, ENVELOPE_NAME}
        problems, good = [], set()
        for rel in sorted(present - own - set(files)):
            problems.append(f"{rel}: in the archive but not in the manifest")
        for rel in sorted(set(files) - present):
            problems.append(f"{rel}: listed in the manifest but missing from the archive")
        dest.mkdir(parents=True, exist_ok=True)
        for rel in sorted(set(files) & present):
            try:
                data = ar.read(f"{root}/{rel}")
            except (IntegrityError, ArchiveError) as exc:
                problems.append(str(exc))
                continue
            if sha256_bytes(data) != files[rel]:
                problems.append(f"{rel}: SHA-256 differs from the manifest")
                continue
            # Extract only what matched: nothing unvouched is ever run. The folders are
            # ours (made just now below a fresh temporary folder), and O_EXCL|O_NOFOLLOW
            # refuses to write through anything already there.
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            good.add(rel)
        if problems:
            self._add("members", "failed", "; ".join(problems))
            self.info["member_differences"] = problems
        else:
            self._add("members", "passed", f"{len(good)} members match the manifest")
        return good

    def _verify_manifest(self, doc: dict, base: Path, good: set[str]) -> None:
        """The verify run's own manifest, sealed inside: signed by the same key, and saying
        the same about the result as the seal manifest."""
        rel = (doc.get("sealed_from") or {}).get("manifest")
        env_rel = rel[: -len(".yaml")] + ".dsse.json" if rel and rel.endswith(".yaml") else None
        if not rel or rel not in good or env_rel not in good:
            self._add("verify manifest", "failed", f"{rel}: missing or changed")
            return
        envelope = (base / env_rel).read_bytes()
        try:
            if self.verify_key is not None:
                payload = dsse.verify(envelope, self.verify_key, dsse.MANIFEST_TYPE)
            else:
                payload = dsse.parse(envelope)[1]
            inner = parse_payload(payload)
        except (dsse.EnvelopeError, dsse.SignatureError, ManifestError) as exc:
            self._add("verify manifest", "failed", f"{env_rel}: {exc}")
            return
        problems = []
        if payload != (base / rel).read_bytes():
            problems.append(f"{rel} differs from its signed payload")
        if sha256_bytes(payload) != (doc.get("sealed_from") or {}).get("sha256"):
            problems.append(f"{rel} is not the manifest the seal names")
        for field_ in ("ruleset", "verdict", "certificate", "final_theorem", "check", "lean"):
            if inner.get(field_) != doc.get(field_):
                problems.append(f"'{field_}' differs between {rel} and {MANIFEST_NAME}")
        if problems:
            self._add("verify manifest", "failed", "; ".join(problems))
        elif self.verify_key is None:
            self._add("verify manifest", "not run", "no publisher key to check its signature")
        else:
            self._add("verify manifest", "passed", f"{rel}: signed, and agrees with the seal")

    def _python_check(self, doc: dict, base: Path, good: set[str]) -> None:
        cert = base / "certificate"
        if "certificate/index.yaml" not in good:
            self._add("certificate", "failed", "certificate/index.yaml missing or changed")
            return
        try:
            index = read_yaml(cert / "index.yaml", what="certificate index")
        except (OSError, ValueError, yaml.YAMLError) as exc:
            self._add("certificate", "failed", f"index.yaml unreadable: {exc}")
            return
        recorded = (doc.get("certificate") or {}).get("hash")
        if not isinstance(index, dict) or index.get("hash") != recorded:
            self._add("certificate hash", "failed", "index.yaml's hash differs from the manifest")
        else:
            self._add("certificate hash", "passed", str(recorded))
        if "check" not in self.runner.commands():
            self._add("python check", "not run", "`python -m harness check` is not available")
            return
        done = self.runner.run(["check", str(cert), "--ruleset", str(doc.get("ruleset"))])
        if done.returncode == 0:
            self._add("python check", "passed", "certificate accepted by the Python checker")
        else:
            line = scrub_paths(done.last_error_line(), {str(base): "ARCHIVE"})
            line = line.removeprefix("error: ")
            self._add(
                "python check",
                "failed",
                line if line.startswith("rejected") else f"rejected: {line}",
            )

    def _rerender(self, doc: dict, base: Path, good: set[str], scratch: Path) -> None:
        """The rendered Lean the archive leaves out, made again from its certificate and
        kept only where each file is the one the manifest pins."""
        pins = (doc.get("rerendered") or {}).get("files")
        if not isinstance(pins, dict) or not pins:
            self._add("rerendered lean", "failed", "'rerendered' names no files")
            return
        if "certificate/index.yaml" not in good or RENDER_REPORT not in good:
            self._add("rerendered lean", "failed", f"the certificate or {RENDER_REPORT} changed")
            return
        problems = rerender(base, pins, runner=self.runner, scratch=scratch)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            self._add("rerendered lean", "failed", problems[0] + more)
            self.info["rerender_differences"] = problems
            return
        good.update(pins)
        self._add(
            "rerendered lean",
            "passed",
            f"{len(pins)} files rendered again from the certificate, each the pinned one",
        )

    # -- the Lean step, shared by both layouts ---------------------------------------------

    def _lean(
        self,
        base: Path,
        good: set[str] | None,
        *,
        model: str | None,
        model_sha: str | None,
        toolchain_file: str | None,
        theorems: list[str],
        expected: str | None,
        memory: float,
        recorded: dict | None,
    ) -> None:
        if not model or not toolchain_file:
            self._add("lean", "failed", "no sealed model file or toolchain named")
            return
        if good is not None and (model not in good or toolchain_file not in good):
            self._add("lean", "failed", f"{model} or {toolchain_file} missing or changed")
            return
        data = (base / model).read_bytes()
        actual_sha = sha256_bytes(data)
        if model_sha is None:
            self._add("model sha256", "not run", f"no expected SHA-256 given; it is {actual_sha}")
        elif actual_sha == model_sha:
            self._add("model sha256", "passed", f"{model}: {actual_sha}")
        else:
            self._add("model sha256", "failed", f"{model}: {actual_sha}, expected {model_sha}")
            return
        pin = (base / toolchain_file).read_text(encoding="utf-8", errors="replace").strip()
        if not _PIN_RE.match(pin):
            self._add("lean toolchain", "failed", f"{toolchain_file}: not a toolchain name")
            return
        if not theorems:
            self._add("lean", "not run", "no theorem named whose axioms to print (--theorem)")
            return
        folder = self.out / "check"
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir()
        text = (
            data.decode("utf-8", errors="replace").rstrip("\n")
            + "\n\n"
            + "".join(f"#print axioms {t}\n" for t in theorems)
        )
        write_atomic(folder / "Check.lean", text.encode("utf-8"))
        run = self.lean_runner(folder, pin, memory, self.timeout)
        self.info["lean"] = {
            "toolchain": pin,
            "ran": run.ran,
            "reason": run.reason or None,
            "command": " ".join(
                Path(run.command[0]).name if i == 0 else c for i, c in enumerate(run.command)
            )
            if run.command
            else None,
            "version": run.version,
            "exit_code": run.exit_code,
            "seconds": run.seconds,
            "peak_mib": run.peak_mib,
        }
        if not run.ran:
            self._add("lean", "not run", run.reason)
            return
        write_atomic(folder / "lean-output.txt", run.output.encode("utf-8"))
        problems = []
        if run.timed_out:
            problems.append(f"Lean did not finish within {self.timeout:g} s")
        elif run.exit_code != 0:
            problems.append(f"lean exited with {run.exit_code}")
        problems += compare_output(run.output, expected, theorems)
        got = parse_output(run.output)
        self.info["lean"]["axioms"] = {k: list(v) for k, v in sorted(got.axioms.items())}
        self.info["lean"]["guard_hits"] = dict(sorted(got.guard_hits.items()))
        if recorded is not None:
            problems += _against_record(recorded, got)
        if expected is None:
            why = "Lean ran, but no expected output was given (--expect)"
            self._add("lean", "failed" if problems else "not run", "; ".join(problems) or why)
            return
        if problems:
            self._add("lean", "failed", "; ".join(problems))
        else:
            self._add(
                "lean", "passed", f"{run.seconds} s, {run.peak_mib} MiB peak; output as expected"
            )

    # -- seed-style archives ---------------------------------------------------------------

    def _seed(self, ar: SafeArchive, model: str, work: Path) -> None:
        folder = model.rsplit("/", 1)[0]
        candidates = []
        parts = folder.split("/")
        for i in range(len(parts), 0, -1):
            candidates.append("/".join(parts[:i]) + "/lean-toolchain")
        toolchain = next((c for c in candidates if c in ar.names), None)
        self.info["seed"] = {"model": model, "toolchain_file": toolchain}
        if toolchain is None:
            self._add("lean toolchain", "failed", f"no lean-toolchain next to or above {model}")
            return
        wanted = [model, toolchain]
        good = set()
        for name in wanted:
            data = self._read(ar, name, "members")
            if data is None:
                continue
            target = work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data)
            good.add(name)
        if len(good) == 2:
            self._add("members", "passed", f"{model} and {toolchain} read intact")
        theorems = list(self.expect.theorems)
        if not theorems and self.expect.expected_output:
            theorems = list(parse_output(self.expect.expected_output).axioms)
        self._lean(
            work,
            good,
            model=model,
            model_sha=self.expect.model_sha256,
            toolchain_file=toolchain,
            theorems=theorems,
            expected=self.expect.expected_output,
            memory=self.memory_gib or fit_to_machine(DEFAULT_MEMORY_GIB),
            recorded=None,
        )

    # -- verdict ----------------------------------------------------------------------------

    def _finish(self) -> tuple[str, int, dict]:
        failed = [c for c in self.checks if c.status == "failed"]
        not_run = [c for c in self.checks if c.status == "not run"]
        verdict = "FAIL" if failed else ("INCOMPLETE" if not_run else "PASS")
        doc = {
            "kind": "audit",
            "verdict": verdict,
            "created": now_utc(),
            "archive": self.info.get("archive"),
            "manifest": self.info.get("manifest"),
            "publisher_key": self.info.get("publisher_key"),
            "seed": self.info.get("seed"),
            "checks": [c.row() for c in self.checks],
            "differences": [f"{c.name}: {c.detail}" for c in failed],
            "not_run": [f"{c.name}: {c.detail}" for c in not_run],
            "lean": self.info.get("lean"),
            "environment": environment(),
            "files": {
                str(p.relative_to(self.out).as_posix()): sha256_file(p)
                for p in sorted((self.out / "check").glob("*"))
                if p.is_file()
            }
            if (self.out / "check").is_dir()
            else {},
        }
        doc = {k: v for k, v in doc.items() if v is not None}
        write_signed(self.out / "audit.yaml", doc, self.sign_key)
        return verdict, VERDICT_EXIT[verdict], doc


def _memory_of(command: str | None) -> float:
    m = re.search(r"-M(\d+)", command or "")
    return fit_to_machine(int(m.group(1)) / 1024 if m else DEFAULT_MEMORY_GIB)


def fit_to_machine(memory_gib: float) -> float:
    """``memory_gib``, but at most 3/4 of this machine's physical memory: a default cap the
    machine cannot give only moves the failure from Lean's -M to the kernel's OOM killer
    (60 GiB on a 24 GiB machine). An explicit ``--memory`` is taken as it is."""
    from harness.lean.child import physical_memory

    physical = physical_memory()
    if physical is None:
        return memory_gib
    return min(memory_gib, round(physical * 0.75 / GIB, 1))


def _against_record(doc: dict, got) -> list[str]:
    """What our own run of Lean says against what verify recorded, where it recorded any."""
    problems = []
    theorem = doc.get("final_theorem") or {}
    name, recorded = theorem.get("name"), theorem.get("axioms")
    if name and isinstance(recorded, list) and name in got.axioms:
        if sorted(got.axioms[name]) != sorted(recorded):
            problems.append(f"{name}: axioms {list(got.axioms[name])}, recorded {recorded}")
    hits = (doc.get("lean") or {}).get("guard_hits")
    if isinstance(hits, dict) and hits and got.guard_hits != hits:
        problems.append("GUARD_HITS differ from those recorded by verify")
    return problems
