"""Benchmark: the Lean declarations of every published certificate, before and after issue 9.

For each certificate under ``manifests/archives/`` (the sealed archives hold the certificate),
the renderer expands it, weighs every rendered entry with the kernel cost model of
:mod:`harness.lean.model` and packs the shards into declarations. Printed as Markdown:

* **before**: the Lean code and layout before the kernel cost model (cost variant ``v1``:
  overloaded operators, ``if`` on ``Bool``, torus arithmetic in every step, own shard searched
  first; one ``decide +kernel`` per shard plus the root);
* **after**: the code now (``v2``), with every shard split into declarations of at most
  ``--budget`` estimated steps (default 1e7).

Non-win (format 2) certificates had no "before": they are listed below the table by name.

Estimates are kernel reduction steps, not seconds: the first real Lean run calibrates them
(``docs/lean.md``, "Kernel cost model"). Rendering time is wall and CPU time of this process.

Usage::

    python benchmarks/bench_lean.py                # every published certificate
    python benchmarks/bench_lean.py --only 6x6     # names containing 6x6
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.cert.nonwin_format import FORMAT as NONWIN_FORMAT  # noqa: E402
from harness.cert.nonwin_format import index_format  # noqa: E402
from harness.lean import certdata as lean_certdata  # noqa: E402
from harness.lean import render as R  # noqa: E402
from harness.lean import sizing  # noqa: E402


def published(only: str | None) -> list[Path]:
    return sorted(
        p for p in (ROOT / "manifests" / "archives").glob("*.zip") if only is None or only in p.name
    )


def measure(archive: Path, budget: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(archive) as z:
        names = [n for n in z.namelist() if "/certificate/" in n]
        if not names:
            return {}
        z.extractall(tmp, names)
        (cert_dir,) = Path(tmp).glob("*/certificate")
        if index_format(cert_dir) == NONWIN_FORMAT:
            return {"nonwin": archive.name}
        wall, cpu = time.perf_counter(), time.process_time()
        cert = lean_certdata.read_certificate(cert_dir)
        lean_certdata.expand(cert)
        R.weigh(cert, budget, progress=False)
        ok, _ = R.mirror_check(cert)
        _, root_v2, root_v1 = R.root_cost(cert)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    before = [sum(s.weights_v1) + R.DECL_OVERHEAD for s in cert.shards] + [root_v1]
    after = [
        w for s in cert.shards for w in sizing.run_weights(s.weights, s.runs, R.DECL_OVERHEAD)
    ] + [root_v2]
    rendered = sum(len(s.entries) + len(s.aliases) for s in cert.shards)
    return {
        "ruleset": cert.ruleset,
        "entries": sum(len(s.entries) for s in cert.shards),
        "rendered": rendered,
        "accepted": ok,
        "before": before,
        "after": after,
        "wall": wall,
        "cpu": cpu,
    }


def fmt(n: float) -> str:
    return f"{n:.2e}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="certificates whose archive name contains this")
    ap.add_argument("--budget", type=int, default=sizing.BUDGET)
    args = ap.parse_args(argv)
    print(f"## Lean declarations per published certificate (budget {fmt(args.budget)} steps)\n")
    print(
        "| certificate | entries | rendered | mirror | decls before | largest before "
        "| total before | decls after | largest after | total after | per entry before → after "
        "| ratio | render s (CPU) |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    nonwin = []
    for archive in published(args.only):
        m = measure(archive, args.budget)
        if not m:
            continue
        if "nonwin" in m:
            nonwin.append(m["nonwin"])
            continue
        b, a = m["before"], m["after"]
        print(
            f"| {m['ruleset']} | {m['entries']:,} | {m['rendered']:,} "
            f"| {'accepts' if m['accepted'] else 'REJECTS'} "
            f"| {len(b)} | {fmt(max(b))} | {fmt(sum(b))} "
            f"| {len(a)} | {fmt(max(a))} | {fmt(sum(a))} "
            f"| {sum(b) / m['rendered']:,.0f} → {sum(a) / m['rendered']:,.0f} "
            f"| {sum(b) / sum(a):.2f}× | {m['wall']:.1f} ({m['cpu']:.1f}) |"
        )
    if nonwin:
        print(
            f"\nNon-win certificates (rendered in declarations from the start): {', '.join(nonwin)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
