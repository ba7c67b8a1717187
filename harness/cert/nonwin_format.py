"""Certificate format 2: non-win sets, "player p cannot force a win" (docs/certificates.md).

A non-win set for ``p`` is a set ``S`` of positions closed under play: where ``p`` is to move,
every legal action ends the game without ``p`` winning or leads into ``S``; where the opponent
is to move, the entry names *one* action that does. A draw is two sets in one directory
(``x`` cannot win, ``o`` cannot win)::

    index.yaml
    nonwin-x-0000-p16.jsonl.gz    {"position": TEXT, "action": TEXT or null} per line
    nonwin-x-0001-p15.jsonl.gz
    nonwin-o-0000-p16.jsonl.gz
    ...

Entries where ``p`` is to move have ``"action": null`` (every action is checked); entries
where the defender is to move carry the defender's action in the frame of the stored image.

``index.yaml`` holds ``format: 2``, ``kind: nonwin``, ``ruleset``, ``root``, ``value`` (``draw``
when both sets are present, else ``not x`` / ``not o``), ``entries``, ``sets`` (each
``{player, entries, hash, shards}``, shards as in format 1) and ``hash``: the blake3 of the
set hashes in list order, each followed by a newline; a set's hash is format 1's certificate
hash of its shards.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "cert"
>>> s = NonWinSet(0, [Shard(16, [NonWinEntry("..../..../..../.... 8 8 x", None)])])
>>> idx = write_nonwin(out, "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump",
...                    "..../..../..../.... 8 8 x", [s])
>>> idx["value"], idx["sets"][0]["shards"][0]["file"]
('not x', 'nonwin-x-0000-p16.jsonl.gz')
>>> [e.action for e in read_nonwin_shard(out / idx["sets"][0]["shards"][0]["file"])]
[None]
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from harness.atomic import staging_dir
from harness.cert.format import (
    INDEX,
    CertificateError,
    Shard,
    certificate_hash,
    check_shard_entries,
    digest,
    dump_index,
    is_count,
    load_index_yaml,
    parse_json_line,
    read_shard_file,
    require_fields,
    shard_bytes,
    shard_lines,
)

FORMAT = 2
KIND = "nonwin"
INDEX_FIELDS = ("format", "kind", "ruleset", "root", "value", "entries", "sets", "hash")
# May be present: how the sets were chosen (true: consolidated). No check relies on it.
OPTIONAL_INDEX_FIELDS = ("consolidated",)
SET_FIELDS = ("player", "entries", "hash", "shards")
ENTRY_FIELDS = ("position", "action")
PLAYER_TEXT = ("x", "o")


class NonWinEntry(NamedTuple):
    """One line of a non-win set: a position, and the defender's action (None where the
    player who cannot win is to move)."""

    position: str
    action: str | None

    def line(self) -> str:
        return json.dumps({"position": self.position, "action": self.action})


@dataclass
class NonWinSet:
    """The shards of one set: ``player`` (0 x, 1 o) cannot force a win from any position."""

    player: int
    shards: list[Shard]

    @property
    def entries(self) -> int:
        return sum(len(s.entries) for s in self.shards)


def value_of(players: list[str]) -> str:
    """What sets for these players establish together.

    >>> value_of(["x", "o"]), value_of(["o"])
    ('draw', 'not o')
    """
    if sorted(players) == ["o", "x"]:
        return "draw"
    return f"not {players[0]}"


def nonwin_shard_name(player: int, index: int, placement_rank: int) -> str:
    return f"nonwin-{PLAYER_TEXT[player]}-{index:04d}-p{placement_rank:02d}.jsonl.gz"


def write_nonwin(
    out: str | os.PathLike[str],
    ruleset: str,
    root: str,
    sets: list[NonWinSet],
    *,
    force: bool = False,
    consolidated: bool | None = None,
) -> dict[str, Any]:
    """Write a format-2 directory atomically (like :func:`harness.cert.format.write_certificate`)
    and return its index. ``consolidated``, when given, is recorded in the index: how the
    sets were chosen (``harness.cert.nonwin_builder.consolidate``), which no check relies on."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise CertificateError(f"{out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise CertificateError(f"{out}: directory is not empty (use --force to replace it)")
    if not sets or len({s.player for s in sets}) != len(sets):
        raise CertificateError("a non-win certificate needs one set per player, at least one")
    with staging_dir(out) as tmp:
        listed_sets = []
        for nws in sets:
            listed = []
            for i, shard in enumerate(nws.shards):
                data = shard_bytes(shard.entries)
                name = nonwin_shard_name(nws.player, i, shard.placement_rank)
                (tmp / name).write_bytes(data)
                listed.append(
                    {
                        "file": name,
                        "blake3": digest(data),
                        "entries": len(shard.entries),
                        "placement_rank": shard.placement_rank,
                    }
                )
            listed_sets.append(
                {
                    "player": PLAYER_TEXT[nws.player],
                    "entries": nws.entries,
                    "hash": certificate_hash([s["blake3"] for s in listed]),
                    "shards": listed,
                }
            )
        index = {
            "format": FORMAT,
            "kind": KIND,
            "ruleset": ruleset,
            "root": root,
            "value": value_of([s["player"] for s in listed_sets]),
            "entries": sum(s["entries"] for s in listed_sets),
            "sets": listed_sets,
            "hash": certificate_hash([s["hash"] for s in listed_sets]),
        }
        if consolidated is not None:
            index["consolidated"] = consolidated
        (tmp / INDEX).write_text(dump_index(index), encoding="utf-8")
    return index


def index_format(directory: str | os.PathLike[str]) -> int | None:
    """The ``format`` field of a certificate directory's index (None if unreadable), so that
    callers can dispatch between format 1 (a win) and format 2 (non-win sets)."""
    try:
        index = load_index_yaml(Path(directory) / INDEX)
    except CertificateError:
        return None
    if isinstance(index, dict) and isinstance(index.get("format"), int):
        return index["format"]
    return None


def read_nonwin_index(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate the structure of a format-2 ``index.yaml`` (hashes: the checker)."""
    path = Path(directory) / INDEX
    index = load_index_yaml(path)
    if not isinstance(index, dict):
        raise CertificateError(f"{path}: expected a mapping of {', '.join(INDEX_FIELDS)}")
    required = {k: v for k, v in index.items() if k not in OPTIONAL_INDEX_FIELDS}
    require_fields(required, INDEX_FIELDS, str(path))
    if not isinstance(index.get("consolidated", False), bool):
        raise CertificateError(
            f"{path}: consolidated {index['consolidated']!r} is not true or false"
        )
    if index["format"] != FORMAT or isinstance(index["format"], bool):
        raise CertificateError(f"{path}: format {index['format']!r}, expected {FORMAT}")
    if index["kind"] != KIND:
        raise CertificateError(f"{path}: kind {index['kind']!r}, expected {KIND!r}")
    for key in ("ruleset", "root", "value", "hash"):
        if not isinstance(index[key], str):
            raise CertificateError(f"{path}: field {key!r} must be text")
    if not is_count(index["entries"]):
        raise CertificateError(f"{path}: entries {index['entries']!r} is not a count")
    sets = index["sets"]
    if not isinstance(sets, list) or not 1 <= len(sets) <= 2:
        raise CertificateError(f"{path}: sets must be a list of one or two sets")
    seen_files: set[str] = set()
    players = []
    for j, nws in enumerate(sets):
        where = f"{path}: sets[{j}]"
        if not isinstance(nws, dict):
            raise CertificateError(f"{where}: expected a mapping of {', '.join(SET_FIELDS)}")
        require_fields(nws, SET_FIELDS, where)
        if nws["player"] not in PLAYER_TEXT:
            raise CertificateError(f"{where}: player {nws['player']!r} is not 'x' or 'o'")
        if nws["player"] in players:
            raise CertificateError(f"{where}: a second set for player {nws['player']!r}")
        players.append(nws["player"])
        if not isinstance(nws["hash"], str):
            raise CertificateError(f"{where}: hash must be text")
        if not is_count(nws["entries"]):
            raise CertificateError(f"{where}: entries {nws['entries']!r} is not a count")
        if not isinstance(nws["shards"], list) or not nws["shards"]:
            raise CertificateError(f"{where}: shards must be a non-empty list")
        check_shard_entries(nws["shards"], lambda i, w=where: f"{w}.shards[{i}]", seen_files)
    if index["value"] != value_of(players):
        raise CertificateError(
            f"{path}: value {index['value']!r}, but the sets say {value_of(players)!r}"
        )
    return index


def parse_nonwin_entry(line: str, where: str) -> NonWinEntry:
    """One JSON line to a :class:`NonWinEntry`; anything else is a :class:`CertificateError`."""
    obj = parse_json_line(line, where)
    require_fields(obj, ENTRY_FIELDS, where, missing_is="malformed line, missing")
    position, action = obj["position"], obj["action"]
    if not isinstance(position, str) or not (action is None or isinstance(action, str)):
        raise CertificateError(
            f"{where}: malformed line, position must be text and action text or null"
        )
    return NonWinEntry(position, action)


def read_nonwin_shard(path: str | os.PathLike[str]) -> list[NonWinEntry]:
    """Every entry of one format-2 shard file (no hash check)."""
    path = Path(path)
    data = read_shard_file(path)
    return [
        parse_nonwin_entry(line, f"{path.name} line {n}")
        for n, line in shard_lines(data, None, path.name)
    ]
