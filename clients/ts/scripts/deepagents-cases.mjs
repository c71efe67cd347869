// Lists the backend test cases of a deepagentsjs checkout, and checks that
// test/deepagents-contract.test.ts accounts for each one (as a case it
// restates, or as one it lists as not applying, with the reason).
//
//   node scripts/deepagents-cases.mjs <deepagentsjs git dir or checkout> [commit]
//
// Prints how many upstream cases the contract restates and lists as not
// applying, per file, then the cases it does not account for and the ones it
// names that upstream no longer has; exits 1 when either list is non-empty.
// With LIST=1 it first prints every upstream case, as
// "<file> › <describe…> › <it>".
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

// The upstream files the contract is read from, by the short name the
// contract uses.
export const SOURCES = {
  protocol: "libs/deepagents/src/backends/protocol.test.ts",
  store: "libs/deepagents/src/backends/store.test.ts",
  state: "libs/deepagents/src/backends/state.test.ts",
  filesystem: "libs/deepagents/src/backends/filesystem.test.ts",
  "standard/file-operations": "libs/standard-tests/src/tests/file-operations.ts",
  "standard/write": "libs/standard-tests/src/tests/write.ts",
  "standard/read": "libs/standard-tests/src/tests/read.ts",
  "standard/edit": "libs/standard-tests/src/tests/edit.ts",
  "standard/ls": "libs/standard-tests/src/tests/ls-info.ts",
  "standard/grep": "libs/standard-tests/src/tests/grep-raw.ts",
  "standard/glob": "libs/standard-tests/src/tests/glob-info.ts",
  "standard/integration": "libs/standard-tests/src/tests/integration.ts",
  "standard/lifecycle": "libs/standard-tests/src/tests/lifecycle.ts",
  "standard/command-execution": "libs/standard-tests/src/tests/command-execution.ts",
  "standard/initial-files": "libs/standard-tests/src/tests/initial-files.ts",
};

// The callee of describe("…"), it("…"), it.skipIf(x)("…") and the like.
function kind(callee) {
  while (ts.isCallExpression(callee) || ts.isPropertyAccessExpression(callee)) {
    callee = ts.isCallExpression(callee) ? callee.expression : callee.expression;
  }
  return ts.isIdentifier(callee) ? callee.text : "";
}

/** The cases of one test file, each as its describe titles and its own title. */
export function cases(source) {
  const sf = ts.createSourceFile("t.ts", source, ts.ScriptTarget.Latest, true);
  const out = [];
  const visit = (node, scope) => {
    if (ts.isCallExpression(node) && node.arguments.length > 0) {
      const k = kind(node.expression);
      const [first] = node.arguments;
      const title = ts.isStringLiteralLike(first) ? first.text : ts.isTemplateExpression(first) ? first.getText() : null;
      if (title !== null && (k === "describe" || k === "outerDescribe")) {
        node.arguments.slice(1).forEach((a) => visit(a, [...scope, title]));
        return;
      }
      if (title !== null && (k === "it" || k === "test")) {
        out.push([...scope, title].join(" › "));
        return;
      }
    }
    ts.forEachChild(node, (c) => visit(c, scope));
  };
  visit(sf, []);
  return out;
}

function show(repo, commit, file) {
  return execFileSync("git", ["-C", repo, "show", `${commit}:${file}`], { encoding: "utf8", maxBuffer: 64 << 20 });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [repo, commit = "HEAD"] = process.argv.slice(2);
  if (!repo) {
    console.error("usage: node scripts/deepagents-cases.mjs <deepagentsjs git dir> [commit]");
    process.exit(2);
  }
  const head = execFileSync("git", ["-C", repo, "rev-parse", commit], { encoding: "utf8" }).trim();
  const version = JSON.parse(show(repo, head, "libs/deepagents/package.json")).version;
  console.log(`deepagentsjs ${head} (deepagents ${version})`);
  const upstream = new Set();
  for (const [name, file] of Object.entries(SOURCES)) {
    for (const c of cases(show(repo, head, file))) upstream.add(`${name} › ${c}`);
  }
  if (process.env.LIST) for (const c of upstream) console.log(c);
  // The contract names each upstream case as a string literal "<source> › …".
  const contract = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "../test/deepagents-contract.test.ts"), "utf8");
  // Names inside the notApplicable object are cases that do not apply.
  const named = new Map();
  const sf = ts.createSourceFile("c.ts", contract, ts.ScriptTarget.Latest, true);
  const collect = (n, na) => {
    if (ts.isVariableDeclaration(n) && n.name.getText() === "notApplicable") na = true;
    if (ts.isStringLiteralLike(n) && Object.keys(SOURCES).some((s) => n.text.startsWith(`${s} › `))) {
      if (named.has(n.text) && named.get(n.text) !== na) console.log(`  both applies and not: ${n.text}`);
      named.set(n.text, na);
    }
    ts.forEachChild(n, (c) => collect(c, na));
  };
  collect(sf, false);
  const missing = [...upstream].filter((c) => !named.has(c));
  const gone = [...named.keys()].filter((c) => !upstream.has(c));
  const applies = [...named].filter(([c, na]) => !na && upstream.has(c)).length;
  console.log(`\n${upstream.size} upstream cases: ${applies} restated, ${upstream.size - applies - missing.length} not applicable`);
  for (const name of Object.keys(SOURCES)) {
    const of = [...upstream].filter((c) => c.startsWith(`${name} › `));
    const a = of.filter((c) => named.get(c) === false).length;
    const n = of.filter((c) => named.get(c) === true).length;
    console.log(`  ${name}: ${of.length} cases, ${a} restated, ${n} not applicable`);
  }
  console.log(`not accounted for: ${missing.length}; no longer upstream: ${gone.length}`);
  for (const c of missing) console.log(`  missing: ${c}`);
  for (const c of gone) console.log(`  gone:    ${c}`);
  process.exit(missing.length || gone.length ? 1 : 0);
}
