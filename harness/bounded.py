"""Reading hostile input within bounds: quoting, JSON nesting, line length, file kinds, gzip.

Every reader of the harness takes its input through these helpers, so a 1 MB line, a JSON
bomb of nested brackets, a gzip bomb, a FIFO or a symlink to ``/dev/zero`` is refused in one
line instead of exhausting memory, recursion or patience.

>>> clip("x" * 100)[-23:]
"xxxx'… (100 characters)"
>>> one_line("two\\nlines")
'two lines'
>>> loads_json('{"rank": 3}')
{'rank': 3}
>>> loads_json("[" * 200 + "]" * 200)
Traceback (most recent call last):
...
harness.bounded.TooDeepError: JSON nested deeper than 64 levels
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import re
import stat
from collections.abc import Iterator
from typing import IO, BinaryIO

QUOTE_LIMIT = 80  # characters of an input an error message quotes at most
MAX_DEPTH = 64  # JSON nesting: our formats need 2 levels; C json recurses per level
MAX_DIGITS = 30  # digits of a JSON integer: nothing we read needs more
MAX_LINE = 1 << 16  # bytes of one JSON request line (a Pop request is ~200)
CHUNK = 1 << 16
MAX_DOCUMENT = 64 << 20  # bytes of one YAML or JSON document read whole (a manifest: ~10 KB)


def clip(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr`` of ``value`` showing at most ``limit`` characters of it, and the full length
    when it was cut.

    >>> clip("pop1-4x4"), clip(12)
    ("'pop1-4x4'", '12')
    """
    if isinstance(value, str | bytes) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= limit + 2 else text[:limit] + "…"


def one_line(text: str, limit: int = 2000) -> str:
    """``text`` on one line (newlines become spaces) and at most ``limit`` characters."""
    text = " ".join(text.splitlines())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- JSON ---------------------------------------------------------------------------------


class TooDeepError(ValueError):
    """JSON nested deeper than the reader allows."""


class TooLongError(ValueError):
    """A file or stream longer than the reader allows."""


class HugeNumber:
    """Stands in for a JSON integer of more than :data:`MAX_DIGITS` digits, so the reader's
    field check rejects it by name instead of Python's int-conversion limit doing it blindly.

    >>> loads_json('{"rank": ' + "9" * 5000 + "}")
    {'rank': <a 5,000-digit number>}
    """

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"<a {self.digits:,}-digit number>"


def _parse_int(text: str) -> int | HugeNumber:
    digits = len(text.lstrip("-"))
    return int(text) if digits <= MAX_DIGITS else HugeNumber(digits)


# A string's quotes and escapes, and brackets: one linear pass over these tokens finds the
# nesting depth. (A regular expression for whole strings backtracks quadratically on an
# unterminated string of escaped quotes.)
_TOKEN = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting of a JSON text (brackets inside strings do not count), in
    one pass over its quotes, escapes and brackets.

    >>> nesting_depth('{"a": [1, "[[["]}')
    2
    >>> nesting_depth('[["\\\\"], "\\"]"]')
    2
    """
    depth = deepest = 0
    in_string = False
    for m in _TOKEN.finditer(text):
        token = m.group()
        if token == '"':
            in_string = not in_string
        elif in_string or len(token) == 2:
            continue  # a bracket inside a string, or an escaped character
        elif token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def loads_json(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> object:
    """``json.loads`` that refuses nesting deeper than ``max_depth`` (:class:`TooDeepError`)
    before parsing, and reads an integer of more than :data:`MAX_DIGITS` digits as a
    :class:`HugeNumber`. Malformed text raises ``json.JSONDecodeError`` as usual."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    check_depth(text, max_depth, "JSON")
    return json.loads(text, parse_int=_parse_int)


def check_depth(text: str, max_depth: int = MAX_DEPTH, what: str = "JSON") -> None:
    """:class:`TooDeepError` if the brackets of ``text`` nest deeper than ``max_depth`` (also
    a guard before a YAML parser, which recurses, and slowly, on flow-style nesting)."""
    # At most one bracket per level: a text with few brackets needs no scan.
    if text.count("[") + text.count("{") > max_depth and nesting_depth(text) > max_depth:
        raise TooDeepError(f"{what} nested deeper than {max_depth} levels")


def load_yaml(text: str, *, max_depth: int = MAX_DEPTH, what: str = "YAML") -> object:
    """``yaml.safe_load`` that refuses nesting deeper than ``max_depth`` levels of lists and
    mappings (as JSON counts them), in flow style (``[[[…``, by :func:`check_depth` before
    parsing) or in block style (indented mappings, counted as the parser composes them),
    with :class:`TooDeepError` naming ``what``: the parser's recursion never meets Python's
    limit. Malformed text raises ``yaml.YAMLError``.

    >>> load_yaml("kind: slurm\\njobs: 4\\n")
    {'kind': 'slurm', 'jobs': 4}
    >>> load_yaml("a:\\n b:\\n  c: 1\\n", max_depth=2, what="--cluster-config x.yaml")
    Traceback (most recent call last):
    ...
    harness.bounded.TooDeepError: --cluster-config x.yaml nested deeper than 2 levels
    """
    import yaml

    check_depth(text, max_depth, what)

    class DepthLimitedLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
            if not self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
                return super().compose_node(parent, index)  # a scalar or an alias: no level
            self.depth += 1
            try:
                if self.depth > max_depth:
                    raise TooDeepError(f"{what} nested deeper than {max_depth} levels")
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    loader = DepthLimitedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def bounded_lines(stream: IO[bytes], max_bytes: int = MAX_LINE) -> Iterator[str]:
    """The lines of a binary stream as text, each read with at most ``max_bytes`` in memory.

    A longer line is yielded as its first ``max_bytes + 1`` characters (the rest is read
    and dropped), so a reader can refuse it by its length; bytes that are not UTF-8 become
    U+FFFD. A stream that is not binary (``io.StringIO`` in tests) is read the same way.
    """
    while True:
        line = stream.readline(max_bytes + 1)
        if not line:
            return
        ends = line.endswith(b"\n" if isinstance(line, bytes) else "\n")
        if not ends and len(line) > max_bytes:
            while True:  # drop the rest of an over-long line
                rest = stream.readline(CHUNK)
                if not rest or rest.endswith(b"\n" if isinstance(rest, bytes) else "\n"):
                    break
        yield line.decode("utf-8", "replace") if isinstance(line, bytes) else line


# --- files --------------------------------------------------------------------------------


class UnsafeFileError(OSError):
    """A path that is not a plain regular file (a symlink, FIFO, device, socket, folder)."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` for reading only if it is a regular file, without following a symlink
    (``O_NOFOLLOW``) and without blocking on a FIFO (``O_NONBLOCK``); the check is made on the
    opened descriptor (``fstat``), so nothing can be swapped in between."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.EMLINK and os.path.islink(path)):
            raise UnsafeFileError(
                errno.ELOOP, "is a symbolic link; not followed (give the file itself)", str(path)
            ) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise UnsafeFileError(errno.EINVAL, f"is {kind}, not a regular file", str(path))
        if flags & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], max_bytes: int, what: str = "file") -> bytes:
    """The bytes of a regular file (see :func:`open_regular`) of at most ``max_bytes``."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise TooLongError(
                f"{path}: {size:,} bytes, more than the {max_bytes:,} a {what} may have"
            )
        # Read what fstat says is there (a read of max_bytes would reserve all of it first);
        # one byte more shows a file that grew meanwhile.
        data = fh.read(size + 1)
    if len(data) > max_bytes:
        raise TooLongError(f"{path}: more than the {max_bytes:,} bytes a {what} may have")
    return data


def read_text(path: str | os.PathLike[str], max_bytes: int, what: str = "file") -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` (see :func:`read_regular`);
    text that is not UTF-8 is a ``ValueError`` naming the file and the byte."""
    data = read_regular(path, max_bytes, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: the {what} is not UTF-8 text (byte {exc.start:,})") from None


def read_yaml(path: str | os.PathLike[str], max_bytes: int = MAX_DOCUMENT, what: str = "file"):
    """The YAML document of a regular file (:func:`read_text`, then :func:`load_yaml` with
    the path named in a nesting error). Raises ``OSError``, ``ValueError`` or
    ``yaml.YAMLError``, each naming or placed by the caller with the path."""
    return load_yaml(read_text(path, max_bytes, what), what=f"{path}")


def reason(exc: BaseException, path: str | os.PathLike[str]) -> str:
    """What a reader's error says about ``path``, without the path it starts with, for a
    message that names the path once itself.

    >>> reason(UnsafeFileError(22, "is a FIFO, not a regular file", "cfg"), "cfg")
    'is a FIFO, not a regular file'
    >>> reason(TooLongError("cfg: 9 bytes, more than the 8 a config may have"), "cfg")
    '9 bytes, more than the 8 a config may have'
    """
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc).removeprefix(f"{os.fspath(path)}: ")


def gunzip_lines(
    fh: BinaryIO, *, max_bytes: int, max_line: int, where: str = ""
) -> Iterator[bytes]:
    """The lines of a gzip stream, decompressed as they are read, at most ``max_bytes`` in
    all (else :class:`TooLongError`). A line longer than ``max_line`` is yielded as its first
    ``max_line + 1`` bytes (plus its newline), the rest dropped unread into memory, so the
    reader can refuse it by its length and go on. A truncated or corrupt stream raises
    ``gzip.BadGzipFile``, ``EOFError`` or ``zlib.error`` as ``gzip`` does."""
    total = 0

    def count(part: bytes) -> None:
        nonlocal total
        total += len(part)
        if total > max_bytes:
            raise TooLongError(f"{where}decompresses to more than {max_bytes:,} bytes")

    with gzip.GzipFile(fileobj=fh, mode="rb") as gz:
        while line := gz.readline(max_line + 1):
            count(line)
            if len(line) > max_line and not line.endswith(b"\n"):
                while rest := gz.readline(CHUNK):
                    count(rest)
                    if rest.endswith(b"\n"):
                        line += b"\n"
                        break
            yield line
