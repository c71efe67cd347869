// skillctl validate (the server's publishing rules) and skills-ref validate
// (the Agent Skills reference validator) over the sample skill folders of
// samples.json: each tool must say what the sample expects of it, so the
// two agree on every case without a "difference", and where they differ
// the difference is the one written down, with its reason.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const skillctl = process.env.SKILLCTL_BIN || resolve(here, "../../bin/skillctl");
const skillsRef = resolve(here, "node_modules/skills-ref/dist/cli.js");
const { cases } = JSON.parse(readFileSync(join(here, "samples.json"), "utf8"));

// run resolves with the exit code and output; a tool that cannot start
// (missing binary) rejects, failing the test.
function run(cmd, args) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== "number") return reject(err);
      resolve({ code: err ? err.code : 0, out: stdout + stderr });
    });
  });
}

const root = mkdtempSync(join(tmpdir(), "skills-ref-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

function materialize(c, i) {
  const dir = join(root, String(i), c.folder);
  for (const [rel, text] of Object.entries(c.files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

const verdict = (code) => (code === 0 ? "valid" : code === 1 ? "invalid" : `error (exit ${code})`);

cases.forEach((c, i) => {
  test(c.case, async () => {
    const dir = materialize(c, i);
    const ours = await run(skillctl, ["validate", dir]);
    const ref = await run(process.execPath, [skillsRef, "validate", dir]);
    assert.equal(verdict(ours.code), c.skillctl, `skillctl validate:\n${ours.out}`);
    assert.equal(verdict(ref.code), c.skills_ref, `skills-ref validate:\n${ref.out}`);
    if (!c.difference) {
      assert.equal(c.skillctl, c.skills_ref, "a case without a difference must expect the same of both");
    }
  });
});

test("every intended difference says why", () => {
  for (const c of cases) {
    if (c.skillctl !== c.skills_ref) assert.ok(c.difference && c.difference.length > 20, `${c.case}: no reason given`);
  }
});
