"""Commands of the manifest stage: ``keys``, ``manifest verify``, ``seal``, ``audit``.

See ``docs/verification.md`` for the whole flow; each command's ``--help`` for its options
and exit codes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.bounded import read_text, reason
from harness.cli import positive, ruleset_id
from harness.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, HarnessError
from harness.manifest import dsse
from harness.manifest.keys import (
    KEY_HELP,
    KeyFileError,
    default_key_path,
    generate,
    keyid,
    load_private_or_default,
    load_public,
    load_verifying_key,
    public_path,
    public_pem,
    signing_key_or_new,
)
from harness.manifest.manifest import ManifestError, read_signed

MAX_EXPECTED_BYTES = 16 << 20  # audit --expect: Lean's printed output


def register(subparsers: argparse._SubParsersAction) -> None:
    from harness.rules.ruleset import DEFAULT_RULESET

    # -- keys ---------------------------------------------------------------------------
    k = subparsers.add_parser(
        "keys",
        help="make or show the Ed25519 key that signs manifests",
        description="The private key lives outside the repository (default "
        "~/.config/pop-harness/signing-key.pem, mode 0600), its public half next to it "
        "as .pub. Never commit a private key; publish the .pub file.",
    )
    verbs = k.add_subparsers(dest="verb", metavar="VERB", required=True)
    g = verbs.add_parser("generate", help="make a new key (never replaces one)")
    g.add_argument("--key", type=Path, default=None, help="where to write it; " + KEY_HELP)
    g.add_argument(
        "--exist-ok",
        action="store_true",
        help="succeed without doing anything when the key already exists",
    )
    g.set_defaults(func=_keys_generate)
    s = verbs.add_parser("show", help="print the public key and its id")
    s.add_argument("--key", type=Path, default=None, help=KEY_HELP)
    s.set_defaults(func=_keys_show)

    # -- manifest verify ----------------------------------------------------------------
    m = subparsers.add_parser("manifest", help="check a signed manifest")
    mverbs = m.add_subparsers(dest="verb", metavar="VERB", required=True)
    mv = mverbs.add_parser(
        "verify",
        help="check a manifest's signature (and the files it vouches for)",
        description="Verify FILE (X.yaml or X.dsse.json): the DSSE signature over the exact "
        "payload bytes, and that X.yaml is those bytes. With --files DIR, also the SHA-256 "
        "of every file the manifest lists, relative to DIR.",
        epilog="exit codes: 0 verified; 1 bad signature, edited YAML or changed files; "
        "2 unreadable or missing files",
    )
    mv.add_argument("file", type=Path)
    mv.add_argument(
        "--key",
        type=Path,
        default=None,
        help="the signer's public key (default: the key the envelope names, from the "
        "published folder's keys/, ./manifests/keys, this checkout's manifests/keys, then "
        "your own key)",
    )
    mv.add_argument(
        "--files",
        type=Path,
        default=None,
        metavar="DIR",
        help="check the listed files' SHA-256 under DIR",
    )
    mv.set_defaults(func=_manifest_verify)

    # -- seal ---------------------------------------------------------------------------
    se = subparsers.add_parser(
        "seal",
        help="write a deterministic zip of a verified run, and print its SHA-256",
        description="Seal the run that `verify` recorded in WORK/RULESET/manifest.yaml: the Lean "
        "project with the rendered modules and the sealed model file, the certificate, the "
        "corpus, the manifests and CHECK.md (the re-run steps), in a zip whose bytes depend "
        "only on its contents. Prints the archive's SHA-256 and the re-run steps.",
        epilog="exit codes: 0 sealed; 1 the run cannot be sealed (failed, or its files "
        "changed since verify); 2 bad input",
    )
    se.add_argument(
        "ruleset",
        nargs="?",
        type=ruleset_id,
        default=DEFAULT_RULESET.id,
        help=f"ruleset id (default {DEFAULT_RULESET.id})",
    )
    se.add_argument(
        "--manifest",
        type=Path,
        default=None,
        help="the verify manifest (default WORK/manifest.yaml)",
    )
    se.add_argument(
        "--work",
        type=Path,
        default=None,
        metavar="DIR",
        help="the verified run's files (default out/verify/RULESET)",
    )
    se.add_argument(
        "--out", type=Path, default=None, metavar="ARCHIVE.zip", help="default dist/NAME.zip"
    )
    se.add_argument("--key", type=Path, default=None, help=KEY_HELP)
    se.add_argument("--force", action="store_true", help="replace an existing --out")
    se.set_defaults(func=_seal)

    # -- audit --------------------------------------------------------------------------
    a = subparsers.add_parser(
        "audit",
        help="re-check a sealed archive (ours or seed-style); signed verdict",
        description="Audit ARCHIVE: our sealed archives (seal, signature, every member's "
        "SHA-256, the Python certificate check, Lean) or seed-style ones "
        "(*/formal/Game.lean with a lean-toolchain: --model-sha256, --theorem, --expect). "
        "Writes OUT/audit.yaml + audit.dsse.json, signed with your key.",
        epilog="exit codes: 0 PASS; 1 FAIL (every difference listed); 2 unusable input "
        "(unreadable or hostile archive; nothing written); 3 INCOMPLETE (something could "
        "not be run, e.g. Lean without a toolchain)",
    )
    a.add_argument("archive", type=Path)
    a.add_argument("--sha256", default=None, metavar="HEX", help="the archive's published SHA-256")
    a.add_argument(
        "--key",
        type=Path,
        default=None,
        help="the publisher's public key (default: the key the archive's signature names, "
        "from --keys)",
    )
    a.add_argument(
        "--keys",
        type=Path,
        action="append",
        default=None,
        metavar="DIR",
        help="folders of published keys (*.pub) to find the publisher's key in (default: "
        "manifests/keys and a keys/ folder beside the archive's folder); none that matches: "
        "INCOMPLETE",
    )
    a.add_argument(
        "--sign-key",
        type=Path,
        default=None,
        help="your private key, to sign the audit manifest; " + KEY_HELP,
    )
    a.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="output folder (default out/audit/<the archive's SHA-256>)",
    )
    a.add_argument(
        "--model-sha256",
        default=None,
        metavar="HEX",
        help="seed-style: the published SHA-256 of formal/Game.lean",
    )
    a.add_argument(
        "--theorem",
        action="append",
        default=[],
        metavar="NAME",
        help="seed-style: a theorem whose axioms to print (repeatable)",
    )
    a.add_argument(
        "--expect",
        type=Path,
        default=None,
        metavar="FILE",
        help="seed-style: the expected Lean output, as published",
    )
    a.add_argument(
        "--memory",
        type=positive(float),
        default=None,
        metavar="GiB",
        help="memory cap for lean (default: the archive's -M, else 60, but at most 3/4 of "
        "this machine's physical memory)",
    )
    a.add_argument("--timeout", type=positive(float), default=3600.0, metavar="S")
    a.add_argument("--force", action="store_true", help="replace an earlier audit in --out")
    a.set_defaults(func=_audit)


# --------------------------------------------------------------------------------------------


def _keys_generate(args: argparse.Namespace) -> int:
    path = args.key or default_key_path()
    if args.exist_ok and path.exists():
        key = load_private_or_default(path)
        print(f"key exists: {path} (id {key.keyid})")
        return EXIT_OK
    try:
        key = generate(path)
    except KeyFileError as exc:
        raise HarnessError(str(exc)) from None
    print(f"private key: {path} (mode 0600; never commit it)")
    print(f"public key:  {public_path(path)}")
    print(f"key id:      {key.keyid}")
    return EXIT_OK


def _keys_show(args: argparse.Namespace) -> int:
    path = args.key or default_key_path()
    try:
        public = load_verifying_key(path)  # a private key's public half, or a public key
    except KeyFileError as exc:
        raise HarnessError(str(exc)) from None
    sys.stdout.write(public_pem(public).decode("ascii"))
    print(f"key id: {keyid(public)}")
    return EXIT_OK


def _naming(path: Path, exc: Exception) -> str:
    """The message of ``exc`` led by ``path``, unless it names a file of its own already."""
    text = str(exc)
    return text if text.startswith(str(path.with_suffix(""))) else f"{path}: {text}"


def _verifying_key(args: argparse.Namespace) -> tuple:
    """The key to check ``args.file`` with and where it came from: ``--key``, else the key its
    envelope names, looked up in the published keys and then the user's own key."""
    from harness.manifest.manifest import envelope_path
    from harness.manifest.published import claimed_signer, key_folders, signer_key

    if args.key is not None:
        try:
            return load_public(args.key), f"--key {args.key}"
        except KeyFileError as exc:
            raise HarnessError(str(exc)) from None
    claimed = claimed_signer(envelope_path(args.file))
    if claimed is None:
        if not args.file.is_file():
            raise HarnessError(f"{args.file}: no such manifest")
        raise HarnessError(f"{envelope_path(args.file)}: no readable signature to name its key")
    found = signer_key(claimed, args.file)
    if found is None:
        where = ", ".join(str(f) for f in key_folders(args.file)) or "no keys/ folder found"
        raise HarnessError(
            f"{args.file}: signed by key {claimed[:16]}, which is neither in the published keys "
            f"({where}) nor your own key; pass --key SIGNER.pub"
        )
    return found.public, f"key {found.path}"


def _manifest_verify(args: argparse.Namespace) -> int:
    from harness.manifest.manifest import check_files

    public, used = _verifying_key(args)
    try:
        doc, _ = read_signed(args.file, public)
    except dsse.SignatureError as exc:
        print(f"error: {_naming(args.file, exc)}", file=sys.stderr)
        return EXIT_FAILED
    except (dsse.EnvelopeError, ManifestError, ValueError) as exc:
        raise HarnessError(_naming(args.file, exc)) from None
    except OSError as exc:
        raise HarnessError(f"{exc.filename or args.file}: cannot read: {exc.strerror}") from None
    print(
        f"signature OK: {doc['kind']} manifest of {doc.get('ruleset', '?')}, "
        f"verdict {doc.get('verdict', '?')}, signed by {keyid(public)[:16]} ({used})"
    )
    if args.files is not None:
        if not args.files.is_dir():
            raise HarnessError(f"{args.files}: no such folder")
        problems = check_files(doc.get("files") or {}, args.files)
        for p in problems:
            print(f"  {p}")
        if problems:
            print(
                f"error: {len(problems)} of {len(doc.get('files') or {})} files differ",
                file=sys.stderr,
            )
            return EXIT_FAILED
        print(f"files OK: {len(doc.get('files') or {})} files match")
    return EXIT_OK


def _seal(args: argparse.Namespace) -> int:
    from harness.manifest.fsutil import sha256_bytes
    from harness.manifest.seal import build_archive, write_archive

    key = load_private_or_default(args.key)
    work = args.work or Path("out/verify") / args.ruleset
    manifest = args.manifest or work / "manifest.yaml"
    if not manifest.is_file():
        raise HarnessError(
            f"{manifest}: no verify manifest (run `python -m harness verify "
            f"{args.ruleset}` first, or pass --manifest)"
        )
    if not work.is_dir():
        raise HarnessError(f"{work}: the verified run's files are not there (pass --work)")
    data, name, doc = build_archive(manifest, work, key)
    out = args.out or Path("dist") / f"{name}.zip"
    write_archive(out, data, force=args.force)
    digest = sha256_bytes(data)
    c = doc["check"]
    print(f"sealed {out} ({len(data)} bytes, {len(doc['files']) + 2} members)")
    print(f"SHA-256 {digest}")
    print()
    print("Re-run the proof:")
    print(f"  1. unpack; check that {name}/{c['model_file']} has SHA-256 {c['model_sha256']}")
    print(f"  2. elan toolchain install {c['toolchain']}")
    print(
        "  3. copy it to Check.lean and append: "
        + "; ".join(f"#print axioms {t}" for t in c["print_axioms"])
    )
    print(f"  4. {c['command']}")
    print("  5. expected output:")
    for line in c["expected_output"].splitlines():
        print(f"     {line}")
    print(f"(all of it in {name}/CHECK.md; or: python -m harness audit {out} --sha256 {digest})")
    return EXIT_OK


def _audit(args: argparse.Namespace) -> int:
    from harness.manifest.audit import Auditor, Expectations, UnusableInput, normalize_hex

    expected = None
    if args.expect is not None:
        try:
            expected = read_text(args.expect, MAX_EXPECTED_BYTES, "expected output")
        except (OSError, ValueError) as exc:
            why = reason(exc, args.expect)
            raise UnusableInput(f"{args.expect}: cannot read the expected output: {why}") from None
    expect = Expectations(
        archive_sha256=normalize_hex(args.sha256, "--sha256"),
        model_sha256=normalize_hex(args.model_sha256, "--model-sha256"),
        theorems=list(args.theorem),
        expected_output=expected,
    )
    from harness.manifest.fsutil import sha256_file
    from harness.manifest.published import key_folders, own_key, publisher_keys

    if not args.archive.is_file():
        raise UnusableInput(f"{args.archive}: no such archive")
    verify_key, published = None, {}
    if args.key is not None:
        try:
            verify_key = load_public(args.key)
        except KeyFileError as exc:
            raise HarnessError(str(exc)) from None
    else:
        for folder in args.keys or []:
            if not folder.is_dir():
                raise HarnessError(f"--keys {folder}: no such folder")
        published = publisher_keys(*(args.keys or key_folders(args.archive)))
        mine = own_key()
        if not args.keys and mine is not None:
            published.setdefault(mine.keyid, mine)  # the user's own key comes last
    sign_key = signing_key_or_new(args.sign_key)
    out = args.out or Path("out/audit") / sha256_file(args.archive)
    auditor = Auditor(
        args.archive,
        out,
        verify_key=verify_key,
        publisher_keys=published,
        sign_key=sign_key,
        expect=expect,
        memory_gib=args.memory,
        timeout=args.timeout,
        force=args.force,
    )
    verdict, code, doc = auditor.run()
    for c in doc["checks"]:
        print(f"{c['status']:<8} {c['check']:<20} {c['detail']}")
    print()
    print(f"verdict {verdict}; signed audit manifest {out / 'audit.yaml'}")
    return code


__all__ = ["register", "EXIT_USAGE"]
