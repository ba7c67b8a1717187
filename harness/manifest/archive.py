"""Reading untrusted zip archives safely, and writing deterministic ones.

An archive handed to ``audit`` may be hostile. :class:`SafeArchive` checks the whole central
directory before a single byte is extracted, and refuses (with :class:`ArchiveError`, one
line naming the member) archives with:

- member names that are absolute (``/x``, ``C:x``), climb out (``..``), hold backslashes,
  NUL bytes, empty or ``.`` components, or are absurdly long or deep;
- symlinks, devices, FIFOs or anything else that is not a plain file or folder;
- the same name twice (also when they differ only in letter case, or when one member's name
  is a folder of another file);
- encryption, or compression other than stored/deflate;
- declared sizes over the limits, a compression ratio typical of zip bombs, too many
  members, or members whose data overlap (the "overlapping files" bomb).

Reading a member then streams it with the limits enforced on the bytes actually produced,
not on what the header claims, and the CRC is checked. Corrupt data raises
:class:`IntegrityError`. Extraction writes only below a fresh folder, with ``O_EXCL`` and
``O_NOFOLLOW``, so even a race cannot redirect a write.

:func:`write_deterministic` makes archives whose bytes depend only on their contents:
entries sorted by name, every timestamp 1980-01-01 00:00, mode 0644, no extra fields, no
owner, host or absolute path anywhere.

>>> import io
>>> buf = io.BytesIO()
>>> write_deterministic(buf, {"b.txt": b"2", "a/x.txt": b"1"})
>>> with SafeArchive(io.BytesIO(buf.getvalue())) as ar:
...     ar.names, ar.read("a/x.txt")
(['a/x.txt', 'b.txt'], b'1')
"""

from __future__ import annotations

import io
import os
import re
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from harness.bounded import UnsafeFileError, open_regular

MIB = 1 << 20
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o644
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_MAGIC = b"PK\x03\x04"


class ArchiveError(ValueError):
    """The archive cannot be used at all: not a zip, or hostile in its structure."""


class IntegrityError(ValueError):
    """A member's data is corrupt (CRC mismatch, broken deflate stream, wrong size)."""


@dataclass(frozen=True)
class Limits:
    """What an archive may hold. Our own archives are far below every limit."""

    max_members: int = 20_000
    max_member_bytes: int = 1024 * MIB
    max_total_bytes: int = 4096 * MIB
    # Deflate reaches about 1030:1 at best; text and JSON lines compress 5-20:1. A ratio
    # above this on a member of more than ``ratio_floor`` bytes is treated as a bomb.
    max_ratio: float = 200.0
    ratio_floor: int = 1 * MIB
    max_name_chars: int = 400
    max_depth: int = 32


_DRIVE_RE = re.compile(r"^[A-Za-z]:")


def check_member_name(name: str) -> None:
    """Raise ArchiveError unless ``name`` is a plain relative '/'-separated path.

    >>> check_member_name("a/b.txt")
    >>> try:
    ...     check_member_name("../etc/passwd")
    ... except ArchiveError as exc:
    ...     print(exc)
    member '../etc/passwd': path climbs out with '..'
    """
    where = f"member {name!r}"
    if "\x00" in name:
        raise ArchiveError(f"{where}: NUL byte in the name")
    if "\\" in name:
        raise ArchiveError(f"{where}: backslash in the name (Windows path?)")
    if name.startswith("/") or _DRIVE_RE.match(name):
        raise ArchiveError(f"{where}: absolute path")
    parts = name.rstrip("/").split("/")
    if any(p == ".." for p in parts):
        raise ArchiveError(f"{where}: path climbs out with '..'")
    if any(p in ("", ".") for p in parts):
        raise ArchiveError(f"{where}: empty or '.' path component")
    if any(ord(c) < 32 for c in name):
        raise ArchiveError(f"{where}: control character in the name")


class SafeArchive:
    """A zip archive opened for reading with every structural check done up front.

    ``source`` is a path or a binary file object. ``names`` lists the files (not folders),
    sorted. Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, source: Path | str | BinaryIO, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._label = str(source) if isinstance(source, str | Path) else "archive"
        self._file: BinaryIO | None = None
        try:
            if isinstance(source, str | Path):
                # A regular file only: a link is not followed, a FIFO not waited on.
                self._file = source = open_regular(source)
            self._zip = zipfile.ZipFile(source)
        except FileNotFoundError:
            raise ArchiveError(f"{self._label}: no such file") from None
        except UnsafeFileError as exc:
            raise ArchiveError(f"{self._label}: {exc.strerror}") from None
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
            if self._file is not None:
                self._file.close()
            raise ArchiveError(f"{self._label}: not a readable zip archive ({exc})") from None
        try:
            self._infos = self._check()
        except BaseException:
            self.close()
            raise
        self.names = sorted(self._infos)

    # -- checks ---------------------------------------------------------------------------

    def _check(self) -> dict[str, zipfile.ZipInfo]:
        lim = self.limits
        infos = self._zip.infolist()
        if len(infos) > lim.max_members:
            raise ArchiveError(f"{self._label}: {len(infos)} members, over {lim.max_members}")
        files: dict[str, zipfile.ZipInfo] = {}
        seen: dict[str, str] = {}
        dirs: set[str] = set()
        total = 0
        for info in infos:
            name = info.orig_filename
            check_member_name(name)
            where = f"member {name!r}"
            if len(name) > lim.max_name_chars or name.count("/") > lim.max_depth:
                raise ArchiveError(f"{where}: name too long or too deep")
            folded = name.rstrip("/").casefold()
            if folded in seen:
                same = "" if seen[folded] == name else f" (as {seen[folded]!r}, up to case)"
                raise ArchiveError(f"{where}: duplicate name{same}")
            seen[folded] = name
            kind = stat.S_IFMT(info.external_attr >> 16) if info.create_system == 3 else 0
            if kind == stat.S_IFLNK:
                raise ArchiveError(f"{where}: symbolic link (refused)")
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise ArchiveError(f"{where}: not a regular file (type {oct(kind)})")
            if info.flag_bits & 0x1:
                raise ArchiveError(f"{where}: encrypted")
            if info.is_dir() or kind == stat.S_IFDIR:
                if info.file_size:
                    raise ArchiveError(f"{where}: a folder entry with data")
                dirs.add(name.rstrip("/").casefold())
                continue
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise ArchiveError(f"{where}: unsupported compression method {info.compress_type}")
            if info.file_size > lim.max_member_bytes:
                raise ArchiveError(
                    f"{where}: {info.file_size} bytes uncompressed, over {lim.max_member_bytes}"
                )
            if info.file_size > lim.ratio_floor and info.file_size > lim.max_ratio * max(
                info.compress_size, 1
            ):
                ratio = info.file_size / max(info.compress_size, 1)
                raise ArchiveError(
                    f"{where}: compression ratio {ratio:.0f}:1 (over {lim.max_ratio:.0f}:1, "
                    "a zip bomb?)"
                )
            total += info.file_size
            if total > lim.max_total_bytes:
                raise ArchiveError(
                    f"{self._label}: more than {lim.max_total_bytes} bytes uncompressed"
                )
            files[name] = info
        folded_files = {n.casefold() for n in files}
        for name in files:
            parts = name.casefold().split("/")
            for i in range(1, len(parts)):
                prefix = "/".join(parts[:i])
                if prefix in folded_files:
                    raise ArchiveError(f"member {name!r}: its folder {prefix!r} is also a file")
        self._check_overlaps(infos)
        return files

    def _check_overlaps(self, infos: list[zipfile.ZipInfo]) -> None:
        """Every member's local header and data must lie apart, before the central directory."""
        fp = self._zip.fp
        assert fp is not None
        spans = []
        for info in infos:
            fp.seek(info.header_offset)
            head = fp.read(_LOCAL_HEADER.size)
            if len(head) != _LOCAL_HEADER.size or head[:4] != _LOCAL_MAGIC:
                raise ArchiveError(f"member {info.orig_filename!r}: no local header at its offset")
            fields = _LOCAL_HEADER.unpack(head)
            name_len, extra_len = fields[-2], fields[-1]
            end = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
            end += info.compress_size
            spans.append((info.header_offset, end, info.orig_filename))
        spans.sort()
        for (_s1, e1, n1), (s2, _e2, n2) in zip(spans, spans[1:], strict=False):
            if s2 < e1:
                raise ArchiveError(f"members {n1!r} and {n2!r} overlap (a zip bomb?)")
        start_dir = getattr(self._zip, "start_dir", None)
        if spans and start_dir is not None and spans[-1][1] > start_dir:
            raise ArchiveError(f"member {spans[-1][2]!r} runs into the central directory")

    # -- reading --------------------------------------------------------------------------

    def size(self, name: str) -> int:
        return self._infos[name].file_size

    def read(self, name: str, max_bytes: int | None = None) -> bytes:
        """A member's bytes; IntegrityError if it is corrupt, KeyError if there is none."""
        out = io.BytesIO()
        self._copy(name, out, max_bytes)
        return out.getvalue()

    def _copy(self, name: str, out: BinaryIO, max_bytes: int | None = None) -> None:
        info = self._infos[name]
        cap = min(info.file_size, self.limits.max_member_bytes)
        if max_bytes is not None:
            cap = min(cap, max_bytes)
            if info.file_size > max_bytes:
                raise ArchiveError(f"member {name!r}: {info.file_size} bytes, over {max_bytes}")
        written = 0
        try:
            with self._zip.open(info) as fh:
                while chunk := fh.read(1 << 16):
                    written += len(chunk)
                    if written > cap:
                        raise IntegrityError(f"member {name!r}: more data than its header says")
                    out.write(chunk)
        except zipfile.BadZipFile as exc:
            raise IntegrityError(f"member {name!r}: corrupt ({exc})") from None
        except (zlib.error, EOFError) as exc:
            raise IntegrityError(f"member {name!r}: corrupt compressed data ({exc})") from None
        if written != info.file_size:
            raise IntegrityError(
                f"member {name!r}: {written} bytes, its header says {info.file_size}"
            )

    def extract_all(self, dest: Path, names: Iterable[str] | None = None) -> None:
        """Write members (default: all) below ``dest``, which must not exist yet.

        Folders are created here, by us, so none of them can be a symlink planted by the
        archive; files are opened with O_EXCL|O_NOFOLLOW all the same.
        """
        dest = Path(dest)
        dest.mkdir(parents=False, exist_ok=False)
        root = os.path.realpath(dest)
        for name in sorted(self.names if names is None else names):
            target = os.path.realpath(os.path.join(root, *name.split("/")))
            if os.path.commonpath([root, target]) != root:  # cannot happen after the checks
                raise ArchiveError(f"member {name!r}: would be written outside {dest}")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(target, flags, 0o644)
            with os.fdopen(fd, "wb") as fh:
                self._copy(name, fh)

    def close(self) -> None:
        self._zip.close()
        if self._file is not None:
            self._file.close()

    def __enter__(self) -> SafeArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_deterministic(target: Path | BinaryIO, files: Mapping[str, bytes]) -> None:
    """A zip of ``files`` (name -> bytes) whose bytes depend only on ``files``.

    Names are checked like untrusted ones; entries are sorted; deflate level 9; every entry
    gets the same timestamp, mode and "made by Unix" marker, and no extra fields.
    """
    for name in files:
        check_member_name(name)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = (stat.S_IFREG | FILE_MODE) << 16
            zf.writestr(info, files[name], compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
