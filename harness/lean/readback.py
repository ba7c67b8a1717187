"""Reading rendered Lean modules back into the certificate they were rendered from: the
round trip that shows the modules say what the certificate says.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from harness.lean.certdata import CertData, RenderError, ShardData
from harness.lean.codec import Cfg
from harness.lean.emit import ALIAS
from harness.rules import Ruleset

_TOKEN = re.compile(r"/-alias-/|\.node|\.leaf|\(|\)|\d+|[A-Za-z_][A-Za-z0-9_']*")


def _parse_tree(text: str, defs: dict[str, list], where: str) -> list:
    """Parse a tree expression into a list of (key, act, rank, is_alias), in-order."""
    tokens = _TOKEN.findall(text)
    pos = 0

    def expr() -> list:
        nonlocal pos
        if pos >= len(tokens):
            raise RenderError(f"{where}: truncated tree literal")
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            inner = expr()
            if pos >= len(tokens) or tokens[pos] != ")":
                raise RenderError(f"{where}: unbalanced parentheses in tree literal")
            pos += 1
            return inner
        if tok == ".leaf":
            return []
        alias = tok == ALIAS
        if alias:
            tok = tokens[pos]
            pos += 1
        if tok == ".node":
            left = expr()
            try:
                k, a, n = (int(tokens[pos + i]) for i in range(3))
            except (ValueError, IndexError):
                raise RenderError(f"{where}: malformed node in tree literal") from None
            pos += 3
            right = expr()
            return [*left, (k, a, n, alias), *right]
        if tok in defs:
            return defs[tok]
        raise RenderError(f"{where}: unexpected {tok!r} in tree literal")

    out = expr()
    if pos != len(tokens):
        raise RenderError(f"{where}: trailing text after tree literal")
    return out


_DEF = re.compile(r"^(?:noncomputable )?def (\w+) : Tree :=\n((?:  .*\n)+)", re.M)


_STR = re.compile(r'^def (\w+) : String := "((?:[^"\\]|\\.)*)"$', re.M)


_NAT = re.compile(r"^def (\w+) : Nat := (\d+)$", re.M)


def read_back(out_dir: str | os.PathLike[str]) -> CertData:
    """Read the rendered modules back into the certificate they were rendered from."""
    out_dir = Path(out_dir)
    try:
        cert_text = (out_dir / "Cert.lean").read_text(encoding="utf-8")
    except OSError as exc:
        raise RenderError(f"{out_dir / 'Cert.lean'}: cannot read ({exc.strerror})") from None
    strings = {k: json.loads(f'"{v}"') for k, v in _STR.findall(cert_text)}
    try:
        rs = Ruleset.from_id(strings["rulesetId"])
        winner, root, cert_hash = strings["winnerName"], strings["root"], strings["certHash"]
    except (KeyError, ValueError) as exc:
        raise RenderError(f"{out_dir / 'Cert.lean'}: unreadable ({exc})") from None
    cfg = Cfg.of(rs)
    shards = []
    for path in sorted(out_dir.glob("Shard[0-9][0-9][0-9][0-9].lean")):
        text = path.read_text(encoding="utf-8")
        meta = {k: json.loads(f'"{v}"') for k, v in _STR.findall(text)}
        nats = {k: int(v) for k, v in _NAT.findall(text)}
        defs: dict[str, list] = {}
        for name, body in _DEF.findall(text):
            defs[name] = _parse_tree(body, defs, f"{path.name}: {name}")
        if "tree" not in defs or not {"shardFile", "shardBlake3"} <= meta.keys():
            raise RenderError(f"{path}: not a rendered shard module")
        stored = [(k, a, n) for k, a, n, alias in defs["tree"] if not alias]
        aliases = [(k, a, n) for k, a, n, alias in defs["tree"] if alias]
        shards.append(
            ShardData(
                meta["shardFile"], meta["shardBlake3"], nats["placementRank"], stored, aliases
            )
        )
    return CertData(rs.id, winner, root, cert_hash, cfg, shards)


def decode_records(text: str) -> Iterable[tuple[int, int, int]]:
    """Every (key, act, rank) of a tree literal text (for tests and tools)."""
    return [(k, a, n) for k, a, n, _ in _parse_tree(text, {}, "literal")]
