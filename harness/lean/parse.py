"""Read what Lean and Lake print, and the few facts the runner needs from Lean sources.

Lean reports through messages. Run directly (``lean File.lean``) a message starts with
``File.lean:12:0: error: …``; through Lake (``lake build``), which runs ``lean --json`` and
re-renders each message, it starts with ``error: File.lean:12:0: …``. Messages can span
several lines (a wrapped ``#print axioms`` list, a goal, a ``#guard_msgs`` diff); a message
runs until the next line that starts a message or a Lake status line (``✔ [3/7] Built X``).
Colours (ANSI escapes) are removed first, whatever asked for them.

What is pulled out:

* ``#print axioms`` results: ``'Pop.win' depends on axioms: [propext, Quot.sound]`` (the list
  may wrap over lines) and ``'Pop.win' does not depend on any axioms``. Names may hold dots,
  primes (``foo'``) and ``«guillemets»``.
* ``GUARD_HITS name=count,…`` lines, printed by the corpus module.
* errors, warnings and infos with their positions.
* signs that a child ran out of memory (only from text that is not a positioned Lean message,
  so a theorem named ``out_of_memory`` cannot trip it).

>>> out = parse_output("info: G/S1.lean:9:0: 'Pop.S1.ok' depends on axioms: [propext]")
>>> out.axioms
{'Pop.S1.ok': ('propext',)}
>>> parse_guard_hits_line("GUARD_HITS lines=3,pop=12")
{'lines': 3, 'pop': 12}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The three axioms of Lean's standard library, in the order a rendered module pins them;
# anything else (``sorryAx``, a user ``axiom``, ``Lean.ofReduceBool`` from ``native_decide``)
# means the kernel did not check the whole proof.
ALLOWED_AXIOMS = ("propext", "Classical.choice", "Quot.sound")
SORRY_AXIOM = "sorryAx"


class LeanOutputError(ValueError):
    """Output that claims to be a result but cannot be read (e.g. a garbled GUARD_HITS line)."""


# CSI sequences (colours, cursor moves such as Lake's ``\x1b[2K\r``) and OSC sequences.
_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")

_SEVERITIES = {"error": "error", "warning": "warning", "info": "info", "information": "info"}

# ``error: path:12:4: text`` (Lake) — the position is optional (``error: build failed``).
_FILE = r"(?P<file>[^:\n]*?\.lean|<[^>\n]*>)"
_POS = _FILE + r":(?P<line>\d+):(?P<col>\d+)(?:-\d+:\d+)?: "
_LAKE_MSG_RE = re.compile(r"^(?P<sev>error|warning|info|trace): (?:" + _POS + r")?(?P<text>.*)$")
# ``path:12:4: error: text`` (lean run directly); ``error(kernel)``-style tags tolerated.
_LEAN_MSG_RE = re.compile(
    r"^" + _POS + r"(?P<sev>error|warning|info|information)(?:\([^)]*\))?: ?(?P<text>.*)$"
)
# Lake's per-job status line: ``✖ [12/40] Building Generated.Shard0003 (1.2s)`` (Lake before
# Lean 4.9 printed no icon).
_LAKE_STATUS_RE = re.compile(
    r"^(?:(?P<icon>[✔⚠ℹ✖]) )?\[\d+/\d+\](?: \(Optional\))? (?P<verb>[A-Z][a-z]+) (?P<target>.+?)"
    r"(?: \((?P<time>[0-9.]+m?s)\))?$"
)
_LAKE_TRAILER_RE = re.compile(
    r"^(?:Some required (?:builds|targets) logged failures:|Build completed successfully"
    r"|Nothing to build\.|All targets up-to-date|Build summary:)"
)

# Lean prints a name between single quotes; the name itself may contain quotes (primes), so
# the closing quote is the one followed by the verdict.
_AXIOMS_RE = re.compile(
    r"'(?P<name>(?:«[^»\n]*»|[^\s«])+?)' "
    r"(?:(?P<none>does not depend on any axioms)|depends on axioms:\s*\[(?P<list>[^\]]*)\])"
)
_GUARD_RE = re.compile(r"\bGUARD_HITS\b(?P<body>(?:[ \t]+[^\s\"]*)?)")
_GUARD_ITEM_RE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_.'!?]*)=(?P<count>\d+)$")

# Text that Lean's runtime (or the OS) prints when memory runs out.
#  - ``INTERNAL PANIC: out of memory``: Lean's allocator failing (what an rlimit produces);
#  - ``std::bad_alloc`` / ``Cannot allocate memory``: C++ and GMP allocation failures;
#  - ``exited with code 137``: Lake reporting a child killed by SIGKILL, i.e. the OOM killer.
_OOM_RE = re.compile(
    r"out of memory|std::bad_alloc|Cannot allocate memory|memory exhausted"
    r"|exited with code 137\b",
    re.IGNORECASE,
)
_SORRY_WARNING = "declaration uses 'sorry'"


@dataclass(frozen=True)
class Message:
    """One Lean or Lake message.

    >>> Message("error", "unknown identifier 'x'", "A.lean", 3, 8).where()
    'A.lean:3:8'
    """

    severity: str  # "error" | "warning" | "info"
    text: str
    file: str | None = None
    line: int | None = None
    col: int | None = None

    def where(self) -> str:
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}:{self.col}"

    def to_json(self) -> dict:
        return {
            "severity": self.severity,
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "text": self.text,
        }

    def one_line(self, limit: int = 300) -> str:
        """The message as one line (first lines joined), for reports.

        >>> Message("error", "a\\n  b").one_line()
        'error: a b'
        """
        body = " ".join(part.strip() for part in self.text.splitlines() if part.strip())
        if len(body) > limit:
            body = body[: limit - 1] + "…"
        where = self.where()
        return f"{self.severity}: {where}: {body}" if where else f"{self.severity}: {body}"


@dataclass
class LeanOutput:
    """Everything read from one run's output."""

    messages: list[Message] = field(default_factory=list)
    axioms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    guard_hits: dict[str, int] = field(default_factory=dict)
    # How many GUARD_HITS lines were read (a corpus with no hits still prints one).
    guard_lines: int = 0
    # Results that were printed but cannot be read (garbled GUARD_HITS, axiom lists).
    problems: list[str] = field(default_factory=list)
    # Lines that say memory ran out.
    out_of_memory: list[str] = field(default_factory=list)
    # Lake's per-module verdicts: target -> verb ("Built", "Building", "Replayed", …).
    lake_jobs: dict[str, str] = field(default_factory=dict)
    # Text that belongs to no message (stray stdout/stderr).
    loose: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Message]:
        return [m for m in self.messages if m.severity == "error"]

    @property
    def warnings(self) -> list[Message]:
        return [m for m in self.messages if m.severity == "warning"]

    def uses_sorry(self) -> bool:
        """True when a declaration uses ``sorry`` (the warning, or ``sorryAx`` among axioms)."""
        if any(SORRY_AXIOM in axioms for axioms in self.axioms.values()):
            return True
        return any(_SORRY_WARNING in m.text for m in self.messages)


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences (colours, line resets).

    >>> strip_ansi("\\x1b[1;31merror:\\x1b[m boom")
    'error: boom'
    """
    return _ANSI_RE.sub("", text)


_DIFF_EXPECTED_RE = re.compile(r"^\s*- (?:info|warning|error):")


def _actual_lines(text: str) -> list[str]:
    """Lines of ``text`` without a ``#guard_msgs`` diff's expected side (``- info: …``)."""
    return ["" if _DIFF_EXPECTED_RE.match(ln) else ln for ln in strip_ansi(text).splitlines()]


def _split_axiom_list(body: str) -> tuple[str, ...]:
    # Continuation lines of a wrapped list may carry a diff marker ("+ ") from #guard_msgs.
    lines = body.split("\n")
    flat = " ".join([lines[0]] + [re.sub(r"^\s*[+]?\s*", "", ln) for ln in lines[1:]])
    items = [item.strip() for item in flat.split(",")]
    if any(not item or " " in item for item in items):
        raise LeanOutputError(f"unreadable axiom list [{body.strip()}]")
    return tuple(items)


def parse_axioms(text: str) -> dict[str, tuple[str, ...]]:
    """All ``#print axioms`` results in ``text``: theorem name -> axioms (in printed order).

    Lists wrapped over several lines and ``info:``/position prefixes are fine; lines of a
    ``#guard_msgs`` diff that show the *expected* side (``- info: …``) are skipped, since only
    what Lean actually computed counts. Raises :class:`LeanOutputError` for an unreadable list
    or a theorem printed twice with different lists.

    >>> parse_axioms("'a.b'' depends on axioms: [propext,\\n  Quot.sound]")
    {"a.b'": ('propext', 'Quot.sound')}
    >>> parse_axioms("info: x.lean:1:0: 'c' does not depend on any axioms")
    {'c': ()}
    """
    kept = "\n".join(_actual_lines(text))
    found: dict[str, tuple[str, ...]] = {}
    for match in _AXIOMS_RE.finditer(kept):
        name = match.group("name")
        axioms = () if match.group("none") else _split_axiom_list(match.group("list"))
        if name in found and found[name] != axioms:
            raise LeanOutputError(
                f"theorem {name} printed with two different axiom lists: "
                f"{list(found[name])} and {list(axioms)}"
            )
        found[name] = axioms
    return found


def parse_guard_hits_line(line: str) -> dict[str, int]:
    """Counts from one ``GUARD_HITS a=1,b=2`` line (quotes and prefixes around it allowed).

    >>> parse_guard_hits_line('info: C.lean:4:0: "GUARD_HITS x=1"')
    {'x': 1}
    >>> parse_guard_hits_line("GUARD_HITS")
    {}
    >>> parse_guard_hits_line("GUARD_HITS a=1,a=2")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    LeanOutputError: GUARD_HITS names a twice: GUARD_HITS a=1,a=2
    """
    match = _GUARD_RE.search(line)
    if match is None:
        raise LeanOutputError(f"no GUARD_HITS in {line!r}")
    body = match.group("body").strip()
    hits: dict[str, int] = {}
    if not body:
        return hits
    for item in body.split(","):
        m = _GUARD_ITEM_RE.match(item.strip())
        if m is None:
            raise LeanOutputError(f"unreadable GUARD_HITS entry {item!r}: {line.strip()}")
        name = m.group("name")
        if name in hits:
            raise LeanOutputError(f"GUARD_HITS names {name} twice: {line.strip()}")
        hits[name] = int(m.group("count"))
    return hits


def _header(line: str) -> tuple[str, str | None, int | None, int | None, str] | None:
    m = _LAKE_MSG_RE.match(line)
    if m is None:
        m = _LEAN_MSG_RE.match(line)
    if m is None:
        return None
    sev = m.group("sev")
    sev = _SEVERITIES.get(sev, sev)
    if m.group("file") is None:
        return sev, None, None, None, m.group("text")
    return sev, m.group("file"), int(m.group("line")), int(m.group("col")), m.group("text")


def parse_messages(text: str) -> tuple[list[Message], dict[str, str], list[str]]:
    """Split output into messages, Lake job verdicts and loose lines.

    ``trace:`` entries (the command lines Lake logs for a failed job) are dropped.

    >>> text = "✖ [2/3] Building A (1.2s)\\nerror: A.lean:1:2: bad\\n  more"
    >>> msgs, jobs, loose = parse_messages(text)
    >>> msgs
    [Message(severity='error', text='bad\\n  more', file='A.lean', line=1, col=2)]
    >>> jobs
    {'A': 'Building'}
    """
    messages: list[Message] = []
    jobs: dict[str, str] = {}
    loose: list[str] = []
    current: list | None = None  # [severity, file, line, col, [text lines]]

    def flush() -> None:
        nonlocal current
        if current is not None and current[0] != "trace":
            body = "\n".join(current[4]).rstrip()
            messages.append(Message(current[0], body, current[1], current[2], current[3]))
        current = None

    for raw in strip_ansi(text).replace("\r\n", "\n").split("\n"):
        line = raw.rsplit("\r", 1)[-1]  # a progress line overwritten with \r: keep the last
        status = _LAKE_STATUS_RE.match(line)
        if status:
            flush()
            jobs[status.group("target")] = status.group("verb")
            continue
        if _LAKE_TRAILER_RE.match(line):
            flush()
            continue
        head = _header(line)
        if head is not None:
            flush()
            sev, file, lno, col, body = head
            current = [sev, file, lno, col, [body]]
            continue
        if current is not None:
            current[4].append(line)
        elif line.strip() and not re.match(r"^- \S+$", line):
            # ``- Module`` lines follow Lake's failure trailer; anything else is stray output.
            loose.append(line)
    flush()
    return messages, jobs, loose


def _same_file(printed: str, rel: str) -> bool:
    # Lake prints paths like "././././Generated/S.lean"; lean prints what it was given.
    norm = printed.replace("\\", "/")
    while norm.startswith("./"):
        norm = norm[2:]
    rel = rel.replace("\\", "/")
    return norm == rel or norm.endswith("/" + rel)


def parse_output(text: str, file: str | None = None) -> LeanOutput:
    """Read one run's combined stdout and stderr.

    With ``file`` (a path relative to the project), messages positioned in other files are
    dropped before anything is read from them: a ``lake build`` replays the saved messages of
    up-to-date dependencies, and those belong to the dependencies.

    >>> out = parse_output("A.lean:3:0: warning: declaration uses 'sorry'\\n"
    ...                    "A.lean:5:0: info: 'A.t' depends on axioms: [sorryAx]")
    >>> out.uses_sorry(), out.axioms
    (True, {'A.t': ('sorryAx',)})
    >>> parse_output("info: B.lean:1:0: 'B.t' does not depend on any axioms", file="A.lean").axioms
    {}
    """
    messages, jobs, loose = parse_messages(text)
    if file is not None:
        messages = [m for m in messages if m.file is None or _same_file(m.file, file)]
    result = LeanOutput(messages=messages, lake_jobs=jobs, loose=loose)
    # Results are read from the kept messages' texts and from loose lines (a bare
    # GUARD_HITS printed to stdout by an older Lean).
    texts = [m.text for m in messages] + ["\n".join(loose)]
    for chunk in texts:
        try:
            for name, used in parse_axioms(chunk).items():
                if result.axioms.setdefault(name, used) != used:
                    result.problems.append(
                        f"theorem {name} printed with two different axiom lists: "
                        f"{list(result.axioms[name])} and {list(used)}"
                    )
        except LeanOutputError as exc:
            result.problems.append(str(exc))
        for line in _actual_lines(chunk):
            if _GUARD_RE.search(line) is None:
                continue
            try:
                hits = parse_guard_hits_line(line)
            except LeanOutputError as exc:
                result.problems.append(str(exc))
                continue
            result.guard_lines += 1
            for name, count in hits.items():
                if result.guard_hits.setdefault(name, count) != count:
                    result.problems.append(
                        f"GUARD_HITS gives {name} two counts: {result.guard_hits[name]} and {count}"
                    )
    # Memory signs: positionless messages (Lake's "stderr:" blocks, "Lean exited with …")
    # and loose text; never Lean's own positioned messages about the user's code.
    for m in messages:
        if m.file is None:
            result.out_of_memory.extend(ln for ln in m.text.splitlines() if _OOM_RE.search(ln))
    result.out_of_memory.extend(ln for ln in loose if _OOM_RE.search(ln))
    return result


def forbidden_axioms(axioms: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Per theorem, the axioms outside :data:`ALLOWED_AXIOMS` (theorems with none omitted).

    >>> forbidden_axioms({"a": ("propext",), "b": ("sorryAx", "Quot.sound")})
    {'b': ('sorryAx',)}
    """
    bad = {}
    for name, used in axioms.items():
        extra = tuple(a for a in used if a not in ALLOWED_AXIOMS)
        if extra:
            bad[name] = extra
    return bad


# --------------------------------------------------------------------------------------------
# Lean sources


_COMMENT_OR_LITERAL = re.compile(r"""['"]|--|/-""")
_CHAR_LITERAL = re.compile(r"'(?:\\.|[^\\'\n])'")
_STRING_REST = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)  # after the opening quote
_BLOCK_EDGE = re.compile(r"/-|-/")
_NOT_NEWLINE = re.compile(r"[^\n]")


def strip_comments(source: str) -> str:
    """Remove ``--`` line comments and (nested) ``/- … -/`` block comments.

    String literals are respected, so ``"--"`` in code survives. Removed text becomes spaces
    (newlines are kept), so positions of what is left do not move.

    >>> strip_comments('import A -- B\\n/- x /- y -/ z -/import C')
    'import A     \\n                 import C'
    """
    out: list[str] = []
    done = i = 0  # source[:done] is in out; the scan goes on from i
    n = len(source)
    while (m := _COMMENT_OR_LITERAL.search(source, i)) is not None:
        j, token = m.start(), m.group()
        if token == "'":
            # A char literal such as '"' (a prime after a name, as in h', is not one).
            after_name = j > 0 and (source[j - 1].isalnum() or source[j - 1] in "_'!?")
            lit = None if after_name else _CHAR_LITERAL.match(source, j)
            i = lit.end() if lit else j + 1
            continue
        if token == '"':
            lit = _STRING_REST.match(source, j + 1)
            i = lit.end() if lit else n
            continue
        if token == "--":
            k = source.find("\n", j)
            k = n if k < 0 else k
        else:  # "/-": to the "-/" that closes it, nested ones counted
            depth, k = 1, j + 2
            while depth:
                t = _BLOCK_EDGE.search(source, k)
                if t is None:
                    k = n
                    break
                depth += 1 if t.group() == "/-" else -1
                k = t.end()
        out.append(source[done:j])
        out.append(_NOT_NEWLINE.sub(" ", source[j:k]))
        done = i = k
    out.append(source[done:])
    return "".join(out)


_NAME_TOKEN = r"(?:«[^»]*»|[^\s.«»]+)(?:\.(?:«[^»]*»|[^\s.«»]+))*"
_HEADER_WORDS = {"module", "prelude", "public", "private", "meta", "all", "runtime"}


def parse_imports(source: str) -> list[str]:
    """Module names imported by a Lean file's header, in order.

    The header is ``module``/``prelude`` and the ``import`` lines (with the module system's
    ``public``/``meta``/``all`` modifiers) before the first other command.

    >>> parse_imports("/- c -/ import Pop.Check\\n-- x\\npublic import Generated.Shard0001\\n"
    ...               "namespace X\\nimport Nope")
    ['Pop.Check', 'Generated.Shard0001']
    """
    return header_imports(strip_comments(source))


def header_imports(stripped: str) -> list[str]:
    """:func:`parse_imports` of a source whose comments are already stripped
    (:func:`strip_comments`), for callers that keep the stripped text.

    >>> header_imports("import A\\n   \\nimport all B.C\\ndef x := 1")
    ['A', 'B.C']
    """
    imports: list[str] = []
    expect_name = False
    for m in re.finditer(_NAME_TOKEN, stripped):  # lazily: a header is short
        tok = m.group()
        if expect_name:
            if tok in {"all", "runtime"}:
                continue
            imports.append(tok)
            expect_name = False
        elif tok == "import":
            expect_name = True
        elif tok not in _HEADER_WORDS:
            break
    return imports


def printed_axiom_targets(source: str) -> list[str]:
    """Names given to ``#print axioms`` in a source (comments ignored), in order.

    >>> printed_axiom_targets("#print axioms ok\\n-- #print axioms no\\n#print axioms b'")
    ['ok', "b'"]
    """
    return re.findall(r"#print\s+axioms\s+(" + _NAME_TOKEN + ")", strip_comments(source))


_PIN_RE = re.compile(r"/--(?P<doc>(?:(?!-/).)*)-/\s*#guard_msgs\b[^\n]*?\bin\b", re.DOTALL)


def pinned_outputs(source: str) -> LeanOutput:
    """What the ``#guard_msgs`` docstrings of a source pin: axioms and GUARD_HITS.

    A passing ``#guard_msgs`` swallows the message it checks, so a module that built cleanly
    prints nothing for a pinned ``#print axioms``; its docstring then *is* the output. Only
    meaningful for a module that built without errors.

    >>> pinned_outputs("/-- info: 'X.t' depends on axioms: [propext] -/\\n"
    ...                "#guard_msgs in\\n#print axioms t").axioms
    {'X.t': ('propext',)}
    """
    docs = "\n".join(m.group("doc") for m in _PIN_RE.finditer(source))
    return parse_output(docs)
