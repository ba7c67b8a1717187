#!/usr/bin/env python3
"""Recorded stand-in for Lean 4's ``lake``, ``lean`` and ``elan``: the one sanctioned fake.

No Lean toolchain can be installed on the project's machines (no registry ships one, and
elan needs the internet), so the code that drives Lean — ``harness/lean/toolchain.py`` and
``harness/lean/runner.py`` — is tested against this script. Tests put small shims named
``lake``, ``lean`` and ``elan`` on ``PATH`` that run ``standin.py TOOL ARGS...``.

What it stands in for, and how faithfully:

``lean --version`` / ``lake --version`` / ``elan --version``
    The version lines of a Lean 4 release, in the recorded formats
    (``Lean (version 4.22.0, x86_64-unknown-linux-gnu, commit …, Release)``,
    ``Lake version 5.0.0-src+… (Lean version 4.22.0)``, ``elan 4.1.2 (… 2025-05-26)``). The
    version is the one pinned in ``lean-toolchain`` in the working directory, as elan's
    proxies would pick it (``$POP_STANDIN_VERSION`` overrides, to fake a mismatch).

``elan toolchain list``
    One line per folder under ``$ELAN_HOME/toolchains`` (``leanprover--lean4---v4.22.0`` is
    listed as ``leanprover/lean4:v4.22.0``).

``lake build TARGET...`` (``+Module``, ``Module`` or ``Path/To/Module.lean``)
    Like Lake: needs a ``lakefile.toml``/``lakefile.lean`` in the working directory, follows
    the targets' local ``import`` lines, and builds the out-of-date modules in dependency
    order by running the stand-in ``lean --json`` on each (a module is up to date when its
    ``.olean`` exists and the hash of its source and its imports' hashes is unchanged;
    up-to-date modules with saved messages are *replayed*). It reports in Lake's recorded
    non-terminal format: ``✔ [2/5] Built Pop.Rules (41ms)``, ``⚠``/``ℹ`` lines followed by
    the module's messages as ``warning: Generated/S.lean:3:0: …``; for a failure ``✖ [3/5]
    Building M (1.2s)``, a ``trace: .> LEAN_PATH=… lean …`` line, the messages, ``info:
    stderr:`` with lean's stderr, ``error: Lean exited with code N`` (128+signal when killed);
    at the end ``Some required targets logged failures:`` / ``- M`` on stdout and ``error:
    build failed`` on stderr with exit code 1, or ``Build completed successfully (N jobs).``.

``lean FILE [-o OLEAN] [--json]``
    Does **not** elaborate Lean. It reads the file's commands that the harness cares about
    and answers as Lean would, with the behaviour the scenario gives the module:

    * ``#print axioms NAME`` -> info ``'NS.NAME' depends on axioms: [..]`` (or ``does not
      depend on any axioms``), wrapped like Lean's formatter past 120 columns, with the
      namespace taken from ``namespace``/``end`` lines;
    * ``/-- DOC -/ #guard_msgs in CMD`` -> silent when DOC matches the message CMD would
      print (whitespace-insensitive), else Lean's error ``❌️ Docstring on `#guard_msgs` does
      not match generated message:`` with a ``- expected`` / ``+ actual`` diff, plus the
      original message put back, as Lean does;
    * an ``#eval`` line mentioning ``GUARD_HITS`` -> info ``GUARD_HITS <scenario text>``;
    * a theorem whose axioms include ``sorryAx`` -> warning ``declaration uses 'sorry'``;
    * a scenario ``error`` -> that error at the first theorem; as Lean's error recovery
      does, the theorem is then added with ``sorryAx`` (no sorry warning for it);
    * a scenario ``allocate_mib`` -> really allocates and writes that much memory first; if
      the allocation fails (an rlimit), prints Lean's runtime message ``INTERNAL PANIC: out
      of memory`` on stderr and exits 1, as Lean's allocator does;
    * a scenario ``sleep`` -> sleeps that many seconds first (to be killed by a timeout).

    With ``--json`` messages are JSON lines in Lean's ``SerialMessage`` shape (which the
    stand-in lake re-renders, as Lake does); without it, ``FILE:3:0: error: …`` lines.

The scenario is a JSON file named by ``$POP_STANDIN_SCENARIO``::

    {"modules": {"Generated.Shard0002": {"error": "unknown identifier 'x'",
                                         "axioms": {"ok": ["propext", "sorryAx"]},
                                         "allocate_mib": 512, "sleep": 30,
                                         "guard_hits": "a=1,b=2", "pidfile": "/tmp/p"}},
     "default_axioms": ["propext"],
     "log": "/tmp/calls.jsonl"}

``leanchecker MODULE`` (run as ``lake env leanchecker MODULE``)
    Replays a built module: succeeds when its ``.olean`` is on ``LEAN_PATH``; a scenario
    ``replay_error`` makes it fail with that message, as a kernel rejection would.

``log`` gets one JSON line per lean run (module, pid, start and end times), so tests can
check build order and parallelism.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_VERSION = "4.22.0"
LEAN_COMMIT = "3c1f6a2e8b7d4a5f9e0b1c2d3e4f5a6b7c8d9e0f"
LAKE_HASH = "3c1f6a2"
WIDTH = 120  # Lean's default format width
MIB = 1 << 20


def scenario() -> dict:
    path = os.environ.get("POP_STANDIN_SCENARIO")
    if not path:
        return {}
    return json.loads(Path(path).read_text(encoding="utf-8"))


def version() -> str:
    if os.environ.get("POP_STANDIN_VERSION"):
        return os.environ["POP_STANDIN_VERSION"]
    pin = Path("lean-toolchain")
    if pin.is_file():
        m = re.search(r":v?(\d+\.\d+\.\d+\S*)", pin.read_text())
        if m:
            return m.group(1)
    return DEFAULT_VERSION


# --------------------------------------------------------------------------------------------
# lean


def module_of(path: str) -> str:
    return ".".join(Path(path).with_suffix("").parts).lstrip(".")


def imports_of(source: str) -> list[str]:
    found = []
    for line in source.splitlines():
        m = re.match(r"^\s*(?:public\s+|private\s+)?(?:meta\s+)?import\s+(?:all\s+)?(\S+)", line)
        if m:
            found.append(m.group(1))
        elif line.strip() and not line.strip().startswith(("--", "/-", "module", "prelude")):
            break
    return found


def axiom_message(full: str, axioms: list[str]) -> str:
    if not axioms:
        return f"'{full}' does not depend on any axioms"
    one = f"'{full}' depends on axioms: [{', '.join(axioms)}]"
    if len(one) <= WIDTH:
        return one
    # Lean's formatter breaks every separator of a group that does not fit, indenting the
    # continuation lines by the bracket's nesting (one column).
    return f"'{full}' depends on axioms: [" + ",\n ".join(axioms) + "]"


def squash(text: str) -> str:
    return " ".join(text.split())


class Elaboration:
    """The messages the stand-in lean produces for one file."""

    def __init__(self, path: str, source: str, behaviour: dict, defaults: list[str]) -> None:
        self.path, self.source, self.behaviour = path, source, behaviour
        self.defaults = defaults
        self.messages: list[dict] = []
        self.failed_theorem: str | None = None

    def add(self, severity: str, line: int, col: int, text: str) -> None:
        self.messages.append({"severity": severity, "line": line, "col": col, "text": text})

    def axioms_for(self, name: str) -> list[str]:
        short = name.rsplit(".", 1)[-1]
        if short == self.failed_theorem:
            return ["sorryAx"]
        table = self.behaviour.get("axioms", {})
        return list(table.get(name, table.get(short, self.defaults)))

    def run(self) -> None:
        lines = self.source.splitlines()
        namespace: list[str] = []
        doc: str | None = None
        doc_open: list[str] | None = None
        theorem_seen = False
        for lineno, line in enumerate(lines, start=1):
            stripped = line.strip()
            if doc_open is not None:  # inside a multi-line docstring
                if "-/" in stripped:
                    doc_open.append(stripped.split("-/", 1)[0])
                    doc, doc_open = "\n".join(doc_open), None
                else:
                    doc_open.append(stripped)
                continue
            m = re.match(r"^/--(.*)$", stripped)
            if m:
                body = m.group(1)
                if "-/" in body:
                    doc = body.split("-/", 1)[0]
                    rest = body.split("-/", 1)[1].strip()
                    if not rest:
                        continue
                    stripped = rest
                else:
                    doc_open = [body]
                    continue
            if m := re.match(r"^namespace\s+(\S+)", stripped):
                namespace.append(m.group(1))
            elif re.match(r"^end\b", stripped) and namespace:
                namespace.pop()
            elif m := re.match(r"^(?:private\s+|protected\s+)?theorem\s+(\S+)", stripped):
                name = m.group(1)
                full = ".".join(namespace + [name])
                if not theorem_seen and "error" in self.behaviour:
                    self.failed_theorem = name
                    self.add("error", lineno, line.index("theorem") + 8, self.behaviour["error"])
                elif "sorryAx" in self.axioms_for(full):
                    col = line.index("theorem") + 8
                    self.add("warning", lineno, col, "declaration uses 'sorry'")
                theorem_seen = True
            guarded = re.match(r"^#guard_msgs\b.*?\bin\b\s*(.*)$", stripped)
            command = guarded.group(1) if guarded else stripped
            if guarded and not command:
                # `#guard_msgs in` on its own line: the command is the next line.
                nxt = lines[lineno].strip() if lineno < len(lines) else ""
                command = nxt
                lines[lineno] = ""  # consumed here
            produced: tuple[str, str] | None = None
            if m := re.match(r"^#print\s+axioms\s+(\S+)", command):
                name = m.group(1)
                full = name if "." in name else ".".join(namespace + [name])
                produced = ("info", axiom_message(full, self.axioms_for(full)))
            elif command.startswith("#eval") and "GUARD_HITS" in command:
                produced = ("info", f"GUARD_HITS {self.behaviour.get('guard_hits', '')}".rstrip())
            if produced is None:
                if guarded is None:
                    doc = None
                continue
            severity, text = produced
            if guarded:
                expected = squash((doc or "").strip())
                actual = squash(f"{severity}: {text}")
                if expected != actual:
                    exp = "\n".join("- " + ln for ln in (doc or "").strip().splitlines())
                    act = "\n".join("+ " + ln for ln in f"{severity}: {text}".splitlines())
                    self.add(
                        "error",
                        lineno,
                        0,
                        "❌️ Docstring on `#guard_msgs` does not match generated message:\n\n"
                        + exp
                        + "\n"
                        + act,
                    )
                    self.add(severity, lineno, 0, text)
            else:
                self.add(severity, lineno, 0, text)
            doc = None


def lean_main(args: list[str]) -> int:
    if args[:1] == ["--version"]:
        arch = "x86_64-unknown-linux-gnu"
        print(f"Lean (version {version()}, {arch}, commit {LEAN_COMMIT}, Release)")
        return 0
    files = [a for a in args if a.endswith(".lean")]
    if len(files) != 1:
        print("error: expected one .lean file", file=sys.stderr)
        return 1
    path = files[0]
    olean = args[args.index("-o") + 1] if "-o" in args else None
    as_json = "--json" in args
    sc = scenario()
    name = module_of(path)
    behaviour = sc.get("modules", {}).get(name, {})
    started = time.time()
    if behaviour.get("pidfile"):
        Path(behaviour["pidfile"]).write_text(str(os.getpid()))
    if behaviour.get("allocate_mib"):
        held = []
        try:
            for _ in range(int(behaviour["allocate_mib"]) // 16):
                held.append(b"\x01" * (16 * MIB))  # written, so really resident
        except MemoryError:
            held.clear()
            sys.stderr.write("INTERNAL PANIC: out of memory\n")
            sys.stderr.flush()
            os._exit(1)
        held.clear()
    if behaviour.get("sleep"):
        time.sleep(float(behaviour["sleep"]))
    try:
        source = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        print(f"file not found: {path}: {exc.strerror}", file=sys.stderr)
        return 1
    elab = Elaboration(path, source, behaviour, sc.get("default_axioms", ["propext"]))
    elab.run()
    for msg in elab.messages:
        if as_json:
            print(
                json.dumps(
                    {
                        "fileName": path,
                        "pos": {"line": msg["line"], "column": msg["col"]},
                        "endPos": None,
                        "keepFullRange": False,
                        "severity": {"info": "information"}.get(msg["severity"], msg["severity"]),
                        "caption": "",
                        "data": msg["text"],
                        "isSilent": False,
                    }
                )
            )
        else:
            print(f"{path}:{msg['line']}:{msg['col']}: {msg['severity']}: {msg['text']}")
    if behaviour.get("stdout"):
        print(behaviour["stdout"])
    failed = any(m["severity"] == "error" for m in elab.messages)
    if sc.get("log"):
        entry = {"module": name, "pid": os.getpid(), "start": started, "end": time.time()}
        with open(sc["log"], "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")
    if not failed and olean:
        Path(olean).parent.mkdir(parents=True, exist_ok=True)
        Path(olean).write_bytes(hashlib.sha256(source.encode()).digest())
    return 1 if failed else 0


# --------------------------------------------------------------------------------------------
# lake


def fmt_time(ms: int) -> str:
    # Lake's formatTime.
    if ms > 10000:
        return f"{ms // 1000}s"
    if ms > 1000:
        return f"{ms // 1000}.{(ms + 50) // 100 % 10}s"
    return f"{ms}ms"


def lake_build(targets: list[str]) -> int:
    if not (Path("lakefile.toml").is_file() or Path("lakefile.lean").is_file()):
        print("error: no configuration file with a supported extension:", file=sys.stderr)
        print("./lakefile.lean\n./lakefile.toml", file=sys.stderr)
        return 1
    roots = []
    for t in targets:
        mod = t[1:] if t.startswith("+") else t
        if mod.endswith(".lean"):
            mod = module_of(mod)
        if not Path(mod.replace(".", "/") + ".lean").is_file():
            print(f"error: unknown target `{t}`", file=sys.stderr)
            return 1
        roots.append(mod)

    order: list[str] = []
    state: dict[str, str] = {}

    def visit(mod: str) -> None:
        if state.get(mod) == "done":
            return
        if state.get(mod) == "active":
            raise SystemExit(f"error: import cycle at {mod}")
        state[mod] = "active"
        src = Path(mod.replace(".", "/") + ".lean").read_text(encoding="utf-8")
        for imp in imports_of(src):
            if Path(imp.replace(".", "/") + ".lean").is_file():
                visit(imp)
        state[mod] = "done"
        order.append(mod)

    for root in roots:
        visit(root)

    build = Path(".lake/build")
    hashes: dict[str, str] = {}
    failures: list[str] = []
    failed_mods: set[str] = set()
    total = len(order)
    for index, mod in enumerate(order, start=1):
        rel = mod.replace(".", "/") + ".lean"
        src = Path(rel).read_text(encoding="utf-8")
        deps = [i for i in imports_of(src) if i in hashes or i in failed_mods]
        if any(d in failed_mods for d in deps):
            failed_mods.add(mod)  # Lake fails the dependent without a log of its own
            continue
        digest = hashlib.sha256(
            (src + "".join(hashes[d] for d in sorted(deps))).encode()
        ).hexdigest()
        hashes[mod] = digest
        olean = build / "lib" / "lean" / (mod.replace(".", "/") + ".olean")
        trace = olean.with_suffix(".trace")
        if olean.is_file() and trace.is_file():
            saved = json.loads(trace.read_text())
            if saved.get("hash") == digest:
                log = saved.get("log", [])
                if log:
                    levels = {e["level"] for e in log}
                    icon = "⚠" if "warning" in levels else "ℹ"
                    print(f"{icon} [{index}/{total}] Replayed {mod}")
                    for e in log:
                        print(f"{e['level']}: {e['message']}")
                continue
        cmd = [
            sys.executable,
            os.path.abspath(__file__),
            "lean",
            rel,
            "-R",
            ".",
            "-o",
            str(olean),
            "-i",
            str(olean.with_suffix(".ilean")),
            "--json",
        ]
        shown = "LEAN_PATH=././.lake/build/lib/lean lean " + " ".join(cmd[3:])
        begin = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        ms = int((time.monotonic() - begin) * 1000)
        log: list[dict] = []
        text_out = ""
        for ln in proc.stdout.splitlines():
            try:
                msg = json.loads(ln)
            except ValueError:
                text_out += ln + "\n"
                continue
            level = {"information": "info"}.get(msg["severity"], msg["severity"])
            pos = msg["pos"]
            log.append(
                {
                    "level": level,
                    "message": f"{rel}:{pos['line']}:{pos['column']}: {msg['data'].strip()}",
                }
            )
        if text_out.strip():
            log.append({"level": "info", "message": "stdout:\n" + text_out.strip()})
        if proc.stderr.strip():
            log.append({"level": "info", "message": "stderr:\n" + proc.stderr.strip()})
        code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
        if code != 0:
            log.append({"level": "error", "message": f"Lean exited with code {code}"})
        levels = {e["level"] for e in log}
        if "error" in levels:
            print(f"✖ [{index}/{total}] Building {mod} ({fmt_time(ms)})")
            print(f"trace: .> {shown}")
            failures.append(mod)
            failed_mods.add(mod)
        elif "warning" in levels:
            print(f"⚠ [{index}/{total}] Built {mod} ({fmt_time(ms)})")
        elif log:
            print(f"ℹ [{index}/{total}] Built {mod} ({fmt_time(ms)})")
        else:
            print(f"✔ [{index}/{total}] Built {mod} ({fmt_time(ms)})")
        for e in log:
            print(f"{e['level']}: {e['message']}")
        sys.stdout.flush()
        if "error" not in levels:
            trace.parent.mkdir(parents=True, exist_ok=True)
            trace.write_text(json.dumps({"hash": digest, "log": log}))
    if failures or failed_mods:
        print("Some required targets logged failures:")
        for mod in failures:
            print(f"- {mod}")
        sys.stdout.flush()
        print("error: build failed", file=sys.stderr)
        return 1
    print(f"Build completed successfully ({total} jobs).")
    return 0


def lake_main(args: list[str]) -> int:
    if args[:1] == ["--version"]:
        print(f"Lake version 5.0.0-src+{LAKE_HASH} (Lean version {version()})")
        return 0
    if args[:1] == ["build"]:
        return lake_build(args[1:])
    if args[:1] == ["env"] and len(args) > 1:
        # Like Lake: run the command with the workspace's search path.
        env = dict(os.environ, LEAN_PATH=str(Path.cwd() / ".lake" / "build" / "lib" / "lean"))
        return subprocess.run(args[1:], env=env, check=False).returncode
    print(
        f"error: the stand-in lake only knows --version, build and env, not {args}", file=sys.stderr
    )
    return 1


# --------------------------------------------------------------------------------------------
# leanchecker


def leanchecker_main(args: list[str]) -> int:
    """``leanchecker MODULE``: replays the module's ``.olean`` found on ``LEAN_PATH``. The
    stand-in checks that the built ``.olean`` exists; a scenario ``replay_error`` for the
    module makes it report that error (as a kernel rejection) and exit 1."""
    if len(args) != 1:
        print("usage: leanchecker MODULE", file=sys.stderr)
        return 2
    module = args[0]
    roots = [Path(p) for p in os.environ.get("LEAN_PATH", "").split(os.pathsep) if p]
    olean = next(
        (
            r / (module.replace(".", "/") + ".olean")
            for r in roots
            if (r / (module.replace(".", "/") + ".olean")).is_file()
        ),
        None,
    )
    sc = scenario()
    log = sc.get("log")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"tool": "leanchecker", "module": module}) + "\n")
    if olean is None:
        print(f"uncaught exception: object file of module {module} does not exist")
        return 1
    error = sc.get("modules", {}).get(module, {}).get("replay_error")
    if error:
        print(f"uncaught exception: (kernel) {error}")
        return 1
    return 0


# --------------------------------------------------------------------------------------------
# elan


def elan_main(args: list[str]) -> int:
    if args[:1] == ["--version"]:
        print("elan 4.1.2 (58e8d545e 2025-05-26)")
        return 0
    if args[:2] == ["toolchain", "list"]:
        home = Path(os.environ.get("ELAN_HOME") or Path.home() / ".elan")
        folder = home / "toolchains"
        names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
        if not names:
            print("no installed toolchains")
        for n in names:
            print(n.replace("---", ":").replace("--", "/"))
        return 0
    print(f"error: the stand-in elan does not know {args}", file=sys.stderr)
    return 1


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: standin.py lake|lean|elan ARGS...", file=sys.stderr)
        return 2
    tool, args = argv[0], argv[1:]
    tools = {"lake": lake_main, "lean": lean_main, "elan": elan_main}
    tools["leanchecker"] = leanchecker_main
    return tools[tool](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
