"""What is proven today (harness.results.published): read from the signed records, printed
by ``results --published``, and the README and docs/results.md hold exactly that text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import HarnessError
from harness.manifest.keys import generate
from harness.results.published import (
    Published,
    block_in,
    generated_block,
    read_published,
    read_solved,
    summary_markdown,
    tables_markdown,
)

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "manifests"


@pytest.fixture(scope="module")
def rows() -> list[Published]:
    return read_published(MANIFESTS)


def test_every_published_record_is_read(rows):
    assert len(rows) == len(list(MANIFESTS.glob("*.yaml")))
    assert {r.value for r in rows} <= {"x", "o", "draw"}


def test_the_readme_says_what_the_records_say(rows):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    solved = read_solved(MANIFESTS)
    want = generated_block("summary", summary_markdown(rows, solved))
    assert block_in(readme, "summary") == want
    assert readme.index("## What is proven today") < readme.index("## Quick start")


def test_docs_results_list_what_the_records_say(rows):
    page = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    solved = read_solved(MANIFESTS)
    assert block_in(page, "tables") == generated_block("tables", tables_markdown(rows, solved))


def _row(value: str, lean: str = "not run", check: str = "passed") -> Published:
    plies = None if value == "draw" else 7
    return Published("pop1-4x4-c4-torus-continue-binempty-king-nozero-nojump", value, plies, 9,
                     check, lean, "INCOMPLETE", "0" * 16)  # fmt: skip


def test_the_summary_counts_values_and_checks():
    text = summary_markdown([_row("x"), _row("draw"), _row("o", check="failed")])
    assert "**3 results are published**" in text
    assert "1 wins for x, 1 for o, 1 draws" in text
    assert "accepted 2 of 3" in text
    assert "checked 0 of 3" in text and "INCOMPLETE" in text


def test_the_summary_says_when_the_kernel_checked_everything():
    text = summary_markdown([_row("x", lean="passed"), _row("o", lean="passed")])
    assert "The Lean kernel checked all 2." in text
    assert "not run" not in text


def test_a_record_signed_by_an_unknown_key_is_an_error(tmp_path):
    published = tmp_path / "manifests"
    (published / "keys").mkdir(parents=True)
    name = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
    for suffix in (".yaml", ".dsse.json"):
        shutil.copy(MANIFESTS / f"{name}{suffix}", published / f"{name}{suffix}")
    stranger = generate(tmp_path / "k" / "signing-key.pem")
    shutil.copy(stranger.path.with_name("signing-key.pem.pub"), published / "keys" / "s.pub")
    with pytest.raises(HarnessError, match="signed by no key"):
        read_published(published)


def test_the_command_prints_both_blocks(capsys):
    assert main(["results", "--published", "--manifests", str(MANIFESTS)]) == 0
    out = capsys.readouterr().out
    assert block_in(out, "summary") is not None and block_in(out, "tables") is not None
