"""A recorded stand-in for the other stages' commands, to test the pipeline's orchestration.

It answers ``solve``, ``certify``, ``check``, ``corpus``, ``render`` and ``lean`` the way the
real commands do (same exit codes, same files, same JSON fields), with tiny outputs, so
the manifest stage can be tested quickly and for failures the real stages rarely produce.
The real stages are exercised end to end in ``test_end_to_end.py``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import blake3

from harness.verify.stages import Completed, HarnessRunner

RULESET = "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump"
ROOT = "..../..../..../.... 8 8 x"
AXIOMS = ["propext", "Classical.choice", "Quot.sound"]
GUARD = {"place": 3, "push": 2}
NO_TOOLCHAIN = (
    "error: no Lean toolchain: lake and lean not found on PATH or in /home/someone/.elan/bin; "
    "install elan"
)


def tiny_lean_project(root: Path) -> Path:
    """A Lean project shaped like ours: lean-toolchain, lakefile, Pop.lean, Pop/Rules.lean."""
    (root / "Pop").mkdir(parents=True, exist_ok=True)
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.34.0\n")
    (root / "lakefile.toml").write_text('name = "pop"\n')
    (root / "Pop.lean").write_text("import Pop.Rules\n")
    (root / "Pop" / "Rules.lean").write_text("namespace Pop\ndef rows : Nat := 4\nend Pop\n")
    (root / ".lake").mkdir(exist_ok=True)
    (root / ".lake" / "junk.olean").write_bytes(b"\0build output, never copied")
    return root


class StandIn(HarnessRunner):
    """``missing``: commands that do not exist; ``fail``: the command that fails;
    ``lean``: "none" (no toolchain), "pass", or "guard" (passes with other GUARD_HITS);
    ``budget``: the command whose budget runs out (exit 3, as solve and certify do)."""

    def __init__(
        self, *, missing=(), fail=None, lean="none", winner="x", budget=None, plies=7
    ) -> None:
        self.plies = plies
        super().__init__()
        self.missing = set(missing)
        self.fail = fail
        self.budget = budget
        self.lean = lean
        self.winner = winner
        self.calls: list[list[str]] = []

    def commands(self) -> set[str]:
        return {"solve", "certify", "check", "corpus", "render", "lean"} - self.missing

    def options(self, command: str) -> set[str]:
        return {
            "render": {"--out", "--corpus"},
            "lean": {"--project", "--out", "--cache", "--memory", "--timeout", "--jobs"},
        }.get(command, set())

    def run(self, args: list[str], *, timeout: float | None = None) -> Completed:
        self.calls.append(list(args))
        cmd = args[0]
        if cmd == self.fail:
            return Completed(args, 1, "", f"error: {cmd} stand-in was told to fail\n", 0.01)
        if cmd == self.budget:
            message = f"error: {args[1]}: budget exhausted after 3270000 nodes and 600 s\n"
            return Completed(args, 3, "", message, 600.0)
        return getattr(self, f"_{cmd}")(args)

    @staticmethod
    def _opt(args: list[str], flag: str) -> str:
        return args[args.index(flag) + 1]

    def _solve(self, args):
        out = {
            "ruleset": args[1],
            "value": "x",
            "plies": self.plies,
            "positions": 413341,
            "seconds": 0.5,
        }
        return Completed(args, 0, json.dumps(out) + "\n", "", 0.5)

    def _certify(self, args):
        out = Path(self._opt(args, "--out"))
        out.mkdir(parents=True)
        line = json.dumps({"position": ROOT, "action": "b2", "rank": 7}) + "\n"
        data = gzip.compress(line.encode(), mtime=0)
        (out / "shard-0000-p16.jsonl.gz").write_bytes(data)
        digest = blake3.blake3(data).hexdigest()
        cert_hash = blake3.blake3((digest + "\n").encode()).hexdigest()
        index = (
            f"format: 1\nruleset: {args[1]}\nwinner: {self.winner}\nroot: '{ROOT}'\nentries: 1\n"
            f"shards:\n- file: shard-0000-p16.jsonl.gz\n  blake3: {digest}\n  entries: 1\n"
            f"  placement_rank: 16\nhash: {cert_hash}\n"
        )
        (out / "index.yaml").write_text(index)
        return Completed(args, 0, json.dumps({"hash": cert_hash}) + "\n", "", 0.2)

    def _check(self, args):
        import yaml

        index = yaml.safe_load((Path(args[1]) / "index.yaml").read_text())
        out = {"ok": True, "hash": index["hash"], "turns": 3, "errors": []}
        return Completed(args, 0, json.dumps(out) + "\n", "", 0.1)

    def _corpus(self, args):
        out = Path(self._opt(args, "--out"))
        out.mkdir(parents=True, exist_ok=True)
        (out / "corpus.jsonl").write_text('{"ruleset": "x"}\n')
        (out / "summary.json").write_text(json.dumps({"seed": 0, "records": 1, "rulesets": 1}))
        guard = "GUARD_HITS " + ",".join(f"{k}={v}" for k, v in GUARD.items())
        return Completed(args, 0, f"1 transitions over 1 rulesets -> {out}\n{guard}\n", "", 0.1)

    def _render(self, args):
        import yaml

        cert = Path(args[1])
        out = Path(self._opt(args, "--out"))
        out.mkdir(parents=True)
        index = yaml.safe_load((cert / "index.yaml").read_text())
        (out / "Cert.lean").write_text("import Pop\nnamespace Generated.Cert\nend Generated.Cert\n")
        (out / "Main.lean").write_text(
            "import Pop\nimport Generated.Cert\nnamespace Generated.Main\n"
            "theorem initial_force_win : True := trivial\nend Generated.Main\n"
        )
        (out / "Corpus.lean").write_text(
            "import Pop\nnamespace Generated.Corpus\n"
            "theorem consistent : True := trivial\n"
            "end Generated.Corpus\n"
        )
        guard = "GUARD_HITS " + ",".join(f"{k}={v}" for k, v in GUARD.items())
        summary = {
            "format": 1,
            "certificate": index["hash"],
            "theorem": {
                "name": "Generated.Main.initial_force_win",
                "statement": (
                    "theorem initial_force_win : ForceWin (Geo.of ⟨4, 4, 8, .torus⟩) Side.x …"
                ),
                "axioms": AXIOMS,
            },
            "modules": [
                {"module": "Generated.Cert", "kind": "cert", "imports": []},
                {
                    "module": "Generated.Main",
                    "kind": "main",
                    "axioms": {"Generated.Main.initial_force_win": AXIOMS},
                },
                {
                    "module": "Generated.Corpus",
                    "kind": "corpus",
                    "axioms": {"Generated.Corpus.consistent": AXIOMS},
                },
            ],
            "corpus": {"records": 1, "skipped": 0, "guard_hits": guard},
            "budget": 10_000_000,
            "declarations": [
                {"module": "Generated.Cert", "estimated_steps": 180_000},
                {"module": "Generated.Main", "estimated_steps": 2_520_000},
            ],
        }
        (out / "render.json").write_text(json.dumps(summary))
        return Completed(args, 0, "", "", 0.1)

    def _lean(self, args):
        if self.lean == "none":
            return Completed(args, 4, "", NO_TOOLCHAIN + "\n", 0.05)
        guard = dict(GUARD) if self.lean == "pass" else {"place": 99}
        axioms = {
            "Generated.Main.initial_force_win": ["propext"],
            "Generated.Corpus.consistent": ["propext"],
        }
        shards = {
            name: {
                "module": name,
                "status": "passed",
                "cached": False,
                "seconds": 2.5,
                "peak_mib": 512.0,
                "axioms": {},
                "guard_hits": {},
            }
            for name in ("Generated.Cert", "Generated.Main", "Generated.Corpus")
        }
        result = {
            "format": "pop-harness/lean-result/1",
            "created": "2026-11-30T00:00:00Z",
            "ok": True,
            "project": "/somewhere/on/the/host",
            "toolchain": {
                "pinned": "leanprover/lean4:v4.34.0",
                "lean_version": "4.34.0",
                "matches_pin": True,
                "lean": "Lean (version 4.34.0)",
                "lake": "Lake",
                "elan": None,
                "paths": {"lake": "/home/someone/.elan/bin/lake"},
            },
            "limits": {"jobs": 1, "memory_gib": 8.0, "timeout_seconds": 1800.0},
            "shards": shards,
            "axioms": axioms,
            "guard_hits": guard,
            "summary": {"modules": 3, "passed": 3, "failed": 0, "cached": 0},
            "replay": {
                "status": "passed",
                "tool": "leanchecker",
                "modules": {
                    name: {"status": "passed", "seconds": 1.0, "peak_mib": 64.0, "log": "/x"}
                    for name in shards
                },
            },
        }
        Path(self._opt(args, "--out")).write_text(json.dumps(result))
        return Completed(args, 0, "3 modules: 3 passed\n", "", 7.5)
