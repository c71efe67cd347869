// The examples run as a user would run them, against the real service.
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

async function run(example: string, ...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [`examples/${example}`, "--target", env.target, "--user", env.user, ...args], {
    cwd: pkg,
    timeout: 120_000,
  });
  return stdout;
}

test("deep-agent example", async () => {
  const thread = `ex-${randomUUID().slice(0, 8)}`;
  const stdout = await run("deep-agent.mjs", "--thread", thread);
  assert.match(stdout, /following the release-notes skill/);
  const notes = (await new SkillsvcClient({ target: env.target, user: env.user, thread }).readFile({ path: "/workspace/RELEASE_NOTES.md" })).content;
  assert.ok(notes.startsWith("## Added") && notes.includes("Fix the redirect loop"), notes);
  assert.ok(stdout.includes(notes));
});

test("sdk-loop example", async () => {
  const out = await run("sdk-loop.mjs");
  assert.match(out, /\[load_skill\(commit-message\)\]/);
  assert.match(out, /Subject: at most 60 characters/, "the skill's instructions came back from the service");
  assert.match(out, /ARGUMENTS: Write a commit message for: fix the login redirect loop\./);
  assert.ok(out.trimEnd().endsWith("after signing in."));
});
