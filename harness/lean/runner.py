"""Build the rendered Lean modules one by one, in dependency order, under hard limits.

**How one module is built.** ``lake build +Generated.Shard0003``, run in the Lean project.
The alternative, ``lake env lean Generated/Shard0003.lean``, elaborates the file but writes
no ``.olean``, so a module importing it could not be built after it; we would have to pass
``-o`` and the search path ourselves, i.e. re-implement Lake. ``lake build`` writes the
artifacts that later shards import, resolves the search path from the lakefile, skips what
is up to date, and reports each message as ``error: File.lean:3:8: …`` (see
:mod:`harness.lean.parse`). The ``+`` marks the name as a module, so it can never be mistaken
for a library or an executable.

**Order and parallelism.** Dependencies come from the rendered modules' own ``import`` lines;
nothing else describes them. :class:`graphlib.TopologicalSorter` hands out modules whose
imports are done, up to ``jobs`` at a time. Lake takes no lock on a workspace, so two
``lake build`` processes must never share an unbuilt dependency: before the parallel phase one
*prepare* build makes everything shared up to date — the model modules the rendered modules
import (``Pop.Rules``, ``Pop.Check``…) and any cached module that a module to be built imports.
The prepare build runs under the same memory cap and timeout as a module build; if it fails,
every module still to be built is ``skipped``.

**Limits.** Each ``lake`` process starts in its own process group, with ``RLIMIT_AS`` set in
the child before ``exec`` (by a tiny Python trampoline, since ``preexec_fn`` is unsafe once
threads exist). The limit is inherited by the ``lean`` process Lake starts, and it is a hard,
OS-enforced cap, unlike ``lean -M``, which Lean only checks now and then. It caps address
space, which is larger than resident memory, so give it headroom. At the wall-clock timeout
the whole group gets ``SIGKILL``, ``lean`` included. Wall time is measured around the child,
and peak RSS comes from ``os.wait4`` in the trampoline, which forks lake and reports lake's
rusage back (see ``_TRAMPOLINE`` for why the harness cannot measure its own child); on Linux
that figure covers lake and the descendants it waited for, so it is the larger of lake's and
lean's peaks. A child killed at the timeout reports no rusage of its own: its peak is then
the trampoline's, an over-estimate.

**Verdicts** (``status`` in the result; checked in this order, first match wins):

===================  ==========================================================
``timeout``          killed at the wall-clock limit
``memory_limit``     ran out of memory under the cap (or the OOM killer struck)
``compile_error``    Lean or Lake reported an error in the module (checked before
                     ``sorry``: Lean adds a theorem whose proof failed with
                     ``sorryAx``, and the real error is the news)
``sorry``            a declaration uses ``sorry`` (``sorryAx``)
``forbidden_axiom``  an axiom outside propext, Classical.choice, Quot.sound
``compile_error``    only the module's own ``#guard_msgs`` pin failed
``crashed``          exited abnormally without an error about the code
``bad_output``       built, but a ``#print axioms`` result or GUARD_HITS line is
                     missing or unreadable
``skipped``          not run: a module it imports (or the prepare build) failed
``passed``           all of the above are clear
===================  ==========================================================

Only messages positioned in the module's own file (and positionless ones, such as Lean's
stderr) count for its verdict: Lake replays the saved messages of up-to-date imports.
A ``#print axioms`` swallowed by a passing ``#guard_msgs`` is read from the pin's docstring.
"""

from __future__ import annotations

import graphlib
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tqdm import tqdm

from harness.atomic import write_atomic
from harness.bounded import MAX_DOCUMENT, loads_json, read_text
from harness.cli import HarnessError
from harness.lean.cache import MAX_SOURCE_BYTES, ResultCache, model_hash, module_key
from harness.lean.parse import (
    ALLOWED_AXIOMS,
    LeanOutput,
    Message,
    forbidden_axioms,
    parse_imports,
    parse_output,
    pinned_outputs,
    printed_axiom_targets,
)
from harness.lean.toolchain import Toolchain, find_replay_checker

RESULT_FORMAT = "pop-harness/lean-result/1"
STATUSES = (
    "passed",
    "timeout",
    "memory_limit",
    "sorry",
    "forbidden_axiom",
    "compile_error",
    "crashed",
    "bad_output",
    "skipped",
)
GIB = 1 << 30
MIB = 1 << 20

# Output kept from one child: generous for Lean messages, bounded for a runaway printer.
_MAX_OUTPUT = 32 * MIB
# Messages kept per module in the result file.
_MAX_MESSAGES = 200
_MAX_MESSAGE_CHARS = 4000

# Runs as the child: set the address-space cap, then run the real program in a fork of this
# small interpreter, wait for it, and report its rusage on the report pipe. Why not exec in
# place: on Linux a child's ru_maxrss starts at its parent's peak (fork copies the page
# tables; vfork shares the parent's memory until exec), so wait4 on a direct child of a big
# harness process would report the harness's size, not lean's. A grandchild forked from this
# ~10 MiB interpreter is measured cleanly. The exit status (code or signal) is passed on.
# The parent-death signal makes a build die with the process that started it: a SIGKILLed
# Dask worker leaves no lake behind to race the rerun of its task in the same workspace.
# argv: cap, report fd, program, args...
_TRAMPOLINE = """\
import os, resource, signal, sys
cap, report = int(sys.argv[1]), int(sys.argv[2])
try:  # Linux: if whoever started us dies (a killed Dask worker), take lake and lean along
    import ctypes
    signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
    ctypes.CDLL(None).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    if os.getppid() == 1:
        os.killpg(0, signal.SIGKILL)
except (OSError, AttributeError):
    pass
if cap > 0:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
pid = os.fork()
if pid == 0:
    os.close(report)
    try:
        os.execv(sys.argv[3], sys.argv[3:])
    except OSError as exc:
        sys.stderr.write(f"error: cannot run {sys.argv[3]}: {exc.strerror}\\n")
    os._exit(127)
while True:
    try:
        _, status, usage = os.wait4(pid, 0)
        break
    except InterruptedError:
        continue
os.write(report, f"{usage.ru_maxrss} {usage.ru_utime} {usage.ru_stime}\\n".encode())
os.close(report)
code = os.waitstatus_to_exitcode(status)
if code < 0:
    try:
        signal.signal(-code, signal.SIG_DFL)
    except (OSError, ValueError):  # SIGKILL and SIGSTOP keep their default anyway
        pass
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


# --------------------------------------------------------------------------------------------
# One child under limits


@dataclass
class ChildResult:
    """How one limited child ended."""

    command: list[str]
    exit_code: int | None  # None when killed by a signal
    signal: int | None
    timed_out: bool
    seconds: float
    cpu_seconds: float
    peak_rss_bytes: int
    output: str  # stdout and stderr, interleaved as written

    @property
    def peak_mib(self) -> float:
        return round(self.peak_rss_bytes / MIB, 1)


class _Child:
    """A started child; see :func:`run_limited` for the contract."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str] | None,
        memory_bytes: int,
        timeout: float,
    ) -> None:
        self.command = [str(c) for c in command]
        self._log = tempfile.TemporaryFile()
        self.timeout = timeout
        self.started = time.monotonic()
        self.deadline = self.started + timeout
        self.result: ChildResult | None = None
        self._report, report_w = os.pipe()
        argv = [sys.executable, "-I", "-S", "-c", _TRAMPOLINE, str(int(memory_bytes))]
        try:
            self.proc = subprocess.Popen(
                [*argv, str(report_w), *self.command],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                pass_fds=(report_w,),
                start_new_session=True,  # own process group, so a kill reaches lean too
            )
        finally:
            os.close(report_w)
        self.pid = self.proc.pid
        try:
            self.pidfd: int | None = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux >= 5.3: fall back to polling
            self.pidfd = None

    def poll(self) -> bool:
        """Reap the child if it has ended (or kill it past its deadline); True once done."""
        if self.result is not None:
            return True
        pid, status, usage = os.wait4(self.pid, os.WNOHANG)
        if pid == 0:
            if time.monotonic() < self.deadline:
                return False
            self.kill(timed_out=True)
            return True
        self._finish(status, usage, timed_out=False)
        return True

    def kill(self, *, timed_out: bool = False) -> None:
        """SIGKILL the whole process group and reap the child."""
        if self.result is not None:
            return
        self._killpg()
        _, status, usage = os.wait4(self.pid, 0)
        self._finish(status, usage, timed_out=timed_out)

    def _killpg(self) -> None:
        # The leader is not reaped yet, so its pid (= the group id) cannot have been reused.
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _finish(self, status: int, usage, *, timed_out: bool) -> None:
        seconds = time.monotonic() - self.started
        # Whatever the leader left behind in its group goes too: no orphaned lean.
        self._killpg()
        code = os.waitstatus_to_exitcode(status)
        self.proc.returncode = code  # reaped by us; keep Popen from trying again
        # ru_maxrss is in KiB on Linux, in bytes on macOS.
        scale = 1 if sys.platform == "darwin" else 1024
        self._log.seek(0, os.SEEK_END)
        size = self._log.tell()
        self._log.seek(0)
        if size <= _MAX_OUTPUT:
            raw = self._log.read()
        else:
            head = self._log.read(_MAX_OUTPUT // 2)
            self._log.seek(size - _MAX_OUTPUT // 2)
            raw = head + b"\n[... output truncated by pop-harness ...]\n" + self._log.read()
        self._log.close()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        # The trampoline's report on the real program; the trampoline's own rusage (which
        # includes this process's size, see _TRAMPOLINE) only if it was killed first.
        maxrss, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
        os.set_blocking(self._report, False)
        try:
            report = os.read(self._report, 256).split()
        except BlockingIOError:
            report = []
        os.close(self._report)
        if len(report) == 3:
            maxrss, cpu = int(report[0]), float(report[1]) + float(report[2])
        self.result = ChildResult(
            command=self.command,
            exit_code=code if code >= 0 else None,
            signal=-code if code < 0 else None,
            timed_out=timed_out,
            seconds=round(seconds, 3),
            cpu_seconds=round(cpu, 3),
            peak_rss_bytes=int(maxrss) * scale,
            output=raw.decode("utf-8", errors="replace"),
        )


def _wait_for_any(children: Sequence[_Child]) -> None:
    """Block until a child may have ended or the nearest deadline passes (at most 1 s)."""
    now = time.monotonic()
    wait = max(0.0, min([c.deadline for c in children] + [now + 1.0]) - now)
    fds = [c.pidfd for c in children if c.pidfd is not None]
    if len(fds) == len(children):
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        poller.poll(wait * 1000)  # a pidfd becomes readable when its process exits
    else:
        time.sleep(min(wait, 0.05))


def run_limited(
    command: Sequence[str],
    *,
    cwd: Path,
    memory_bytes: int,
    timeout: float,
    env: dict[str, str] | None = None,
) -> ChildResult:
    """Run ``command`` with an address-space cap of ``memory_bytes`` (0: none) and a wall-clock
    ``timeout`` in seconds, killing its whole process group at the timeout.

    >>> r = run_limited(["/bin/sh", "-c", "echo hi"], cwd=Path("."), memory_bytes=GIB, timeout=30)
    >>> r.exit_code, r.output, r.timed_out
    (0, 'hi\\n', False)
    """
    child = _Child(command, cwd=Path(cwd), env=env, memory_bytes=memory_bytes, timeout=timeout)
    try:
        while not child.poll():
            _wait_for_any([child])
    finally:
        child.kill()
    assert child.result is not None
    return child.result


# --------------------------------------------------------------------------------------------
# Verdicts


@dataclass
class Verdict:
    status: str
    messages: list[Message] = field(default_factory=list)
    axioms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    guard_hits: dict[str, int] = field(default_factory=dict)


_GUARD_MISMATCH = "Docstring on `#guard_msgs` does not match"


def _lake_noise(m: Message) -> bool:
    # Lake's summaries of an error already reported in full.
    return m.file is None and bool(
        re.match(r"^(build failed|Lean exited with code \d+)$", m.text.strip())
    )


def classify(
    result: ChildResult,
    *,
    source: str | None = None,
    file: str | None = None,
    memory_bytes: int = 0,
) -> Verdict:
    """Turn a finished child into a :class:`Verdict` (see the module docstring for the order).

    ``file`` (the module's path relative to the project) keeps only that file's messages, so
    warnings Lake replays from up-to-date dependencies are not blamed on this module.
    ``source`` is the module's text: it says which ``#print axioms`` and GUARD_HITS results to
    expect, and its passing ``#guard_msgs`` docstrings supply the results they swallowed.
    """
    out: LeanOutput = parse_output(result.output, file=file)
    kept = [m for m in out.messages if m.severity in ("error", "warning") or m.file is None]
    axioms = dict(out.axioms)
    guard_hits = dict(out.guard_hits)

    def verdict(status: str, *extra: str) -> Verdict:
        msgs = [Message("error", text) for text in extra] + kept
        return Verdict(status, msgs, axioms, guard_hits)

    cap = f"{memory_bytes / GIB:g} GiB"
    if result.timed_out:
        return verdict(
            "timeout",
            f"wall-clock timeout: killed after {result.seconds:.1f} s with its process group",
        )
    if out.out_of_memory:
        return verdict("memory_limit", f"out of memory under the {cap} cap: {out.out_of_memory[0]}")
    if result.signal == signal.SIGKILL:
        return verdict(
            "memory_limit",
            "killed by SIGKILL that pop-harness did not send (the kernel's out-of-memory killer)",
        )
    built = result.exit_code == 0 and not out.errors
    if built and source is not None:
        pins = pinned_outputs(source)
        for name, used in pins.axioms.items():
            axioms.setdefault(name, used)
        for name, count in pins.guard_hits.items():
            guard_hits.setdefault(name, count)
        out.guard_lines += pins.guard_lines
    # Lean adds a theorem whose proof failed with sorryAx, and a #guard_msgs pin then fails
    # too: a real error is the cause and is reported as such. A pin failing on its own
    # (the axioms changed) is judged by the axioms it shows.
    own = [m for m in out.errors if not _lake_noise(m)]
    real = [m for m in own if _GUARD_MISMATCH not in m.text]
    if real:
        return verdict("compile_error")
    if out.uses_sorry():
        users = sorted(n for n, used in axioms.items() if "sorryAx" in used)
        return verdict("sorry", "uses sorry" + (f": {', '.join(users)}" if users else ""))
    bad = forbidden_axioms(axioms)
    if bad:
        listed = "; ".join(f"{n} uses {', '.join(a)}" for n, a in sorted(bad.items()))
        allowed = ", ".join(sorted(ALLOWED_AXIOMS))
        return verdict("forbidden_axiom", f"axioms outside {{{allowed}}}: {listed}")
    if own:
        return verdict("compile_error")
    if not built:
        how = (
            f"killed by signal {signal.Signals(result.signal).name}"
            if result.signal is not None
            else f"exited with code {result.exit_code} without an error about the code"
        )
        return verdict("crashed", how)
    problems = list(out.problems)
    if source is not None:
        for target in printed_axiom_targets(source):
            if not any(n == target or n.endswith("." + target) for n in axioms):
                problems.append(f"no `#print axioms {target}` result in the output")
        # Raw text on purpose: a corpus module may print the line through a model function
        # and name GUARD_HITS only in a comment ("-- Expected: GUARD_HITS ...").
        if "GUARD_HITS" in source and out.guard_lines == 0:
            problems.append("the module mentions GUARD_HITS but printed no GUARD_HITS line")
    if problems:
        return verdict("bad_output", *problems)
    return verdict("passed")


# --------------------------------------------------------------------------------------------
# The rendered modules


@dataclass(frozen=True)
class Module:
    name: str  # "Generated.Shard0003"
    rel: str  # "Generated/Shard0003.lean", relative to the project
    deps: tuple[str, ...]  # rendered modules it imports
    model_imports: tuple[str, ...]  # other project modules it imports
    kind: str  # "shard" | "corpus" | "module"
    source: str


def module_name(rel: Path) -> str:
    """``Generated/Shard0003.lean`` -> ``Generated.Shard0003``."""
    return ".".join(rel.with_suffix("").parts)


def discover_modules(project: Path, generated: str = "Generated") -> dict[str, Module]:
    """Every ``*.lean`` under ``project/generated``, with the imports that link them.

    Raises HarnessError for no modules, an import of a missing rendered module, or a cycle.
    """
    project = Path(project)
    root = project / generated
    if not root.is_dir():
        raise HarnessError(
            f"no rendered modules: {root} does not exist (run `python -m harness render` first)"
        )
    prefix = module_name(Path(generated)) + "."
    files = sorted(p for p in root.rglob("*.lean") if p.is_file())
    if not files:
        raise HarnessError(f"no rendered modules in {root} (run `python -m harness render` first)")
    names = {module_name(p.relative_to(project)): p for p in files}
    modules: dict[str, Module] = {}
    for name, path in names.items():
        rel = path.relative_to(project).as_posix()
        try:
            source = read_text(path, MAX_SOURCE_BYTES, "Lean module")
        except (OSError, ValueError) as exc:
            raise HarnessError(str(exc)) from None
        deps, model = [], []
        for imp in parse_imports(source):
            if imp in names:
                deps.append(imp)
            elif imp.startswith(prefix):
                raise HarnessError(f"{rel} imports {imp}, which has no file under {root}")
            elif (project / (imp.replace(".", "/") + ".lean")).is_file():
                model.append(imp)
            # Anything else (Init, Std, Lean) comes with the toolchain.
        last = name.rsplit(".", 1)[-1]
        if re.fullmatch(r"Shard\d+", last):
            kind = "shard"
        elif "GUARD_HITS" in source:
            kind = "corpus"
        else:
            kind = "module"
        modules[name] = Module(name, rel, tuple(deps), tuple(model), kind, source)
    build_order(modules)  # reject cycles now, with a readable message
    return modules


def build_order(modules: dict[str, Module]) -> list[str]:
    """A dependency order (imports first; ties by name), or HarnessError naming a cycle."""
    sorter = graphlib.TopologicalSorter({n: m.deps for n, m in sorted(modules.items())})
    try:
        return list(sorter.static_order())
    except graphlib.CycleError as exc:
        cycle = " -> ".join(exc.args[1])
        raise HarnessError(f"import cycle among rendered modules: {cycle}") from None


# --------------------------------------------------------------------------------------------
# The whole run


def _trim(messages: list[Message]) -> list[dict]:
    kept = []
    for m in messages[:_MAX_MESSAGES]:
        d = m.to_json()
        if len(d["text"]) > _MAX_MESSAGE_CHARS:
            d["text"] = d["text"][:_MAX_MESSAGE_CHARS] + " [...]"
        kept.append(d)
    if len(messages) > _MAX_MESSAGES:
        kept.append(
            Message("info", f"{len(messages) - _MAX_MESSAGES} more messages left out").to_json()
        )
    return kept


def _record(mod: Module, key: str, result: ChildResult | None, v: Verdict, log: str | None) -> dict:
    return {
        "module": mod.name,
        "path": mod.rel,
        "kind": mod.kind,
        "key": key,
        "deps": list(mod.deps),
        "status": v.status,
        "cached": False,
        "seconds": None if result is None else result.seconds,
        "cpu_seconds": None if result is None else result.cpu_seconds,
        "peak_mib": None if result is None else result.peak_mib,
        "exit_code": None if result is None else result.exit_code,
        "signal": None if result is None else result.signal,
        "axioms": {n: list(a) for n, a in sorted(v.axioms.items())},
        "guard_hits": dict(sorted(v.guard_hits.items())),
        "messages": _trim(v.messages),
        "log": log,
    }


def _save_log(log_dir: Path | None, stem: str, result: ChildResult) -> str | None:
    if log_dir is None:
        return None
    path = Path(log_dir) / f"{stem}.log"
    header = f"$ {' '.join(result.command)}\n"
    write_atomic(path, (header + result.output).encode("utf-8"))
    return str(path)


@dataclass
class Limits:
    """Per-child limits: jobs at once, address-space cap in bytes, wall-clock seconds."""

    jobs: int = 1
    memory_bytes: int = 8 * GIB
    timeout: float = 1800.0

    def __post_init__(self) -> None:
        if self.jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {self.jobs}")
        if self.memory_bytes <= 0:
            raise ValueError(f"memory cap must be positive, got {self.memory_bytes} bytes")
        if not self.timeout > 0:
            raise ValueError(f"timeout must be positive, got {self.timeout} s")


def run_project(
    project: Path,
    toolchain: Toolchain,
    *,
    generated: str = "Generated",
    limits: Limits | None = None,
    cache: ResultCache | None = None,
    log_dir: Path | None = None,
    env: dict[str, str] | None = None,
    progress: bool | None = None,
    on_result: Callable[[dict], None] | None = None,
    session=None,
    replay: bool = True,
) -> dict:
    """Check every rendered module of ``project``; return the result document.

    ``progress`` None shows a tqdm bar only when stderr is a terminal. ``on_result`` is
    called with each module's record as it is decided (cached ones first). Children still
    running when this is interrupted are killed with their process groups. With a
    :class:`harness.cluster.Session`, the builds are Dask tasks instead of local children
    (:mod:`harness.lean.distributed`; records then also name their ``worker``).

    The document (``format`` ``pop-harness/lean-result/1``; the manifest step reads it):

    * ``ok``: every module passed (and the prepare build, if one ran);
    * ``toolchain``: ``pinned``, ``lean_version``, ``matches_pin``, the full ``lean``,
      ``lake`` and ``elan`` version lines, ``paths``;
    * ``model_hash``, ``limits`` (``jobs``, ``memory_bytes``, ``memory_gib``, ``memory_cap``,
      ``timeout_seconds``), ``allowed_axioms``, ``order`` (a dependency order);
    * ``prepare``: null, or ``targets``, ``command``, ``status``, ``seconds``, ``peak_mib``,
      ``messages``, ``log``;
    * ``replay``: the final environment replayed by the kernel (``leanchecker``, or
      ``lean4checker``, on every built module: ``lake env CHECKER MODULE`` re-adds the
      module's declarations to its imports' environment), ``status`` (``passed``, ``failed``,
      ``not available`` when the toolchain has no checker, ``not run`` when a module failed
      or ``replay`` is off), ``tool``, ``modules`` (name -> ``status``, ``seconds``,
      ``peak_mib``, ``messages``); ``ok`` needs it passed where it is available;
    * ``shards``: per module name (every rendered module; ``kind`` says shard, corpus or
      module) ``status``, ``cached``, ``seconds``, ``cpu_seconds``, ``peak_mib``,
      ``exit_code``, ``signal``, ``axioms`` (theorem -> axioms), ``guard_hits``,
      ``messages`` (``severity``, ``file``, ``line``, ``col``, ``text``), ``deps``, ``key``
      (the cache key), ``path``, ``log``; timings of a cached record are from the run that
      produced it, and a skipped module has null timings;
    * ``axioms`` and ``guard_hits``: the union over all modules;
    * ``summary``: ``modules``, ``passed``, ``failed``, ``cached``, ``by_status``.
    """
    limits = limits or Limits()
    project = Path(project)
    modules = discover_modules(project, generated)
    order = build_order(modules)
    model = model_hash(project, project / generated)
    identity = toolchain.identity()
    keys: dict[str, str] = {}
    for name in order:
        mod = modules[name]
        keys[name] = module_key(
            mod.source.encode("utf-8"), [keys[d] for d in mod.deps], model, identity
        )

    records: dict[str, dict] = {}
    if progress is None:
        progress = sys.stderr.isatty()
    bar = tqdm(total=len(order), desc="lean", unit="module", disable=not progress, file=sys.stderr)

    def decide(name: str, record: dict) -> None:
        records[name] = record
        bar.update(1)
        if on_result is not None:
            on_result(record)

    for name in order:
        hit = cache.get(keys[name]) if cache is not None else None
        if hit is not None and hit.get("status") == "passed" and hit.get("module") == name:
            hit["cached"] = True
            decide(name, hit)
    to_build = [n for n in order if n not in records]
    pending = set(to_build)

    run_env = dict(os.environ if env is None else env)
    lake = str(toolchain.lake)
    prepare_record = None
    prepare_targets = sorted(
        {imp for n in to_build for imp in modules[n].model_imports}
        | {d for n in to_build for d in modules[n].deps if d not in pending}
    )
    failed: set[str] = set()
    running: dict[str, _Child] = {}
    if session is not None:
        from harness.lean.distributed import build_on_cluster

        to_run, to_build = to_build, []  # nothing left for the local loop below
        try:
            prepare_record = build_on_cluster(
                session,
                project,
                modules,
                to_run,
                keys,
                prepare_targets,
                lake=lake,
                limits=limits,
                env=env,
                log_dir=log_dir,
                cache=cache,
                decide=decide,
                bar=bar,
            )
        except BaseException:
            bar.close()
            raise
        prepare_targets = []
    try:
        if prepare_targets:
            bar.set_postfix_str("prepare")
            command = [lake, "build", *(f"+{t}" for t in prepare_targets)]
            result = run_limited(
                command,
                cwd=project,
                memory_bytes=limits.memory_bytes,
                timeout=limits.timeout,
                env=run_env,
            )
            v = classify(result, memory_bytes=limits.memory_bytes)
            prepare_record = {
                "targets": prepare_targets,
                "command": command,
                "status": v.status,
                "seconds": result.seconds,
                "peak_mib": result.peak_mib,
                "messages": _trim(v.messages),
                "log": _save_log(log_dir, "_prepare", result),
            }
            if v.status != "passed":
                first = next((m.one_line() for m in v.messages), v.status)
                for name in to_build:
                    skipped = Verdict(
                        "skipped", [Message("error", f"the prepare build failed: {first}")]
                    )
                    decide(name, _record(modules[name], keys[name], None, skipped, None))
                failed.update(to_build)
                to_build = []

        sorter = graphlib.TopologicalSorter(
            {n: [d for d in modules[n].deps if d in pending] for n in to_build}
        )
        sorter.prepare()
        ready: deque[str] = deque()
        while sorter.is_active():
            ready.extend(sorted(sorter.get_ready()))
            while ready and len(running) < limits.jobs:
                name = ready.popleft()
                broken = [d for d in modules[name].deps if d in failed]
                if broken:
                    why = Message("error", f"not run: imports {', '.join(broken)}, which failed")
                    decide(
                        name,
                        _record(modules[name], keys[name], None, Verdict("skipped", [why]), None),
                    )
                    failed.add(name)
                    sorter.done(name)
                    continue
                running[name] = _Child(
                    [lake, "build", f"+{name}"],
                    cwd=project,
                    env=run_env,
                    memory_bytes=limits.memory_bytes,
                    timeout=limits.timeout,
                )
            if not running:
                continue
            bar.set_postfix_str(", ".join(sorted(running)), refresh=True)
            _wait_for_any(list(running.values()))
            for name in sorted(running):
                child = running[name]
                if not child.poll():
                    continue
                del running[name]
                mod = modules[name]
                assert child.result is not None
                v = classify(
                    child.result,
                    source=mod.source,
                    file=mod.rel,
                    memory_bytes=limits.memory_bytes,
                )
                log = _save_log(log_dir, name, child.result)
                record = _record(mod, keys[name], child.result, v, log)
                if v.status == "passed":
                    if cache is not None:
                        cache.put(keys[name], {**record, "log": None})
                        cache.save()  # after each pass, so an interrupted run keeps its work
                else:
                    failed.add(name)
                decide(name, record)
                sorter.done(name)
    finally:
        for child in running.values():
            child.kill()
        bar.close()

    # Modules built on a cluster may have their .olean files on the workers only: no replay here.
    replay = _replay(
        project,
        toolchain,
        order,
        modules,
        records,
        limits,
        run_env,
        log_dir,
        replay and session is None,
    )
    by_status = {s: 0 for s in STATUSES}
    for record in records.values():
        by_status[record["status"]] += 1
    axioms: dict[str, list[str]] = {}
    guard_hits: dict[str, int] = {}
    for name in order:
        axioms.update(records[name]["axioms"])
        guard_hits.update(records[name]["guard_hits"])
    ok = (
        by_status["passed"] == len(order)
        and (prepare_record is None or prepare_record["status"] == "passed")
        and replay["status"] in ("passed", "not available")
    )
    return {
        "format": RESULT_FORMAT,
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "ok": ok,
        "project": str(project),
        "generated": generated,
        "toolchain": toolchain.to_json(),
        "model_hash": model,
        "limits": {
            "jobs": limits.jobs,
            "memory_bytes": limits.memory_bytes,
            "memory_gib": round(limits.memory_bytes / GIB, 3),
            "memory_cap": "RLIMIT_AS",
            "timeout_seconds": limits.timeout,
        },
        "allowed_axioms": sorted(ALLOWED_AXIOMS),
        "order": order,
        "prepare": prepare_record,
        "replay": replay,
        "shards": {name: records[name] for name in order},
        "axioms": dict(sorted(axioms.items())),
        "guard_hits": dict(sorted(guard_hits.items())),
        "summary": {
            "modules": len(order),
            "passed": by_status["passed"],
            "failed": len(order) - by_status["passed"],
            "cached": sum(1 for r in records.values() if r["cached"]),
            "by_status": by_status,
        },
    }


def _replay(
    project: Path,
    toolchain: Toolchain,
    order: list[str],
    modules: dict[str, Module],
    records: dict[str, dict],
    limits: Limits,
    env: dict[str, str],
    log_dir: Path | None,
    enabled: bool,
) -> dict:
    """Replay every rendered module with the toolchain's olean checker, one at a time.

    ``#print axioms`` in a module sees what the module says; the replay sees what its
    ``.olean`` holds, so a declaration added without the kernel (environment hacking) fails
    here. Runs only when every module passed."""
    checker = find_replay_checker(toolchain.lean, env)
    if checker is None:
        return {"status": "not available", "tool": None, "modules": {}}
    if not enabled or any(records[n]["status"] != "passed" for n in order):
        return {"status": "not run", "tool": checker.name, "modules": {}}
    done: dict[str, dict] = {}
    for name in order:
        result = run_limited(
            [str(toolchain.lake), "env", str(checker), name],
            cwd=project,
            memory_bytes=limits.memory_bytes,
            timeout=limits.timeout,
            env=env,
        )
        v = classify(result, file=modules[name].rel, memory_bytes=limits.memory_bytes)
        status = v.status if v.status != "bad_output" else "passed"
        if result.exit_code not in (0, None) and status == "passed":
            status = "crashed"
        messages = list(v.messages)
        tail = [ln.strip() for ln in result.output.splitlines() if ln.strip()][-1:]
        if status != "passed" and tail and not any(tail[0] in m.text for m in messages):
            # The checker reports a rejection as an uncaught exception, not a Lean message.
            messages.insert(0, Message("error", tail[0]))
        done[name] = {
            "status": status,
            "seconds": result.seconds,
            "peak_mib": result.peak_mib,
            "messages": _trim(messages),
            "log": _save_log(log_dir, f"{name}.replay", result),
        }
    ok = all(r["status"] == "passed" for r in done.values())
    return {"status": "passed" if ok else "failed", "tool": checker.name, "modules": done}


def load_result(path: Path) -> dict:
    """Read a result file written by ``python -m harness lean`` (ValueError if it is not one)."""
    path = Path(path)
    try:
        data = loads_json(read_text(path, MAX_DOCUMENT, "Lean result"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read a Lean result: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != RESULT_FORMAT:
        raise ValueError(f"{path}: not a {RESULT_FORMAT} file")
    return data
