// The example runs as a user would run it, against the real service.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { SkillsvcClient } from "@skillsvc/client";
import { testenv, type Env } from "./testenv.js";

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

let env: Env;
before(async () => {
  env = await testenv();
});
after(async () => env?.stop());

test("deep-agent example", async () => {
  const thread = `ex-${randomUUID().slice(0, 8)}`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["examples/deep-agent.mjs", "--target", env.target, "--user", env.user, "--thread", thread],
    { cwd: pkg, timeout: 120_000 },
  );
  assert.match(stdout, /following the release-notes skill/);
  const notes = (await new SkillsvcClient({ target: env.target, user: env.user, thread }).readFile({ path: "/workspace/RELEASE_NOTES.md" })).content;
  assert.ok(notes.startsWith("## Added") && notes.includes("Fix the redirect loop"), notes);
  assert.ok(stdout.includes(notes));
});
