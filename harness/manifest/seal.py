"""``python -m harness seal``: a deterministic zip of a verified run, for anyone to audit.

The archive holds one folder, ``NAME/`` (``NAME`` = ruleset id + first 12 hex digits of the
certificate hash)::

    NAME/CHECK.md                  the re-run steps, in the seeds' "Check it yourself" form
    NAME/MANIFEST.yaml             the seal manifest (signed) ...
    NAME/MANIFEST.dsse.json        ... and its DSSE envelope
    NAME/manifests/verify.yaml     the verify run's own signed manifest, as it was published
    NAME/manifests/verify.dsse.json
    NAME/formal/Game.lean          the sealed model file: everything Lean checks, in one file
    NAME/formal/lean-toolchain     the Lean release to check it with
    NAME/lean/...                  the Lean project with the rendered modules (for lake)
    NAME/certificate/...           index.yaml and the gzip'd shards
    NAME/corpus/...                the transition corpus and its summary

(``formal/Game.lean`` and ``lean/Generated/*.lean`` are left out of a run whose rendered Lean is
big, and pinned by their SHA-256 for the audit to render again: :mod:`harness.manifest.rerender`.)

The seal manifest repeats the verify manifest's record and lists the SHA-256 of every other
member, so an edit to any byte of the archive is caught. The archive's own SHA-256 cannot be
inside it: ``seal`` prints it, and it is published next to the archive.

Sealing is deterministic: the same verified run and the same key give the same bytes (entries
sorted, fixed timestamps and modes, Ed25519 signatures are deterministic, and the seal
manifest reuses the verify run's time instead of the clock).
"""

from __future__ import annotations

import io
from pathlib import Path

from harness.bounded import read_regular
from harness.errors import HarnessError
from harness.manifest.archive import Limits, write_deterministic
from harness.manifest.dsse import MAX_ENVELOPE_BYTES
from harness.manifest.fsutil import sha256_bytes, write_atomic
from harness.manifest.keys import SigningKey
from harness.manifest.manifest import check_files, read_signed, sign_manifest
from harness.manifest.rerender import RERENDER_ABOVE, left_out, rendered_files

MANIFEST_NAME = "MANIFEST.yaml"
ENVELOPE_NAME = "MANIFEST.dsse.json"
CHECK_NAME = "CHECK.md"


def _member(path: Path) -> bytes:
    """A run's file for the archive: a regular file within the archive's member limit (a
    link in the run folder is not followed into the archive)."""
    return read_regular(path, Limits().max_member_bytes, "archive member")


def _claim(doc: dict) -> str:
    """What the final theorem says, in words, for each value."""
    value = (doc.get("result") or {}).get("value")
    if value == "draw":
        return (
            "neither player can force a win (`¬ ForceWin` for x and for o, `ForceWin` the least "
            "predicate of docs/rules.md: a draw with best play)"
        )
    return "the winner has a forced win (`ForceWin`, the least predicate of docs/rules.md)"


def archive_name(doc: dict) -> str:
    """``RULESET-<12 hex of the certificate hash>``.

    >>> archive_name({"ruleset": "pop1-4x4", "certificate": {"hash": "e6f655dab20884bd15"}})
    'pop1-4x4-e6f655dab208'
    """
    return f"{doc['ruleset']}-{str(doc['certificate']['hash'])[:12]}"


def check_md(doc: dict, name: str, left: dict[str, str] | None = None) -> str:
    """The re-run steps for an outside reader, from the manifest's ``check`` section (and
    how to make the rendered Lean again when the archive leaves it out: ``left``)."""
    c = doc["check"]
    measured = c.get("measured")
    if isinstance(measured, dict):
        before = (
            f"Before you start: our check of these modules took {measured['seconds']} s and "
            f"{measured['peak_mib']} MiB of memory at its peak ({measured['date']}; "
            f"{measured['how']})."
        )
    else:
        before = (
            "Before you start: time and peak memory were not measured here: no Lean "
            "toolchain was available where this archive was made, so Lean did not run. The "
            "expected output below is what the sources pin (`#guard_msgs`) and what the "
            "Python side computed; your run is the first kernel check."
        )
    prints = "\n".join(f"   #print axioms {t}" for t in c["print_axioms"])
    expected = "\n".join(f"   {line}" for line in c["expected_output"].splitlines())
    theorem = doc.get("final_theorem") or {}
    lean = doc.get("lean") or {}
    if left:
        before += "\n\n" + _rerender_md(left, name)
    return f"""# Check it yourself: {doc["ruleset"]}

{theorem.get("statement") or ""}

Verdict of the run that made this archive: {doc.get("verdict")} (Lean: {lean.get("status")}).
Certificate hash (blake3): {doc["certificate"]["hash"]}

## Re-run the proof

{before}

1. Unpack the archive. The model, the certificate checker, every certificate shard and the
   final theorem are in `{name}/{c["model_file"]}`. Before changing it, check that its
   SHA-256 is

   {c["model_sha256"]}

2. Install Lean with elan, then the version named in `{name}/{c["toolchain_file"]}`:

   elan toolchain install {c["toolchain"]}

3. Copy the model file to Check.lean and append these lines to the copy:

{prints}

4. In the folder that holds Check.lean, run:

   {c["command"]}

5. Lean should finish without errors and print:

{expected}

   The first line is printed by the file itself: for each rule branch, how many
   transitions of the corpus (research family) exercise it, all agreeing with the model.

{_kernel_md(c.get("kernel"), name)}## What a pass establishes

`{theorem.get("name")}`: {_claim(doc)} from the initial position of the Lean model of
`{doc["ruleset"]}`, proved by the kernel from the certificate through the soundness theorem
of the checker. The axioms
printed must be among `propext`, `Classical.choice`, `Quot.sound`.

What it does not establish: that the Lean model says what docs/rules.md says (the corpus line is
the evidence for that: the same transitions as the Python reference engine).

## Or let the harness do all of it

   python -m harness audit ARCHIVE.zip --sha256 PUBLISHED_SHA256 --key PUBLISHER.pub

This checks the archive's seal, the signature of `{name}/{MANIFEST_NAME}`, the SHA-256 of
every member, re-checks the certificate in Python, and runs the steps above where Lean is
installed.
"""


def _rerender_md(left: dict[str, str], name: str) -> str:
    """Step 0 for an archive that leaves its rendered Lean out."""
    count = f"{len(left):,}"
    return f"""0. This archive leaves out the Lean that `render` made from its certificate:
   {count} files, `{name}/formal/Game.lean` among them, each pinned by its SHA-256 under
   `rerendered` in `{name}/{MANIFEST_NAME}`. Make them again with the harness
   (a checkout of the project, `pip install -e .`):

   python -m harness audit ARCHIVE.zip --out AUDIT --key PUBLISHER.pub

   It renders the archive's certificate again, flattens the project as the run did, and
   keeps the files only if each one is byte for byte the pinned one. They are then in
   `AUDIT/work/{name}/`; run the steps below in that folder."""


def _kernel_md(kernel: dict | None, name: str) -> str:
    """How big the kernel's work is and how to split it over machines (records made before
    the manifest carried ``check.kernel`` have no such section)."""
    if not isinstance(kernel, dict):
        return ""
    modules = kernel.get("modules") or {}
    shards = modules.get("shard", 0)
    return f"""## How much work, and splitting it over machines

The kernel checks {kernel["declarations"]:,} declarations of at most {kernel["budget_steps"]:,}
estimated steps each (the largest: {kernel["largest_steps"]:,}), {kernel["steps"]:,} estimated
steps in all: about {_duration(kernel["expected_seconds"])} of kernel time at an assumed
{kernel["assumed_steps_per_second"]:,} steps a second (an assumption, not a measurement;
your run of step 4 gives the real figure).

Step 4 checks everything in one process. To share the work, use the Lake project in
`{name}/lean/` instead: each of its {shards:,} `Generated.Check*` modules imports only the
model (`Pop`, through `Generated.Cert`), its set's data modules and that set's
`Generated.Set*` module, so any grouping of them can be built on different machines, for
example

   lake build Generated.CheckX0000 Generated.CheckX0001

on one and the rest on others; `lake build Generated.Main` then ties them together (on one
machine, with the others' `.lake/build` copied in, or again from scratch).

"""


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def collect(
    doc: dict,
    work: Path,
    verify_yaml: bytes,
    verify_env: bytes,
    *,
    leave_out: dict[str, str] | None = None,
) -> dict[str, bytes]:
    """Archive members (without the seal manifest) for a verified run in ``work``, less the
    files in ``leave_out`` (see :mod:`harness.manifest.rerender`)."""
    leave_out = leave_out or {}
    if doc.get("verdict") not in ("PASS", "INCOMPLETE"):
        raise HarnessError(
            f"the verify manifest's verdict is {doc.get('verdict')}; only a run that passed "
            "(or passed except for Lean not running) can be sealed"
        )
    if not doc.get("check"):
        raise HarnessError("the verify manifest has no 'check' section (no sealed model file)")
    problems = check_files(doc.get("files") or {}, work)
    if problems:
        raise HarnessError(
            f"{work} changed since verify signed its manifest: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
        )
    name = archive_name(doc)
    members = {f"{name}/{rel}": _member(work / rel) for rel in doc["files"] if rel not in leave_out}
    members[f"{name}/manifests/verify.yaml"] = verify_yaml
    members[f"{name}/manifests/verify.dsse.json"] = verify_env
    members[f"{name}/{CHECK_NAME}"] = check_md(doc, name, leave_out).encode("utf-8")
    return members


def seal_doc(
    doc: dict,
    members: dict[str, bytes],
    name: str,
    verify_yaml: bytes,
    *,
    left: dict[str, str] | None = None,
    left_bytes: int = 0,
) -> dict:
    sealed = {k: v for k, v in doc.items() if k not in ("format", "kind", "files", "signer")}
    rerendered = (
        {"rerendered": {"bytes": left_bytes, "files": dict(sorted(left.items()))}} if left else {}
    )
    return {
        "kind": "seal",
        **sealed,
        "archive": {"name": name, "root": f"{name}/"},
        "sealed_from": {
            "manifest": "manifests/verify.yaml",
            "sha256": sha256_bytes(verify_yaml),
            "signer": (doc.get("signer") or {}).get("keyid"),
        },
        "files": {m[len(name) + 1 :]: sha256_bytes(data) for m, data in sorted(members.items())},
        **rerendered,
    }


def build_archive(
    manifest: Path, work: Path, key: SigningKey, *, rerender_above: int = RERENDER_ABOVE
) -> tuple[bytes, str, dict]:
    """(zip bytes, archive folder name, seal manifest) for the run ``manifest`` describes.

    Rendered Lean past ``rerender_above`` bytes is left out and pinned instead
    (:mod:`harness.manifest.rerender`)."""
    manifest = Path(manifest)
    try:
        doc, verify_yaml = read_signed(manifest, key.public)
    except ValueError as exc:
        raise HarnessError(f"{manifest}: {exc}") from None
    if doc.get("kind") != "verify":
        raise HarnessError(f"{manifest}: a {doc.get('kind')} manifest, not a verify manifest")
    env_path = manifest.with_name(manifest.name.removesuffix(".yaml") + ".dsse.json")
    verify_env = read_regular(env_path, MAX_ENVELOPE_BYTES, "signature envelope")
    files = doc.get("files") or {}
    sizes = {
        rel: (work / rel).stat().st_size for rel in rendered_files(files) if (work / rel).is_file()
    }
    left = left_out(files, sizes, above=rerender_above)
    members = collect(doc, work, verify_yaml, verify_env, leave_out=left)
    name = archive_name(doc)
    left_bytes = sum(sizes[rel] for rel in left)
    sdoc = seal_doc(doc, members, name, verify_yaml, left=left, left_bytes=left_bytes)
    data, envelope = sign_manifest(sdoc, key)
    members[f"{name}/{MANIFEST_NAME}"] = data
    members[f"{name}/{ENVELOPE_NAME}"] = envelope
    buf = io.BytesIO()
    write_deterministic(buf, members)
    return buf.getvalue(), name, sdoc


def write_archive(out: Path, data: bytes, *, force: bool = False) -> None:
    """Write the zip atomically; an existing file is replaced only with ``force``."""
    out = Path(out)
    if out.exists() and not force:
        raise HarnessError(f"{out}: already exists; not replacing it (--force, or another --out)")
    write_atomic(out, data, mode=0o644)
