"""The verdict of one Lean build (:func:`classify`: timeout, memory limit, compile error,
``sorry``, a forbidden axiom, crash, unreadable output, passed), and the record of it in
``out/lean/result.json`` (:func:`result_record`, :func:`load_result`).
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, field
from pathlib import Path

from harness.atomic import write_atomic
from harness.bounded import MAX_DOCUMENT, loads_json, read_text
from harness.lean.child import GIB, MAX_MESSAGE_CHARS, MAX_MESSAGES, ChildResult
from harness.lean.modules import Module
from harness.lean.parse import (
    ALLOWED_AXIOMS,
    LeanOutput,
    Message,
    forbidden_axioms,
    parse_output,
    pinned_outputs,
    printed_axiom_targets,
)

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


def trim_messages(messages: list[Message]) -> list[dict]:
    kept = []
    for m in messages[:MAX_MESSAGES]:
        d = m.to_json()
        if len(d["text"]) > MAX_MESSAGE_CHARS:
            d["text"] = d["text"][:MAX_MESSAGE_CHARS] + " [...]"
        kept.append(d)
    if len(messages) > MAX_MESSAGES:
        kept.append(
            Message("info", f"{len(messages) - MAX_MESSAGES} more messages left out").to_json()
        )
    return kept


def result_record(
    mod: Module, key: str, result: ChildResult | None, v: Verdict, log: str | None
) -> dict:
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
        "messages": trim_messages(v.messages),
        "log": log,
    }


def save_log(log_dir: Path | None, stem: str, result: ChildResult) -> str | None:
    if log_dir is None:
        return None
    path = Path(log_dir) / f"{stem}.log"
    header = f"$ {' '.join(result.command)}\n"
    write_atomic(path, (header + result.output).encode("utf-8"))
    return str(path)


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
