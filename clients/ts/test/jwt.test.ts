// Bearer tokens against the real binary in jwt mode: the identity comes from
// the token the client sends, fresh tokens come from a function, and calls
// without a valid token are refused.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { SkillsvcClient } from "@skillsvc/client";
import { SkillsvcBackend } from "@skillsvc/client/deepagents";
import { code, repoRoot, tempDir, testenv, type Env } from "./testenv.js";

let env: Env;
let secret: string;

// A token from `skillsvc token`, as an operator mints one.
async function mint(secretFile: string, ...args: string[]): Promise<string> {
  const bin = process.env.SKILLSVC_BIN;
  const [cmd, pre] = bin ? [bin, []] : ["go", ["run", "./cmd/skillsvc"]];
  const { stdout } = await promisify(execFile)(cmd, [...pre, "token", `--secret-file=${secretFile}`, ...args], { cwd: repoRoot });
  return stdout.trim();
}

async function secretFile(): Promise<string> {
  const f = path.join(await tempDir("skillsvc-ts-jwt-"), "secret");
  await writeFile(f, randomBytes(32).toString("hex"));
  return f;
}

before(async () => {
  secret = await secretFile();
  env = await testenv(["--auth.mode=jwt", `--auth.jwt.secret-file=${secret}`]);
});
after(async () => env?.stop());

test("the token is the identity", async () => {
  const token = await mint(secret, `--user=${env.user}`, "--thread=ts-jwt");
  let minted = 0;
  // The headers claim another user and thread; the token wins.
  const c = new SkillsvcClient({ target: env.target, user: "mallory", thread: "other", token: () => (minted++, token) });
  await c.writeFile({ path: "/workspace/jwt.md", content: "from a token\n" });
  assert.deepEqual((await c.listSkills()).skills.map((s) => s.name).sort(), ["commit-message", "csv-summary", "release-notes"]);
  assert.equal(minted, 2, "the token function is called for each call");
  const backend = new SkillsvcBackend({ target: env.target, token }); // no thread: the token names it
  assert.equal((await backend.read("/workspace/jwt.md")).content, "from a token");
});

test("refused without a valid token", async () => {
  assert.equal(await code(new SkillsvcClient({ target: env.target, user: env.user, thread: "ts-jwt" }).listCategories()), "UNAUTHENTICATED");
  const forged = await mint(await secretFile(), `--user=${env.user}`, "--thread=ts-jwt");
  assert.equal(await code(new SkillsvcClient({ target: env.target, token: forged }).listCategories()), "UNAUTHENTICATED");
});

test("admin token", async () => {
  const agent = await mint(secret, `--user=${env.user}`, "--thread=ts-jwt");
  assert.equal(await code(new SkillsvcClient({ target: env.target, token: agent }).dropSkillIndex({ user: env.user })), "PERMISSION_DENIED");
  const admin = new SkillsvcClient({ target: env.target, token: await mint(secret, "--admin", "--subject=ops") });
  await admin.dropSkillIndex({ user: env.user });
});
