// Exact file modes on materialize, against the real binary on MinIO: the
// executable bit recorded by putLibraryFile({mode}) is what materializeSkill
// gives each file (read-only: 0o755 becomes 0o555, 0o644 becomes 0o444),
// checked against the manifest on fetch and on every cache reuse.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import { chmod, readdir } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";

import { Code, SkillsvcClient, SkillsvcError } from "@skillsvc/client";
import { tempDir, testenv, type Env } from "./testenv.js";

// path -> [content, mode given to putLibraryFile]; SKILL.md records none.
const FILES: Record<string, [string, number]> = {
  "SKILL.md": ["---\nname: modes-test\ndescription: Files of mixed modes.\n---\nRun them.\n", 0],
  "scripts/run.sh": ["#!/bin/sh\necho run\n", 0o755],
  "bin/tool": ["#!/bin/sh\necho tool\n", 0o755],
  "scripts/lib.py": ["VALUE = 1\n", 0o644],
  // A shebang does not make a file executable when its mode says otherwise.
  "scripts/not_exec.py": ["#!/usr/bin/env python3\nprint('{}')\n", 0o644],
};
const MODES: Record<string, number> = { "SKILL.md": 0o644, "scripts/run.sh": 0o755, "bin/tool": 0o755, "scripts/lib.py": 0o644, "scripts/not_exec.py": 0o644 };

let env: Env;
let admin: SkillsvcClient;

before(async () => {
  env = await testenv();
  admin = new SkillsvcClient({ target: env.target });
});
after(async () => env?.stop());

// A user of its own with the modes-test skill, and a client on a thread of theirs.
async function upload(): Promise<{ user: string; c: SkillsvcClient }> {
  const user = `ts-modes-${randomUUID().slice(0, 8)}`;
  for (const [rel, [content, mode]] of Object.entries(FILES)) await admin.putLibraryFile({ path: `modes-test/${rel}`, data: Buffer.from(content), user, mode });
  await admin.dropSkillIndex({ user });
  return { user, c: admin.withIdentity({ user, thread: `ts-modes-${randomUUID().slice(0, 12)}` }) };
}

function treeModes(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = path.join(e.parentPath, e.name);
    out[path.relative(dir, p).split(path.sep).join("/")] = statSync(p).mode & 0o777;
  }
  return out;
}

const readOnly = (modes: Record<string, number>) => Object.fromEntries(Object.entries(modes).map(([rel, m]) => [rel, m & ~0o222]));

async function manifestModes(c: SkillsvcClient): Promise<Record<string, number>> {
  const s = (await c.getSkill("modes-test")).skill!;
  return Object.fromEntries(s.manifest!.files.map((f) => [f.path.slice(s.path.length + 1), f.mode]));
}

test("materialize: exact modes, a mode-only change fetched, a chmod-ed cache fetched again", async () => {
  const { user, c } = await upload();
  const cacheDir = await tempDir("skillsvc-modes-");
  assert.deepEqual(await manifestModes(c), MODES);
  const first = await c.materializeSkill("modes-test", { cacheDir });
  assert.equal(first.fetched, true);
  assert.deepEqual(treeModes(first.dir), readOnly(MODES));
  assert.equal((await c.materializeSkill("modes-test", { cacheDir })).fetched, false);

  // A mode-only change is new content: a new manifest digest, fetched.
  await admin.putLibraryFile({ path: "modes-test/scripts/lib.py", data: Buffer.from(FILES["scripts/lib.py"][0]), user, mode: 0o755 });
  const changed = { ...MODES, "scripts/lib.py": 0o755 };
  assert.deepEqual(await manifestModes(c), changed);
  const second = await c.materializeSkill("modes-test", { cacheDir });
  assert.equal(second.fetched, true);
  assert.notEqual(second.digest, first.digest);
  assert.deepEqual(treeModes(second.dir), readOnly(changed));

  // A cached copy whose executable bits were changed locally is fetched again, either way round.
  for (const [rel, mode] of [["bin/tool", 0o444], ["scripts/not_exec.py", 0o555]] as const) {
    await chmod(path.join(second.dir, rel), mode);
    const again = await c.materializeSkill("modes-test", { cacheDir });
    assert.deepEqual([again.fetched, again.dir], [true, second.dir]);
    assert.deepEqual(treeModes(again.dir), readOnly(changed));
  }
});

test("materialize: an export whose modes differ from the manifest is refused, nothing kept", async () => {
  const { c } = await upload();
  const cacheDir = await tempDir("skillsvc-modes-");
  // As a broken extractor or server would: bin/tool loses its executable bit.
  const exportSkill = c.exportSkill.bind(c);
  c.exportSkill = async (...args: Parameters<SkillsvcClient["exportSkill"]>) => {
    const folder = await exportSkill(...args);
    await chmod(path.join(folder, "bin/tool"), 0o644);
    return folder;
  };
  await assert.rejects(c.materializeSkill("modes-test", { cacheDir }), (e: SkillsvcError) => e.code === Code.Aborted && /bin\/tool has mode 0o644/.test(e.message));
  assert.deepEqual(await readdir(cacheDir), []);
});
