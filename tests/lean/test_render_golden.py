"""Golden files: the rendered modules of a tiny certificate (3x3, 3 checkers, x wins).

The certificate is built in the test by solving the ruleset with the mirror of the Lean model
(``tinycert``), stored one image per symmetry class, so the rendering has aliases too.
Regenerate after an intended change with ``POP_UPDATE_GOLDEN=1 python -m pytest tests/lean``
and review the diff: these files are what the Lean kernel will read.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from harness.lean import certdata as lean_certdata
from harness.lean import readback
from harness.lean import render as R
from harness.lean.codec import Cfg
from harness.rules import Ruleset

sys.path.insert(0, str(Path(__file__).parent))
import tinycert  # noqa: E402

GOLDEN = Path(__file__).parent / "golden"


def test_rendered_modules_match_golden_files(tmp_path):
    cfg = Cfg.of(Ruleset.from_id("pop1-3x3-c3-torus-continue-binempty-king-nozero-nojump"))
    winner, chosen = tinycert.solve(cfg)
    tinycert.write(cfg, tmp_path / "cert", winner, chosen, per_shard=25)
    R.render(tmp_path / "cert", tmp_path / "Generated", chunk=8)
    rendered = {p.name: p.read_text() for p in sorted((tmp_path / "Generated").iterdir())}
    if os.environ.get("POP_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        for old in GOLDEN.iterdir():
            old.unlink()
        for name, text in rendered.items():
            (GOLDEN / name).write_text(text)
    golden = {p.name: p.read_text() for p in sorted(GOLDEN.iterdir())}
    assert sorted(rendered) == sorted(golden)
    for name, text in rendered.items():
        assert text == golden[name], f"{name} differs from tests/lean/golden/{name}"
    # The golden data decodes back to the certificate it was rendered from.
    assert (
        readback.read_back(GOLDEN).canonical()
        == lean_certdata.read_certificate(tmp_path / "cert").canonical()
    )
