"""Build the static site: Jinja page templates from ``harness/site/templates`` plus the files of
``harness/site/static`` (the browser engine ``pop.js`` and the pages' scripts and styles).

Pages: Home, Play (with perfect play and action values for the rulesets in
:data:`harness.site.solved.SOLVED_RULESETS`, solved at build time), Rules (with diagrams
drawn from the engine), Results (every ruleset attempted) and one Replay page per published
result, read from the artifacts of :mod:`harness.site.artifacts`.

The output is plain files that any static file server can serve; nothing is fetched from the
network when the pages run. The whole site is built in a temporary folder beside the target and
swapped in at the end, so an interrupted or failed build never leaves a half-written site.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from harness.atomic import staging_dir
from harness.cert.nonwin_format import FORMAT as NONWIN_FORMAT
from harness.cert.nonwin_format import index_format
from harness.errors import HarnessError
from harness.results.matrix import EDGES
from harness.rules import RESEARCH_RULESET
from harness.rules.ruleset import Ruleset
from harness.site import codeview, diagrams
from harness.site.artifacts import Result, Sources, collect_results
from harness.site.draw_line import draw_line
from harness.site.grid import index_grid, proven_today_html, results_grids
from harness.site.howto import how_it_plays
from harness.site.replay import certified_line
from harness.site.solved import SOLVED_RULESETS, SolvedTable, build_tables, index_json

PACKAGE_DIR = Path(__file__).resolve().parent
STATIC_DIR = PACKAGE_DIR / "static"
TEMPLATE_DIR = PACKAGE_DIR / "templates"

# A site folder carries this file, so that rebuilding never deletes a folder we did not make.
MARKER = ".pop-site"


@dataclass(frozen=True)
class Page:
    """One page: ``harness/site/templates/<template>`` rendered to ``<out>/<filename>``."""

    name: str
    filename: str
    title: str
    template: str
    blurb: str = ""
    in_nav: bool = True
    context: dict = field(default_factory=dict)


RULES_DOC = PACKAGE_DIR.parents[1] / "docs" / "rules.md"
RULES_DOC_PAGE = "rules-exact.html"

PAGES: tuple[Page, ...] = (
    Page("index", "index.html", "Home", "index.html.j2", in_nav=False),
    Page(
        "play",
        "play.html",
        "Play",
        "play.html.j2",
        blurb="any ruleset, against a friend, a random mover or perfect play",
    ),
    Page(
        "rules",
        "rules.html",
        "Rules",
        "rules.html.j2",
        blurb="how a turn goes, the pop, the edges and how a game ends",
    ),
    Page(
        "results",
        "results.html",
        "Results",
        "results.html.j2",
        blurb="every ruleset attempted, with the replay and proof of each published result",
    ),
)


def _commit() -> str:
    """The short commit the site is built from, or ``unknown`` outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=PACKAGE_DIR,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def _environment(template_dir: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir)),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,  # a missing variable is a build error, not a blank
        keep_trailing_newline=True,
    )


def render_pages(
    pages: tuple[Page, ...] = PAGES,
    template_dir: Path = TEMPLATE_DIR,
    extra: dict | None = None,
) -> dict[str, str]:
    """Render every page to text, keyed by output filename; ``extra`` is shared context."""
    env = _environment(template_dir)
    nav = [
        {"name": p.name, "href": p.filename, "title": p.title, "blurb": p.blurb}
        for p in pages
        if p.in_nav
    ]
    common = {
        "nav": nav,
        "commit": _commit(),
        "rules_version": RESEARCH_RULESET.id.split("-", 1)[0],
        "default_ruleset": RESEARCH_RULESET.id,
        "solved_index": "{}",
        "results": [],
        "rules_doc_href": RULES_DOC_PAGE if RULES_DOC.is_file() else "rules.html",
        "grids": [],
        "index_grid": [],
        "proven_today": "",
        "edges": list(EDGES),
        **(extra or {}),
    }
    out: dict[str, str] = {}
    for page in pages:
        try:
            template = env.get_template(page.template)
            out[page.filename] = template.render(
                **common, page=page.name, title=page.title, **page.context
            )
        except jinja2.TemplateError as exc:
            raise HarnessError(f"site: template {page.template}: {exc}") from exc
    return out


def _check_target(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise HarnessError(f"site: --out {out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise HarnessError(
            f"site: --out {out} is a non-empty folder that was not built by this command; "
            "choose an empty or new folder"
        )


def build_site(
    out: Path | str,
    pages: tuple[Page, ...] = PAGES,
    *,
    sources: Sources | None = None,
    solved: tuple[str, ...] = SOLVED_RULESETS,
) -> list[Path]:
    """Build the site into ``out`` (replacing an earlier build); return the files written.

    ``sources`` says where the verify/seal artifacts are (none: the Results page says nothing
    was given); ``solved`` lists the rulesets solved at build time for perfect play.
    """
    out = Path(out)
    _check_target(out)
    if not STATIC_DIR.is_dir():
        raise HarnessError(f"site: static folder {STATIC_DIR} is missing")
    sources = sources or Sources()
    tables = build_tables(solved)
    with tempfile.TemporaryDirectory(prefix="pop-site-") as scratch:
        results = collect_results(sources, Path(scratch))
        return _build(out, pages, sources, tables, results)


def _build(out: Path, pages, sources: Sources, tables, results: list[Result]) -> list[Path]:
    keys = _published_keys(sources)
    summaries = [result_summary(r) for r in results]
    extra = {
        "solved_index": index_json(tables),
        "solved": [t.meta for t in tables],
        "results": summaries,
        "index_grid": index_grid(summaries),
        "proven_today": proven_today_html(results, sources.manifests_dir),
        "grids": results_grids(sources.manifests_dir, {r.ruleset for r in results}),
        "sources": {
            "from_dir": str(sources.from_dir) if sources.from_dir else None,
            "manifests_dir": str(sources.manifests_dir) if sources.manifests_dir else None,
            "dist_dir": str(sources.dist_dir) if sources.dist_dir else None,
            "include_local": sources.include_local,
        },
        "publisher_keys": [
            {"keyid": k.keyid, "short": k.short, "href": f"keys/{k.path.name}"} for k in keys
        ],
        **rules_page_context(),
    }
    all_pages = tuple(pages) + tuple(replay_page(r) for r in results if r.page)
    if RULES_DOC.is_file():
        all_pages += (rules_doc_page(),)
    rendered = render_pages(all_pages, extra=extra)
    with staging_dir(out) as tmp:
        _copy_static(tmp / "static")
        _write_tables(tmp / "static" / "solved", tables)
        _write_downloads(tmp, results)
        if keys:
            (tmp / "keys").mkdir()
            for k in keys:
                shutil.copyfile(k.path, tmp / "keys" / k.path.name)
        for filename, text in rendered.items():
            (tmp / filename).write_text(text, encoding="utf-8")
        (tmp / MARKER).write_text("built by python -m harness site\n", encoding="utf-8")
        for path in tmp.rglob("*"):
            # A site is meant to be readable by a web server, whatever the umask.
            path.chmod(0o755 if path.is_dir() else 0o644)
        tmp.chmod(0o755)
    return sorted(p for p in out.rglob("*") if p.is_file())


def _published_keys(sources: Sources) -> list:
    """The publisher keys the site carries (``MANIFESTS/keys/*.pub``), in key id order."""
    from harness.manifest.published import KEYS_DIR, publisher_keys

    if sources.manifests_dir is None:
        return []
    return sorted(publisher_keys(sources.manifests_dir / KEYS_DIR).values(), key=lambda k: k.keyid)


def _copy_static(dest: Path) -> None:
    """The browser files (not source maps), copied file by file so that a failed copy is the
    ``OSError`` of that file (``copytree`` gathers them into one ``shutil.Error``)."""
    dest.mkdir()
    for src in sorted(STATIC_DIR.iterdir()):
        if src.is_file() and src.suffix != ".map":
            shutil.copyfile(src, dest / src.name)


def _write_tables(folder: Path, tables: list[SolvedTable]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for t in tables:
        (folder / t.json_name).write_text(json.dumps(t.meta, sort_keys=True), encoding="utf-8")
        (folder / t.bin_name).write_bytes(t.data)


def _write_downloads(root: Path, results: list[Result]) -> None:
    """Manifests (YAML and envelope) and sealed archives, as downloads beside the pages."""
    for r in results:
        folder = root / "results" / r.slug
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(r.manifest_path, folder / "manifest.yaml")
        if r.envelope_path is not None:
            shutil.copyfile(r.envelope_path, folder / "manifest.dsse.json")
        if r.archive is not None:
            shutil.copyfile(r.archive.path, folder / f"{r.archive.name}.zip")


def rules_doc_page() -> Page:
    """``docs/rules.md`` as a page: the rules exactly, in the project's words."""
    from markdown_it import MarkdownIt

    text = RULES_DOC.read_text(encoding="utf-8")
    html = MarkdownIt("commonmark").enable("table").render(text)
    # Tables scroll inside their own box on a phone, not the page.
    html = html.replace("<table>", '<div class="table-scroll" tabindex="0"><table>').replace(
        "</table>", "</table></div>"
    )
    return Page(
        "rules-exact",
        RULES_DOC_PAGE,
        "The rules, exactly",
        "doc.html.j2",
        in_nav=False,
        context={"doc_html": html},
    )


# --- the Rules page --------------------------------------------------------------------------


def rules_page_context() -> dict:
    before, after, caption = diagrams.pop_diagrams()
    return {
        "edge_diagrams": [
            {"edge": d.edge, "title": d.title, "caption": d.caption, "svg": d.svg}
            for d in diagrams.edge_diagrams()
        ],
        "pop_diagram": {"before": before, "after": after, "caption": caption},
        "pop_example": {
            "ruleset": diagrams.POP_RULESET,
            "position": diagrams.POP_BEFORE,
            "action": diagrams.POP_ACTION,
        },
    }


# --- results and replays ---------------------------------------------------------------------


def _guard_hits(line: str | None) -> dict[str, int]:
    if not line or not line.startswith("GUARD_HITS"):
        return {}
    body = line.split(None, 1)[1] if " " in line else ""
    out = {}
    for item in body.split(","):
        name, _, count = item.partition("=")
        if name and count.isdigit():
            out[name] = int(count)
    return out


def result_summary(r: Result) -> dict:
    """What the Results table and a Replay page show about one result, all from artifacts."""
    m = r.manifest
    res = m.get("result") or {}
    cert = m.get("certificate") or {}
    lean = m.get("lean") or {}
    check = m.get("check") or {}
    theorem = m.get("final_theorem") or {}
    modules = lean.get("modules") or []
    failed = r.failed_step
    expected = str(check.get("expected_output") or "")
    first = expected.splitlines()[0] if expected else None
    key = r.publisher_key
    return {
        "ruleset": r.ruleset,
        "local": r.local,
        "slug": r.slug,
        "status": r.status,
        "verdict": r.verdict,
        "page": r.page,
        "created": m.get("created"),
        "value": res.get("value"),
        "plies": res.get("plies"),
        "positions": res.get("positions"),
        "positions_bound": _positions_bound(r.ruleset, res.get("positions")),
        "solve_seconds": res.get("solve_seconds"),
        "certificate": {
            "hash": cert.get("hash"),
            "winner": cert.get("winner"),
            "entries": cert.get("entries"),
            "shards": len(cert.get("shards") or []),
            "python_check": cert.get("python_check") or {},
        },
        "lean": {
            "status": lean.get("status"),
            "reason": lean.get("reason"),
            "toolchain": lean.get("toolchain"),
            "modules": len(modules),
            "passed": sum(1 for x in modules if x.get("status") == "passed"),
        },
        "theorem": {
            "name": theorem.get("name"),
            "statement": theorem.get("statement"),
            "axioms": theorem.get("axioms"),
            "axioms_pinned": theorem.get("axioms_pinned") or [],
        },
        "check": check,
        "corpus": m.get("corpus") or {},
        "corpus_hits": (m.get("corpus") or {}).get("guard_hits") or {},
        "lean_hits": _guard_hits(first),
        "steps": m.get("steps") or [],
        "failed_step": failed,
        "seconds_spent": r.seconds_spent,
        "solver": (m.get("solver") or {}).get("describe"),
        "signer": (m.get("signer") or {}).get("keyid"),
        "signature": r.signature,
        "publisher_key": (
            {"keyid": key.keyid, "short": key.short, "href": f"keys/{key.path.name}"}
            if key is not None
            else None
        ),
        "environment": m.get("environment") or {},
        "manifest_href": f"results/{r.slug}/manifest.yaml",
        "envelope_href": (
            f"results/{r.slug}/manifest.dsse.json" if r.envelope_path is not None else None
        ),
        "archive": (
            {
                "href": f"results/{r.slug}/{r.archive.name}.zip",
                "name": r.archive.name,
                "file": f"{r.archive.name}.zip",
                "sha256": r.archive.sha256,
                "size": r.archive.size,
                "size_text": size_text(r.archive.size),
                "members": r.archive.members,
            }
            if r.archive is not None
            else None
        ),
        "notes": list(r.notes),
        "has_replay": r.work is not None,
    }


def size_text(n: int) -> str:
    """A file size in binary units, as ``ls -lh`` would say it.

    >>> size_text(876032), size_text(512), size_text(3 << 20)
    ('855.5 KiB', '512 bytes', '3.0 MiB')
    """
    if n < 1024:
        return f"{n} bytes"
    if n < 1 << 20:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1 << 20):.1f} MiB"


def _positions_bound(ruleset: str, positions) -> int | None:
    """When the solver did not enumerate the positions (proof search), the counting bound
    it chose the method by: at most this many positions up to symmetry."""
    if positions is not None:
        return None
    from harness.solver.choice import class_bound

    return class_bound(Ruleset.from_id(ruleset))


def _script_json(value) -> str:
    """JSON safe inside <script type="application/json">: no '</' can close the element."""
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")


def replay_page(r: Result) -> Page:
    rs = Ruleset.from_id(r.ruleset)
    line = None
    lean_text = None
    lean_where = None
    if r.work is not None:
        cert = r.work / "certificate"
        draw = index_format(cert) == NONWIN_FORMAT
        line = [s.as_json() for s in (draw_line if draw else certified_line)(rs, cert)]
        verified = r.work / "lean" / "Pop" / "Rules.lean"
        if verified.is_file():
            # The model as it was verified, not as the repository has it today.
            lean_text = verified.read_text(encoding="utf-8")
            lean_where = "lean/Pop/Rules.lean (as verified)"
    summary = result_summary(r)
    data = {
        "ruleset": rs.id,
        "winner": summary["certificate"]["winner"],
        "steps": line or [],
        "branch_rule": codeview.BRANCH_RULE,
        "branch_words": codeview.BRANCH_WORDS,
    }
    return Page(
        name="replay",
        filename=r.page or "",
        title=f"Replay · {rs.id}",
        template="replay.html.j2",
        in_nav=False,
        context={
            "result": summary,
            "line": line,
            "replay_json": _script_json(data),
            "rule_list": codeview.rule_list(lean_text, lean_where=lean_where),
            "how_it_plays": how_it_plays(rs),
            "rs": {"rows": rs.rows, "cols": rs.cols, "edge": rs.edge, "checkers": rs.checkers},
        },
    )
