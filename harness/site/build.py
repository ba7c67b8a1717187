"""Build the static site: Jinja page templates from ``templates/site`` plus the files of
``harness/site/static`` (the browser engine ``pop.js`` and the pages' scripts and styles).

The output is plain files that any static file server can serve; nothing is fetched from the
network when the pages run. The whole site is built in a temporary folder beside the target and
swapped in at the end, so an interrupted or failed build never leaves a half-written site.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from harness.cli import HarnessError
from harness.rules import RESEARCH_RULESET

PACKAGE_DIR = Path(__file__).resolve().parent
STATIC_DIR = PACKAGE_DIR / "static"
TEMPLATE_DIR = PACKAGE_DIR.parents[1] / "templates" / "site"

# A site folder carries this file, so that rebuilding never deletes a folder we did not make.
MARKER = ".pop-site"


@dataclass(frozen=True)
class Page:
    """One page: ``templates/site/<template>`` rendered to ``<out>/<filename>``."""

    name: str
    filename: str
    title: str
    template: str
    blurb: str = ""
    in_nav: bool = True
    context: dict = field(default_factory=dict)


PAGES: tuple[Page, ...] = (
    Page("index", "index.html", "Home", "index.html.j2", in_nav=False),
    Page(
        "play",
        "play.html",
        "Play",
        "play.html.j2",
        blurb="any ruleset, against a friend or a random mover",
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
    pages: tuple[Page, ...] = PAGES, template_dir: Path = TEMPLATE_DIR
) -> dict[str, str]:
    """Render every page to text, keyed by output filename."""
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


def build_site(out: Path | str, pages: tuple[Page, ...] = PAGES) -> list[Path]:
    """Build the site into ``out`` (replacing an earlier build); return the files written."""
    out = Path(out)
    _check_target(out)
    if not STATIC_DIR.is_dir():
        raise HarnessError(f"site: static folder {STATIC_DIR} is missing")
    rendered = render_pages(pages)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        shutil.copytree(STATIC_DIR, tmp / "static", ignore=shutil.ignore_patterns("*.map"))
        for filename, text in rendered.items():
            (tmp / filename).write_text(text, encoding="utf-8")
        (tmp / MARKER).write_text("built by python -m harness site\n", encoding="utf-8")
        for path in tmp.rglob("*"):
            # mkdtemp makes the folder private; a site is meant to be readable by a web server.
            path.chmod(0o755 if path.is_dir() else 0o644)
        tmp.chmod(0o755)
        _swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sorted(p for p in out.rglob("*") if p.is_file())


def _swap_in(new: Path, out: Path) -> None:
    """Replace ``out`` by ``new`` with renames, so readers see the old site or the new one."""
    if not out.exists():
        os.replace(new, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    old.rmdir()
    os.replace(out, old)
    try:
        os.replace(new, out)
    except BaseException:
        os.replace(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)
