"""Archives that leave their rendered Lean out, and the audit that renders it again.

The Lean that ``render`` makes from a big certificate is large (the 5x5 c5 reincarnation draw:
643 MB of modules, and the same again as the one-file model), while the certificate it comes
from is small (11 MB of gzip'd shards). Every byte of that Lean follows from the certificate
and the corpus, which the archive keeps. So when the rendered Lean of a run passes
:data:`RERENDER_ABOVE` bytes, ``seal`` leaves it out and pins each left-out file by its SHA-256
in the seal manifest, under ``rerendered``::

    rerendered:
      bytes: 1349381122
      files:
        formal/Game.lean: 5b1c...
        lean/Generated/Cert.lean: 09af...

``audit`` renders the archive's certificate again with the harness's own ``render``, flattens
the project as ``verify`` did, and accepts the result only if every file is byte for byte the
pinned one. What the kernel then checks is the same text as if the archive had carried it;
the trust is unchanged, since a wrong render can only make the kernel's check fail, never
turn the final theorem's statement (pinned too) into another.

>>> left_out({"formal/Game.lean": "aa", "lean/Pop.lean": "bb", "lean/Generated/A.lean": "cc"},
...          {"formal/Game.lean": 70 << 20, "lean/Generated/A.lean": 1})
{'formal/Game.lean': 'aa', 'lean/Generated/A.lean': 'cc'}
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from harness.manifest.fsutil import sha256_file
from harness.manifest.leanflat import MODEL_FILE, FlattenError, write_model

RERENDER_ABOVE = 64 << 20
"""Rendered Lean past this many bytes is left out of a sealed archive (the published draws up
to 5x5 c3 stay whole: 40 MB of Lean at most)."""

GENERATED = "lean/Generated/"
CERTIFICATE = "certificate"
CORPUS = "corpus/corpus.jsonl"
RENDER_REPORT = "lean/Generated/render.json"
_RENDERED = re.compile(r"^lean/Generated/[A-Za-z][A-Za-z0-9_]*\.lean$")


def rendered_files(files: dict[str, str]) -> list[str]:
    """The members ``render`` and the flattening make: ``lean/Generated/*.lean`` and the
    one-file model. The render report stays in the archive (the manifest is made from it)."""
    return sorted(r for r in files if r == MODEL_FILE or _RENDERED.match(r))


def left_out(
    files: dict[str, str], sizes: dict[str, int], *, above: int = RERENDER_ABOVE
) -> dict[str, str]:
    """The members (relative path -> SHA-256) to leave out of the archive: the rendered Lean
    when it passes ``above`` bytes in all, otherwise none."""
    rels = rendered_files(files)
    if sum(sizes.get(r, 0) for r in rels) <= above:
        return {}
    return {r: files[r] for r in rels}


def rerender(base: Path, pins: dict[str, str], *, runner, scratch: Path) -> list[str]:
    """Render the certificate under ``base`` again, flatten it as ``verify`` did, and put every
    pinned file in place under ``base`` if its SHA-256 is the pinned one.

    Returns the problems, one line each (empty: every pinned file is in place and matches).
    ``runner`` runs harness commands (:class:`harness.verify.stages.HarnessRunner`); the render
    goes to ``scratch``, which is removed afterwards."""
    odd = sorted(rel for rel in pins if rel not in rendered_files({rel: ""}))
    if odd:
        return [f"{odd[0]}: not a file that render or the flattening makes"]
    if "render" not in runner.commands():
        return ["`python -m harness render` is not available to render the Lean again"]
    out = scratch / "Generated"
    args = ["render", str(base / CERTIFICATE), "--out", str(out)]
    if (base / CORPUS).is_file():
        args += ["--corpus", str(base / CORPUS)]
    try:
        done = runner.run(args)
        if done.returncode != 0:
            return [f"render failed: {done.last_error_line()}"]
        problems = []
        for rel in sorted(pins):
            if rel == MODEL_FILE:
                continue
            made = out / rel[len(GENERATED) :]
            if not made.is_file():
                problems.append(f"{rel}: render did not make it")
            elif sha256_file(made) != pins[rel]:
                problems.append(f"{rel}: the render differs from the pinned SHA-256")
        rendered = {GENERATED + p.name for p in out.iterdir() if p.suffix == ".lean"}
        for rel in sorted(rendered - set(pins)):
            problems.append(f"{rel}: rendered, but not pinned in the manifest")
        if problems:
            return problems
        target = base / GENERATED
        target.mkdir(parents=True, exist_ok=True)
        for rel in sorted(rendered):
            os.replace(out / rel[len(GENERATED) :], base / rel)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if MODEL_FILE in pins:
        return _flat_model(base, pins[MODEL_FILE])
    return []


def _flat_model(base: Path, pin: str) -> list[str]:
    """Flatten the project under ``base/lean`` from the render report's modules into the
    model file under ``base`` and compare it with its pin."""
    model = MODEL_FILE
    try:
        report = json.loads((base / RENDER_REPORT).read_text(encoding="utf-8"))
        roots = [m["module"] for m in report.get("modules", [])]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return [f"{RENDER_REPORT}: not a render report ({exc})"]
    path = base / model
    try:
        write_model(base / "lean", roots, path)
    except FlattenError as exc:
        return [f"{model}: {exc}"]
    if sha256_file(path) != pin:
        path.unlink()
        return [f"{model}: the flattened project differs from the pinned SHA-256"]
    return []
