"""A small Lean project and PATH shims for the recorded stand-in, for the Lean-runner tests.

Test modules take the fixture with ``from .standin.world import world_fixture  # noqa: F401``
and a ``world`` parameter (kept out of ``conftest.py``, which the renderer's tests may own).

The project mirrors the real one's shape: model modules ``Pop/Rules.lean`` and
``Pop/Check.lean``; rendered modules ``Generated/Shard0001`` (no lower shards),
``Shard0002`` (looks into 0001), ``Shard0003`` (independent of both), a corpus module that
prints GUARD_HITS, and ``Main`` with the final theorem, importing 0002 and 0003.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

STANDIN = Path(__file__).parent / "standin.py"
PIN = "leanprover/lean4:v4.22.0"

RULES = """\
/-! The research family's rules on `Nat` bitboards (test copy). -/
namespace Pop

def popcount : Nat → Nat → Nat
  | 0, _ => 0
  | fuel + 1, n => if n = 0 then 0 else n % 2 + popcount fuel (n / 2)

inductive ForceWin : Nat → Prop
  | now (p : Nat) : p % 2 = 1 → ForceWin p

end Pop
"""

CHECK = """\
import Pop.Rules

namespace Pop

def checkShard (entries : List Nat) : Bool := entries.all (fun p => p % 2 == 1)

theorem checkShard_sound (entries : List Nat) (h : checkShard entries = true) :
    ∀ p ∈ entries, ForceWin p := by
  intro p hp
  exact ForceWin.now p (by simp [checkShard] at h; have := h p hp; omega)

end Pop
"""


def shard(number: int, lower: list[int]) -> str:
    imports = "".join(f"import Generated.Shard{n:04d}\n" for n in lower)
    name = f"shard{number:04d}_forceWin"
    return f"""\
import Pop.Check
{imports}
namespace Pop.Generated

/-- The entries of shard {number}, as play reaches them. -/
def shard{number:04d} : List Nat := [1, 3, 5, {2 * number + 1}]

theorem {name} : ∀ p ∈ shard{number:04d}, ForceWin p :=
  checkShard_sound _ (by decide)

/-- info: 'Pop.Generated.{name}' depends on axioms: [propext] -/
#guard_msgs in
#print axioms {name}

end Pop.Generated
"""


CORPUS = """\
import Pop.Rules

namespace Pop.Corpus

def hits : List (String × Nat) := [("land", 4), ("pop", 9), ("line", 2)]

#eval IO.println ("GUARD_HITS " ++ ",".intercalate (hits.map fun (k, n) => s!"{k}={n}"))

end Pop.Corpus
"""

MAIN = """\
import Generated.Shard0002
import Generated.Shard0003

namespace Pop

theorem initial_force_win : ForceWin 5 :=
  Generated.shard0002_forceWin 5 (by decide)

#print axioms initial_force_win

end Pop
"""


@dataclass
class LeanWorld:
    """A project, a PATH holding the stand-in, and the scenario it reads."""

    root: Path
    project: Path
    bin: Path
    env: dict[str, str]
    scenario_path: Path
    calls_path: Path

    def scenario(self, modules: dict | None = None, **extra) -> None:
        data = {"modules": modules or {}, "log": str(self.calls_path), **extra}
        self.scenario_path.write_text(json.dumps(data))

    def calls(self) -> list[dict]:
        if not self.calls_path.exists():
            return []
        return [json.loads(line) for line in self.calls_path.read_text().splitlines()]

    def write(self, rel: str, text: str) -> None:
        path = self.project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def write_shim(folder: Path, tool: str) -> Path:
    path = folder / tool
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STANDIN}" {tool} "$@"\n')
    path.chmod(0o755)
    return path


def make_project(project: Path) -> None:
    files = {
        "lakefile.toml": 'name = "pop"\ndefaultTargets = ["Pop"]\n\n[[lean_lib]]\nname = "Pop"\n'
        '\n[[lean_lib]]\nname = "Generated"\nglobs = ["Generated.+"]\n',
        "lean-toolchain": PIN + "\n",
        "Pop/Rules.lean": RULES,
        "Pop/Check.lean": CHECK,
        "Generated/Shard0001.lean": shard(1, []),
        "Generated/Shard0002.lean": shard(2, [1]),
        "Generated/Shard0003.lean": shard(3, []),
        "Generated/Corpus.lean": CORPUS,
        "Generated/Main.lean": MAIN,
    }
    for rel, text in files.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture(name="world")
def world_fixture(tmp_path: Path) -> LeanWorld:
    project = tmp_path / "lean"
    make_project(project)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("lake", "lean"):
        write_shim(bin_dir, tool)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "POP_STANDIN_SCENARIO": str(tmp_path / "scenario.json"),
    }
    w = LeanWorld(
        root=tmp_path,
        project=project,
        bin=bin_dir,
        env=env,
        scenario_path=tmp_path / "scenario.json",
        calls_path=tmp_path / "calls.jsonl",
    )
    w.scenario()
    return w
