// skillsvcSkills in the OpenAI Agents SDK's own agent loop (@openai/agents,
// the version package.json pins): its SandboxAgent, its Skills capability
// and load_skill tool, its ScriptedModel and its unix-local sandbox, against
// the real binary on MinIO with default limits. The library is categorized
// (three categories, four skills); one skill has scripts/ with an executable
// file.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";

import { run, setTracingDisabled } from "@openai/agents";
import { SandboxAgent } from "@openai/agents/sandbox";
import { UnixLocalSandboxClient, type UnixLocalSandboxSession } from "@openai/agents/sandbox/local";
import { ScriptedModel, assistantMessage, functionCall, modelResponder } from "@openai/agents/testing";

import { SkillsvcClient } from "@skillsvc/client";
import { skillIndex, skillsvcSkills, type SkillsvcSkillsOptions } from "@skillsvc/client/openai-agents";
import { DESCRIPTIONS, LIBRARY, putLibrary, tree } from "./adapter-library.js";
import { tempDir, testenv, type Env } from "./testenv.js";

let env: Env;
let client: SkillsvcClient;
setTracingDisabled(true); // no exporter: the SDK would warn that it has no API key

before(async () => {
  env = await testenv();
  const admin = new SkillsvcClient({ target: env.target });
  const user = `ts-oa-${randomUUID().slice(0, 8)}`;
  await putLibrary(admin, user);
  client = admin.withIdentity({ user, thread: `ts-oa-${randomUUID().slice(0, 8)}` });
});
after(async () => env?.stop());

interface Loaded {
  model: ScriptedModel;
  workspace: string;
  cacheDir: string;
  toolOutputs: string[];
}

/**
 * One run of the SDK's agent loop: the scripted model calls load_skill with each name, in turn, then answers; check
 * looks at the outcome before the sandbox session (and its workspace) is closed.
 */
async function loadWith(names: string[], opts: SkillsvcSkillsOptions, check: (got: Loaded) => Promise<void>): Promise<void> {
  const cacheDir = await tempDir("skillsvc-oa-cache-");
  const capability = await skillsvcSkills(client, { cacheDir, ...opts });
  // Lazy: nothing is fetched until the model calls load_skill.
  assert.deepEqual(readdirSync(cacheDir), []);
  const model = new ScriptedModel([
    ...names.map((skill_name, i) => [functionCall("load_skill", { skill_name }, { callId: `call-${i}` })]),
    modelResponder(() => [assistantMessage("done")]),
  ]);
  const agent = new SandboxAgent({ name: "skills-user", instructions: "Use the skills.", model, capabilities: [capability] });
  const sandbox = new UnixLocalSandboxClient({ workspaceBaseDir: await tempDir("skillsvc-oa-ws-") });
  const session = (await sandbox.create()) as UnixLocalSandboxSession;
  try {
    const result = await run(agent, "Fill in the form.", { sandbox: { session } });
    assert.equal(result.finalOutput, "done");
    model.assertComplete();
    const toolOutputs = result.newItems
      .filter((i) => i.type === "tool_call_output_item")
      .map((i) => (typeof i.output === "string" ? i.output : JSON.stringify(i.output)));
    await check({ model, workspace: session.state.workspaceRootPath, cacheDir, toolOutputs });
  } finally {
    await session.close?.();
  }
}

test("the SDK lists our skills and loads one lazily, with its files and their modes", async () => {
  await loadWith(["pdf-forms"], {}, async (got) => {
    // The model saw every skill's name and description in the SDK's own skills section, and the SDK's load_skill tool.
    const first = got.model.calls[0].request;
    for (const [name, description] of Object.entries(DESCRIPTIONS)) {
      assert.ok(first.systemInstructions!.includes(`- ${name}: ${description} (file: .agents/${name})`), `${name} in:\n${first.systemInstructions}`);
    }
    assert.match(first.systemInstructions!, /Call `load_skill`/);
    assert.ok(first.tools.some((t) => t.name === "load_skill"));
    assert.match(got.toolOutputs[0], /"status":"loaded"/);

    // The skill's files arrived in the workspace with their modes; no other skill did, and one skill was fetched.
    const want = Object.fromEntries(Object.entries(LIBRARY["docs/pdf-forms"]).map(([rel, f]) => [rel, f.mode]));
    assert.deepEqual(await tree(path.join(got.workspace, ".agents/pdf-forms")), want);
    assert.equal(await readFile(path.join(got.workspace, ".agents/pdf-forms/scripts/fill.sh"), "utf8"), LIBRARY["docs/pdf-forms"]["scripts/fill.sh"].text);
    assert.deepEqual(readdirSync(path.join(got.workspace, ".agents")), ["pdf-forms"]);
    assert.equal(readdirSync(got.cacheDir).filter((n) => !n.startsWith(".")).length, 1);
  });
});

test("a category in skillsvc's own layout; a second load_skill finds it loaded", async () => {
  const index = await skillIndex(client, { category: "docs", layout: "categories" });
  assert.deepEqual(
    index.map((s) => [s.name, s.path]).sort(),
    [["pdf-forms", "docs/pdf-forms"], ["release-notes", "docs/release-notes"]],
  );
  await loadWith(["release-notes", "release-notes"], { category: "docs", layout: "categories" }, async (got) => {
    assert.ok(!got.model.calls[0].request.systemInstructions!.includes("csv-clean"));
    assert.match(got.toolOutputs[0], /"status":"loaded"/);
    assert.match(got.toolOutputs[1], /"status":"already_loaded"/);
    assert.deepEqual(await tree(path.join(got.workspace, ".agents/docs/release-notes")), { "SKILL.md": 0o644 });
    assert.ok(!existsSync(path.join(got.workspace, ".agents/docs/pdf-forms")));
  });
});

test("errors reach the model as tool output: a name not in the index, a skill gone since the listing", async () => {
  const user = `ts-oa-gone-${randomUUID().slice(0, 8)}`;
  const admin = new SkillsvcClient({ target: env.target });
  await admin.putLibraryFile({ path: "misc/ephemeral/SKILL.md", data: Buffer.from("---\nname: ephemeral\ndescription: Soon gone.\n---\nx\n"), user });
  await admin.dropSkillIndex({ user });
  const c = admin.withIdentity({ user, thread: "t1" });
  const capability = await skillsvcSkills(c, { cacheDir: await tempDir("skillsvc-oa-cache-") });
  await admin.deleteLibraryFile({ path: "misc/ephemeral/SKILL.md", user });
  await admin.dropSkillIndex({ user });

  const model = new ScriptedModel([
    [functionCall("load_skill", { skill_name: "nope" }, { callId: "a" })],
    [functionCall("load_skill", { skill_name: "ephemeral" }, { callId: "b" })],
    [assistantMessage("done")],
  ]);
  const agent = new SandboxAgent({ name: "skills-user", instructions: "x", model, capabilities: [capability] });
  const session = await new UnixLocalSandboxClient({ workspaceBaseDir: await tempDir("skillsvc-oa-ws-") }).create();
  try {
    const result = await run(agent, "go", { sandbox: { session } });
    const outputs = result.newItems.filter((i) => i.type === "tool_call_output_item").map((i) => String(i.output));
    // The SDK's own load_skill refuses a name its index lacks, in its own words.
    assert.equal(outputs[0], "An error occurred while running the tool. Please try again.");
    assert.match(outputs[1], /^Error \(NOT_FOUND\): /);
  } finally {
    await session.close?.();
  }
});
