"""Certificate format 1: gzip'd JSON-lines shards and ``index.yaml`` (docs/certificates.md).

A certificate is a directory::

    index.yaml
    shard-0000-p07.jsonl.gz     {"position": TEXT, "action": TEXT, "rank": N} per line
    shard-0001-p09.jsonl.gz
    ...

``index.yaml`` holds ``format: 1``, ``ruleset``, ``winner``, ``root``, ``entries``,
``shards`` (each ``{file, blake3, entries, placement_rank}``) and ``hash``: the blake3 of the
shard digests in list order, each followed by a newline.

Writing is deterministic (gzip with mtime 0 and no file name, YAML in a fixed key order) and
atomic: everything goes to a temporary sibling directory that is renamed into place.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "cert"
>>> shard = Shard(7, [Entry("..../..../..../.... 8 8 x", "b2", 7)])
>>> idx = write_certificate(out, "pop1-4x4-c8-torus-continue-binempty-king-nozero-nojump",
...                         "x", "..../..../..../.... 8 8 x", [shard])
>>> idx["entries"], idx["shards"][0]["file"]
(1, 'shard-0000-p07.jsonl.gz')
>>> [e.action for e in read_shard(out / idx["shards"][0]["file"])]
['b2']
"""

from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import blake3
import yaml

from harness.atomic import staging_dir
from harness.bounded import (
    TooDeepError,
    TooLongError,
    UnsafeFileError,
    clip,
    gunzip_lines,
    load_yaml,
    loads_json,
    read_regular,
)

FORMAT = 1
INDEX = "index.yaml"
INDEX_FIELDS = ("format", "ruleset", "winner", "root", "entries", "shards", "hash")
SHARD_FIELDS = ("file", "blake3", "entries", "placement_rank")
ENTRY_FIELDS = ("position", "action", "rank")

# What a reader takes in at most (a certificate line is about 100 bytes; the 6x6 research
# certificate's largest shard is 12 KB on disk).
MAX_LINE_BYTES = 1024
MAX_NAME = 255  # characters of a shard's file name (a file system's limit)
MAX_SHARD_FILE = 64 << 20  # bytes of one shard file on disk
MAX_SHARD_TEXT = 64 << 20  # decompressed bytes of one shard, whatever its index claims
MAX_INDEX_BYTES = 16 << 20


class CertificateError(ValueError):
    """A certificate that cannot be read or is not well-formed; the message is one line."""


class Entry(NamedTuple):
    """One certificate line: the winner to move in ``position`` plays ``action``."""

    position: str
    action: str
    rank: int

    def line(self) -> str:
        return json.dumps({"position": self.position, "action": self.action, "rank": self.rank})


@dataclass
class Shard:
    placement_rank: int
    entries: list[Entry]


def digest(data: bytes) -> str:
    """The hex blake3 digest of ``data``."""
    return blake3.blake3(data).hexdigest()


def certificate_hash(shard_digests: list[str]) -> str:
    """The certificate hash: blake3 of the shard digests in order, each plus a newline."""
    return digest("".join(d + "\n" for d in shard_digests).encode("ascii"))


def shard_bytes(entries: list[Entry]) -> bytes:
    """The gzip'd JSON lines of a shard, byte-for-byte reproducible (mtime 0, no name)."""
    raw = "".join(e.line() + "\n" for e in entries).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    return buf.getvalue()


def shard_name(index: int, placement_rank: int) -> str:
    return f"shard-{index:04d}-p{placement_rank:02d}.jsonl.gz"


def write_certificate(
    out: str | os.PathLike[str],
    ruleset: str,
    winner: str,
    root: str,
    shards: list[Shard],
    *,
    force: bool = False,
) -> dict[str, Any]:
    """Write a certificate directory atomically and return its index.

    ``out`` must not exist or be empty, unless ``force``: then a finished certificate
    replaces it only once it is completely written (the old one is never half-overwritten).
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise CertificateError(f"{out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise CertificateError(f"{out}: directory is not empty (use --force to replace it)")
    with staging_dir(out) as tmp:
        listed = []
        for i, shard in enumerate(shards):
            data = shard_bytes(shard.entries)
            name = shard_name(i, shard.placement_rank)
            (tmp / name).write_bytes(data)
            listed.append(
                {
                    "file": name,
                    "blake3": digest(data),
                    "entries": len(shard.entries),
                    "placement_rank": shard.placement_rank,
                }
            )
        index = {
            "format": FORMAT,
            "ruleset": ruleset,
            "winner": winner,
            "root": root,
            "entries": sum(len(s.entries) for s in shards),
            "shards": listed,
            "hash": certificate_hash([s["blake3"] for s in listed]),
        }
        (tmp / INDEX).write_text(dump_index(index), encoding="utf-8")
    return index


def dump_index(index: dict[str, Any]) -> str:
    """``index.yaml`` text, keys in the format's order."""
    return yaml.safe_dump(index, sort_keys=False, default_flow_style=False, width=200)


def load_index_yaml(path: Path) -> object:
    """The parsed YAML of an ``index.yaml`` of any format, read as a regular file of at most
    :data:`MAX_INDEX_BYTES` (no link followed); every failure is a :class:`CertificateError`."""
    try:
        text = read_regular(path, MAX_INDEX_BYTES, INDEX).decode("utf-8")
    except FileNotFoundError:
        raise CertificateError(f"{path}: no index.yaml (not a certificate directory?)") from None
    except UnsafeFileError as exc:
        raise CertificateError(str(exc)) from None
    except (OSError, UnicodeDecodeError, TooLongError) as exc:
        raise CertificateError(f"{path}: cannot read ({exc})") from exc
    try:
        return load_yaml(text, what=INDEX)
    except TooDeepError as exc:
        raise CertificateError(f"{path}: not a certificate index ({exc})") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}" if where is not None else ""
        raise CertificateError(f"{path}: not valid YAML{at}") from exc


def read_index(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate the structure of ``index.yaml`` (not the hashes: see the checker)."""
    path = Path(directory) / INDEX
    index = load_index_yaml(path)
    if not isinstance(index, dict):
        raise CertificateError(f"{path}: expected a mapping of {', '.join(INDEX_FIELDS)}")
    require_fields(index, INDEX_FIELDS, str(path))
    if index["format"] != FORMAT or isinstance(index["format"], bool):
        raise CertificateError(f"{path}: format {index['format']!r}, this checker reads {FORMAT}")
    for key in ("ruleset", "winner", "root", "hash"):
        if not isinstance(index[key], str):
            raise CertificateError(f"{path}: field {key!r} must be text")
    if index["winner"] not in ("x", "o"):
        raise CertificateError(f"{path}: winner {index['winner']!r} is not 'x' or 'o'")
    if not is_count(index["entries"]):
        raise CertificateError(f"{path}: entries {index['entries']!r} is not a count")
    if not isinstance(index["shards"], list) or not index["shards"]:
        raise CertificateError(f"{path}: shards must be a non-empty list")
    check_shard_entries(index["shards"], lambda i: f"{path}: shards[{i}]", set())
    return index


def is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read_shard_file(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a shard file: a regular file (a symlink, FIFO or device is refused, and
    nothing is followed) of at most :data:`MAX_SHARD_FILE` bytes. A missing file raises
    ``FileNotFoundError``, any other refusal a one-line :class:`CertificateError`."""
    try:
        return read_regular(path, MAX_SHARD_FILE, "shard file")
    except FileNotFoundError:
        raise
    except (UnsafeFileError, TooLongError) as exc:
        raise CertificateError(str(exc)) from None
    except OSError as exc:
        raise CertificateError(f"{path}: cannot read ({exc.strerror or exc})") from None


def shard_limit(entries: int | None) -> int:
    """The most bytes a shard of ``entries`` lines may decompress to (hard cap included)."""
    if entries is None:
        return MAX_SHARD_TEXT
    return min(MAX_SHARD_TEXT, (entries + 1) * MAX_LINE_BYTES)


def shard_lines(data: bytes, entries: int | None, where: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of a gzip'd shard, decompressed as the lines are taken: never more
    than :func:`shard_limit` of ``entries`` (the count its index lists) bytes in all, nor
    :data:`MAX_LINE_BYTES` per line, so a gzip bomb is refused after a few kilobytes. Invalid
    UTF-8, a last line without newline and a corrupt or truncated stream are a
    :class:`CertificateError`."""
    limit = shard_limit(entries)
    number = 0
    try:
        for raw in gunzip_lines(io.BytesIO(data), max_bytes=limit, max_line=MAX_LINE_BYTES):
            number += 1
            if not raw.endswith(b"\n"):
                raise CertificateError(f"{where}: last line has no newline (truncated?)")
            if len(raw) > MAX_LINE_BYTES + 1:  # cut short by the reader: parse_entry refuses it
                yield number, raw[:-1].decode("utf-8", "replace")
                continue
            try:
                text = raw[:-1].decode("utf-8")
            except UnicodeDecodeError:
                raise CertificateError(f"{where} line {number}: not UTF-8 text") from None
            yield number, text
    except TooLongError as exc:
        listed = "" if entries is None else f" for the {entries:,} entries index.yaml lists"
        raise CertificateError(f"{where}: {exc}{listed}; a gzip bomb?") from None
    except (EOFError, OSError, zlib.error) as exc:
        raise CertificateError(f"{where}: corrupt or truncated gzip ({exc})") from exc


def require_fields(
    obj: dict, fields: tuple[str, ...], where: str, *, missing_is: str = "missing"
) -> None:
    """Exactly ``fields``: an unknown one is named first, then any that is missing."""
    unknown = [k for k in obj if k not in fields]
    if unknown:
        raise CertificateError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}")
    missing = [k for k in fields if k not in obj]
    if missing:
        raise CertificateError(f"{where}: {missing_is} field(s) {', '.join(missing)}")


def parse_json_line(line: str, where: str) -> dict:
    """One shard line to a JSON object, within the line and nesting bounds; anything else is
    a :class:`CertificateError` naming ``where``."""
    if len(line) > MAX_LINE_BYTES:
        raise CertificateError(f"{where}: malformed line, longer than {MAX_LINE_BYTES:,} bytes")
    try:
        obj = loads_json(line)
    except json.JSONDecodeError as exc:
        raise CertificateError(f"{where}: malformed line, not JSON ({exc.msg})") from exc
    except ValueError as exc:  # nested too deeply
        raise CertificateError(f"{where}: malformed line, {exc}") from None
    if not isinstance(obj, dict):
        raise CertificateError(f"{where}: malformed line, expected a JSON object")
    return obj


def parse_entry(line: str, where: str) -> Entry:
    """One JSON line to an :class:`Entry`; anything else is a :class:`CertificateError`."""
    obj = parse_json_line(line, where)
    require_fields(obj, ENTRY_FIELDS, where, missing_is="malformed line, missing")
    position, action, rank = obj["position"], obj["action"], obj["rank"]
    if not isinstance(position, str) or not isinstance(action, str):
        raise CertificateError(f"{where}: malformed line, position and action must be text")
    if not is_count(rank):
        raise CertificateError(f"{where}: malformed line, rank {clip(rank)} is not a count")
    return Entry(position, action, rank)


def read_shard(path: str | os.PathLike[str], entries: int | None = None) -> list[Entry]:
    """Every entry of one shard file (no hash check), within the bounds of :func:`shard_lines`."""
    path = Path(path)
    data = read_shard_file(path)
    return [
        parse_entry(line, f"{path.name} line {n}")
        for n, line in shard_lines(data, entries, path.name)
    ]


def check_shard_entries(shards: list, where_of, seen: set) -> None:
    """Each entry of an index's shard list: a mapping of ``SHARD_FIELDS`` whose file is a
    plain name listed once (``seen`` collects the names), with text blake3 and counts.
    ``where_of(i)`` names the i-th entry in an error. Shared by win and non-win indexes."""
    for i, shard in enumerate(shards):
        where = where_of(i)
        if not isinstance(shard, dict):
            raise CertificateError(f"{where}: expected a mapping of {', '.join(SHARD_FIELDS)}")
        require_fields(shard, SHARD_FIELDS, where)
        name = shard["file"]
        if (
            not isinstance(name, str)
            or not name
            or name in (".", "..", INDEX)
            or "/" in name
            or "\\" in name
            or name.startswith(".")
            or not name.isprintable()  # a NUL or another control character
            or len(name) > MAX_NAME
        ):
            raise CertificateError(f"{where}: file {clip(name)} is not a plain file name")
        if name in seen:
            raise CertificateError(f"{where}: file {clip(name)} listed twice")
        seen.add(name)
        if not isinstance(shard["blake3"], str):
            raise CertificateError(f"{where}: blake3 must be text")
        for key in ("entries", "placement_rank"):
            if not is_count(shard[key]):
                raise CertificateError(f"{where}: {key} {shard[key]!r} is not a count")
