// The skill script runner against the real binary on MinIO: what this client
// adds to the contract (the skill's timeout, a venv's python, the cache); the
// contract's own cases are the runners' shared fixture, in
// runner-conformance.test.ts. A skill "runner-test" is uploaded for a user of
// its own and materialized into a cache of the test's.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { appendFile, chmod, readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";

import { Code, ManifestMismatchError, SkillsvcClient, SkillsvcError, probeBwrap, type RunOptions } from "@skillsvc/client";
import { repoRoot, tempDir, testenv, type Env } from "./testenv.js";

const SKILL: Record<string, string> = {
  "SKILL.md": "---\nname: runner-test\ndescription: Scripts for the runner's tests.\n---\nRun the scripts.\n",
  // JSON contract: echoes what it got, and its environment's names.
  "scripts/echo.py": `import json, os, sys
arg = sys.argv[1]
stdin = sys.stdin.read()
print(json.dumps({"args": json.loads(arg), "stdin_equal": stdin == arg, "argc": len(sys.argv),
                  "env": dict(os.environ), "cwd": os.getcwd()}))
`,
  "scripts/tool": '#!/usr/bin/env python3\nimport sys\nprint("tool", *sys.argv[1:])\n',
  "scripts/which.js": "console.log(JSON.stringify({ node: process.execPath }));\n",
};

let env: Env;
let base: SkillsvcClient;
let user: string;
let cacheDir: string;
const bwrap = probeBwrap();
const required = process.env.SKILLSVC_REQUIRE_SERVERS === "1";

before(async () => {
  env = await testenv();
  const admin = new SkillsvcClient({ target: env.target });
  user = `ts-run-${randomUUID().slice(0, 8)}`;
  for (const [rel, content] of Object.entries(SKILL)) await admin.putLibraryFile({ path: `runner-test/${rel}`, data: Buffer.from(content), user });
  // A per-skill timeout in the frontmatter's metadata.
  await admin.putLibraryFile({ path: "runner-slow/SKILL.md", data: Buffer.from('---\nname: runner-slow\ndescription: Slow.\nmetadata:\n  timeout: "7"\n---\nSlow.\n'), user });
  await admin.putLibraryFile({ path: "runner-slow/scripts/t.sh", data: Buffer.from('echo "$SKILL_TIMEOUT"\n'), user });
  await admin.dropSkillIndex({ user });
  base = admin.withIdentity({ user });
  cacheDir = await tempDir("skillsvc-cache-");
});
after(async () => env?.stop());

const client = () => base.withIdentity({ thread: `ts-run-${randomUUID().slice(0, 12)}` });
const run = (c: SkillsvcClient, script: string, opts: RunOptions = {}) => c.runSkillScript("runner-test", script, { cacheDir, ...opts });

// The bwrap cases fail, never skip, when the suite must run everything.
function needBwrap(t: { skip: (msg: string) => void }): boolean {
  if (bwrap) return true;
  if (required) assert.fail("bubblewrap is not available (apt-get install -y bubblewrap): the confinement tests cannot run");
  t.skip("bubblewrap not available");
  return false;
}

test("timeout: the skill's metadata, the run's option over it", async () => {
  const c = client();
  assert.equal((await c.runSkillScript("runner-slow", "t.sh", { cacheDir })).stdout, "7\n");
  assert.equal((await c.runSkillScript("runner-slow", "t.sh", { cacheDir, timeoutMs: 5000 })).stdout, "5\n");
  // A given timeout is positive: 0 is refused, as in Python, not a run killed at once.
  for (const timeoutMs of [0, -1, Number.NaN]) {
    await assert.rejects(c.runSkillScript("runner-slow", "t.sh", { cacheDir, timeoutMs }), (e: SkillsvcError) => e.code === Code.InvalidArgument);
    await assert.rejects(c.runCommand("true", { cacheDir, timeoutMs }), (e: SkillsvcError) => e.code === Code.InvalidArgument);
  }
});

test("a venv's python under bwrap", async (t) => {
  // The venv and its base interpreter live outside /usr: both are bound.
  const venv = process.env.VIRTUAL_ENV || path.join(repoRoot, ".venv");
  if (!existsSync(path.join(venv, "bin/python"))) return t.skip(`no venv at ${venv}`);
  if (!needBwrap(t)) return;
  const r = await run(client(), "echo.py", { jsonArgs: { v: 1 }, sandbox: "bwrap", interpreters: { ".py": path.join(venv, "bin/python") } });
  assert.deepEqual([r.exitCode, r.output!.args], [0, { v: 1 }], r.stderr);
});

test("materialize: cached by digest, verified, altered copies fetched again", async () => {
  const dir = await tempDir("skillsvc-cache-");
  const c = client();
  const first = await c.materializeSkill("runner-test", { cacheDir: dir });
  assert.equal(first.fetched, true);
  assert.equal(first.bytes, Object.values(SKILL).reduce((n, s) => n + Buffer.byteLength(s), 0));
  assert.equal(first.dir, path.join(dir, first.digest.replace("sha256:", "")));
  for (const [rel, content] of Object.entries(SKILL)) assert.equal(readFileSync(path.join(first.dir, rel), "utf8"), content);
  // Modes as exported (scripts executable), made read-only.
  assert.equal(statSync(path.join(first.dir, "scripts/tool")).mode & 0o777, 0o555);
  assert.equal(statSync(path.join(first.dir, "SKILL.md")).mode & 0o777, 0o444);

  const second = await client().materializeSkill("runner-test", { cacheDir: dir });
  assert.deepEqual([second.fetched, second.bytes, second.dir], [false, 0, first.dir]);

  // A cached copy is checked by size on use (not by hash): one altered is fetched again.
  const altered = path.join(first.dir, "SKILL.md");
  await chmod(altered, 0o644);
  await appendFile(altered, "tampered\n");
  const third = await c.materializeSkill("runner-test", { cacheDir: dir });
  assert.equal(third.fetched, true);
  assert.equal(await readFile(altered, "utf8"), SKILL["SKILL.md"]);

  // Two threads at once on an empty cache: one copy is published, the other uses it.
  const fresh = await tempDir("skillsvc-cache-");
  const both = await Promise.all([client(), client()].map((t) => t.materializeSkill("runner-test", { cacheDir: fresh })));
  assert.equal(both[0].dir, both[1].dir);
  assert.deepEqual(both.map((m) => m.fetched).sort(), [false, true]);
  assert.deepEqual(readdirSync(fresh), [path.basename(both[0].dir)]); // no temp folder left

  // Missing skill: the client's normal error.
  await assert.rejects(c.materializeSkill("no-such-skill", { cacheDir: dir }), (e: SkillsvcError) => e.code === Code.NotFound);
});

test("materialize: an export other than the manifest is ABORTED (fetch again), as in Go and Python, nothing kept", async () => {
  const dir = await tempDir("skillsvc-cache-");
  const c = client();
  // As when the skill changed between getSkill and the fetch: the export is another skill's.
  const exportSkill = c.exportSkill.bind(c);
  c.exportSkill = async (_skill, ...rest: Parameters<SkillsvcClient["exportSkill"]> extends [unknown, ...infer R] ? R : never) => exportSkill("runner-slow", ...rest);
  await assert.rejects(c.materializeSkill("runner-test", { cacheDir: dir }), (e: SkillsvcError) => e instanceof ManifestMismatchError && e.code === Code.Aborted && /does not match its manifest/.test(e.message));
  assert.deepEqual(readdirSync(dir), []);
});

test("a .js script runs with node from the lookup path, as in Go and Python, not this process's own node", async () => {
  // This process's node made a stand-in that says so: the runner used it before.
  const dir = await tempDir("skillsvc-own-node-");
  const own = path.join(dir, "own-node");
  writeFileSync(own, '#!/bin/sh\necho \'{"node": "this process\'"\'"\'s own"}\'\n', { mode: 0o755 });
  const real = process.execPath;
  process.execPath = own;
  try {
    const r = await run(client(), "which.js", { sandbox: "none" }); // bwrap would hide the stand-in in /tmp
    assert.equal(r.exitCode, 0, r.stderr);
    const node = JSON.parse(r.stdout).node;
    assert.notEqual(node, "this process's own");
    assert.equal(path.basename(node), "node");
  } finally {
    process.execPath = real;
  }
});
