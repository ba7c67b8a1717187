// Agreement of the browser engine with the Python transition corpus, record by record:
// the set of legal actions, the next position, the result and the set of branches.
//
// The corpus is POP_CORPUS (a corpus.jsonl file or a folder holding one); when unset it is
// generated with `python -m harness corpus --out <tmp>` (python from $PYTHON, else python3).
// Only when that command does not exist yet do we fall back to sample_corpus.jsonl beside this
// file: records that the Python engine was checked to agree with when they were written.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import {
  applyAction,
  formatAction,
  formatPosition,
  legalActions,
  parseAction,
  parsePosition,
  parseRuleset,
} from "../../../harness/site/static/pop.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../../..");

function locateCorpus(t) {
  const env = process.env.POP_CORPUS;
  if (env) {
    const path = existsSync(env) && statSync(env).isDirectory() ? join(env, "corpus.jsonl") : env;
    if (!existsSync(path)) throw new Error(`POP_CORPUS: no corpus file at ${path}`);
    return { path, source: `POP_CORPUS (${path})` };
  }
  const python = process.env.PYTHON || "python3";
  const out = mkdtempSync(join(tmpdir(), "pop-corpus-"));
  const run = spawnSync(python, ["-m", "harness", "corpus", "--out", out], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 15 * 60 * 1000,
  });
  const path = join(out, "corpus.jsonl");
  if (run.status === 0 && existsSync(path)) {
    return { path, source: "python -m harness corpus", cleanup: () => rmSync(out, { recursive: true }) };
  }
  rmSync(out, { recursive: true, force: true });
  // argparse answers an unknown subcommand with "invalid choice"; anything else is a failure
  // of the corpus command itself and must not be hidden behind the sample.
  const missing = /invalid choice: 'corpus'/.test(run.stderr || "") || /No module named/.test(run.stderr || "");
  if (!missing) {
    throw new Error(
      `python -m harness corpus failed (exit ${run.status}): ${(run.stderr || run.error || "").toString().trim().split("\n").pop()}`,
    );
  }
  t.diagnostic("the corpus command does not exist yet: using sample_corpus.jsonl");
  return { path: join(HERE, "sample_corpus.jsonl"), source: "sample_corpus.jsonl" };
}

function compare(record) {
  const rs = parseRuleset(record.ruleset);
  const pos = parsePosition(rs, record.position);
  const diffs = [];
  const ours = new Set(legalActions(rs, pos).map((a) => formatAction(rs, a)));
  const theirs = new Set(record.actions);
  const onlyOurs = [...ours].filter((a) => !theirs.has(a));
  const onlyTheirs = [...theirs].filter((a) => !ours.has(a));
  if (onlyOurs.length || onlyTheirs.length) {
    diffs.push(`actions: only js ${JSON.stringify(onlyOurs)}, only python ${JSON.stringify(onlyTheirs)}`);
  }
  let out;
  try {
    out = applyAction(rs, pos, parseAction(rs, record.action), record.history || []);
  } catch (e) {
    return [`action ${record.action}: ${e.message}`];
  }
  const next = formatPosition(rs, out.next);
  if (next !== record.next) diffs.push(`next: js '${next}', python '${record.next}'`);
  if (out.result !== record.result) diffs.push(`result: js ${out.result}, python ${record.result}`);
  const ob = new Set(out.branches);
  const tb = new Set(record.branches);
  const bOurs = [...ob].filter((b) => !tb.has(b));
  const bTheirs = [...tb].filter((b) => !ob.has(b));
  if (bOurs.length || bTheirs.length) {
    diffs.push(`branches: only js ${JSON.stringify(bOurs)}, only python ${JSON.stringify(bTheirs)}`);
  }
  return diffs;
}

test("the JS engine agrees with every corpus record", (t) => {
  const corpus = locateCorpus(t);
  try {
    const lines = readFileSync(corpus.path, "utf8").split("\n").filter((l) => l.trim());
    assert.ok(lines.length > 0, `${corpus.source}: no records`);
    const hits = new Map();
    const failures = [];
    let failed = 0;
    lines.forEach((line, i) => {
      const record = JSON.parse(line);
      for (const b of record.branches) hits.set(b, (hits.get(b) || 0) + 1);
      const diffs = compare(record);
      if (diffs.length) {
        failed += 1;
        if (failures.length < 20) {
          failures.push(
            `record ${i + 1}: ${record.ruleset} | ${record.position} | ${record.action}\n    ` +
              diffs.join("\n    "),
          );
        }
      }
    });
    t.diagnostic(`${lines.length} records from ${corpus.source}`);
    t.diagnostic(
      `GUARD_HITS ${[...hits].sort().map(([k, v]) => `${k}=${v}`).join(",")}`,
    );
    assert.equal(failed, 0, `${failed} of ${lines.length} records disagree:\n${failures.join("\n")}`);
  } finally {
    corpus.cleanup?.();
  }
});
