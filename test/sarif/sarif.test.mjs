// skillctl scan --format sarif, validated against the official SARIF 2.1.0
// JSON schema (sarif-2.1.0-rtm.5, as @microsoft/jest-sarif ships it) with
// ajv, the validator that package uses: over the crafted malicious skills
// of internal/scan/testdata (every kind of result: with and without a
// line, our rules and gitleaks') and a clean library whose paths need URI
// escaping. A broken log is rejected, so the validator is known to bite.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv from "ajv";

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const skillctl = process.env.SKILLCTL_BIN || resolve(here, "../../bin/skillctl");
const malicious = resolve(here, "../../internal/scan/testdata/malicious");

const schema = require("@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json");
// The schema is draft-04, as jest-sarif loads it.
const ajv = new Ajv({ schemaId: "auto", allErrors: true });
ajv.addMetaSchema(require("ajv/lib/refs/json-schema-draft-04.json"));
const validate = ajv.compile(schema);

function run(args) {
  return new Promise((resolve, reject) => {
    execFile(skillctl, args, { timeout: 120_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== "number") return reject(err);
      resolve({ code: err ? err.code : 0, stdout, stderr });
    });
  });
}

function assertValid(log) {
  const ok = validate(log);
  assert.ok(ok, "not valid SARIF 2.1.0:\n" + ajv.errorsText(validate.errors, { separator: "\n" }));
}

test("the crafted malicious skills' SARIF is valid and names each skill's rule", async () => {
  const r = await run(["scan", "--format", "sarif", "--fail-on", "high", malicious]);
  assert.equal(r.code, 1, "high findings fail the scan: " + r.stderr);
  const log = JSON.parse(r.stdout);
  assertValid(log);
  const run0 = log.runs[0];
  const rules = run0.tool.driver.rules;
  for (const res of run0.results) {
    assert.equal(rules[res.ruleIndex].id, res.ruleId);
    assert.ok(["error", "warning", "note"].includes(res.level));
  }
  // Each crafted skill is named for its rule family and kind.
  for (const skill of readdirSync(malicious)) {
    const hits = run0.results.filter((res) => res.locations[0].physicalLocation.artifactLocation.uri.includes(`/${skill}/`));
    assert.ok(hits.length > 0, `no result for ${skill}`);
  }
  const secret = run0.results.find((res) => res.ruleId === "secret/aws-access-token");
  assert.equal(secret?.locations[0].physicalLocation.region.startLine, 3);
  assert.equal(secret.level, "error");
});

test("a clean library's SARIF is valid, its paths escaped", async () => {
  const root = mkdtempSync(join(tmpdir(), "sarif-"));
  try {
    for (const name of ["notes", "csv"]) {
      const dir = join(root, "lib rary", "cat:egory", name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: Keeps ${name} tidy.\n---\n\nAlways keep ${name} tidy.\n`);
    }
    writeFileSync(join(root, "lib rary", "cat:egory", "notes", "odd name #1.md"), "a\u200bb\n");
    const r = await run(["scan", "--format", "sarif", join(root, "lib rary")]);
    assert.equal(r.code, 0, r.stderr);
    const log = JSON.parse(r.stdout);
    assertValid(log);
    const uris = log.runs[0].results.map((res) => res.locations[0].physicalLocation.artifactLocation.uri);
    assert.equal(uris.length, 1, "one low zero-width finding: " + r.stdout);
    assert.match(uris[0], /lib%20rary\/cat:egory\/notes\/odd%20name%20%231\.md$/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the validator rejects a broken log", async () => {
  const r = await run(["scan", "--format", "sarif", "--fail-on", "none", malicious]);
  const log = JSON.parse(r.stdout);
  log.runs[0].results[0].locations[0].physicalLocation.region = { startLine: 0 };
  assert.equal(validate(log), false, "startLine 0 accepted");
  const log2 = JSON.parse(r.stdout);
  log2.runs[0].results[0].level = "high";
  assert.equal(validate(log2), false, "level high accepted");
});
