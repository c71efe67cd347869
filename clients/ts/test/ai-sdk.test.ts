// The Vercel AI SDK adapters against the real binary on MinIO with default
// limits, with the packages package.json pins: bash-tool's skill toolkit
// (experimental_createSkillTool) over our categorized library, in the `ai`
// package's own agent loop (generateText with its MockLanguageModelV4 as the
// scripted model), and the `ai` package's uploadSkill to a scripted
// provider skills API.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";

import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";

import { SkillsvcClient } from "@skillsvc/client";
import { DIRECTORY_MARKER, skillsvcSkillTool, uploadSkillsvcSkill, writeSkillsDirectory } from "@skillsvc/client/ai-sdk";
import { DESCRIPTIONS, LIBRARY, putLibrary, tree } from "./adapter-library.js";
import { tempDir, testenv, type Env } from "./testenv.js";

let env: Env;
let client: SkillsvcClient;

before(async () => {
  env = await testenv();
  const admin = new SkillsvcClient({ target: env.target });
  const user = `ts-ai-${randomUUID().slice(0, 8)}`;
  await putLibrary(admin, user);
  client = admin.withIdentity({ user, thread: `ts-ai-${randomUUID().slice(0, 8)}` });
});
after(async () => env?.stop());

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

test("bash-tool's skill tool lists our skills and loads one in the AI SDK's loop, files with their modes", async () => {
  const directory = path.join(await tempDir("skillsvc-ai-"), "skills");
  const toolkit = await skillsvcSkillTool(client, { directory, cacheDir: await tempDir("skillsvc-ai-cache-") });
  assert.deepEqual(toolkit.skills.map((s) => [s.name, s.description]).sort(), Object.entries(DESCRIPTIONS).sort());

  // The scripted model calls the skill tool once, then answers.
  const call = { type: "tool-call" as const, toolCallId: "c1", toolName: "skill", input: JSON.stringify({ skillName: "pdf-forms" }) };
  const model = new MockLanguageModelV4({
    doGenerate: [
      { content: [call], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] },
      { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
    ],
  });
  const result = await generateText({ model, tools: { skill: toolkit.skill }, prompt: "Fill in the form.", stopWhen: isStepCount(3) });
  assert.equal(result.text, "done");

  // The model saw every skill's name and description in the skill tool's description.
  const tools = model.doGenerateCalls[0].tools ?? [];
  const skillTool = tools.find((t) => t.name === "skill");
  assert.ok(skillTool && skillTool.type === "function", JSON.stringify(tools));
  for (const [name, description] of Object.entries(DESCRIPTIONS)) {
    assert.ok(skillTool.description!.includes(`skill(${JSON.stringify(name)}): ${description}`), skillTool.description);
  }
  // The skill tool's result: the body of SKILL.md and the skill's other files.
  const out = result.steps[0].toolResults[0].output as { success: boolean; instructions: string; files: string[]; skill: { path: string } };
  assert.equal(out.success, true, JSON.stringify(out));
  assert.equal(out.instructions, "Run scripts/fill.sh FORM.");
  assert.deepEqual([...out.files].sort(), ["references/fields.md", "scripts/fill.sh"]);
  assert.equal(out.skill.path, "./skills/pdf-forms");

  // The files arrived with their modes in the folder bash-tool read, and as text for its sandbox.
  const skillDir = toolkit.skills.find((s) => s.name === "pdf-forms")!.localPath;
  assert.equal(skillDir, path.join(directory, "pdf-forms"));
  assert.deepEqual(await tree(skillDir), Object.fromEntries(Object.entries(LIBRARY["docs/pdf-forms"]).map(([rel, f]) => [rel, f.mode])));
  assert.equal(toolkit.files["./skills/pdf-forms/scripts/fill.sh"], LIBRARY["docs/pdf-forms"]["scripts/fill.sh"].text);
});

test("the skills folder: a category, replaced on the next write, a foreign folder refused", async () => {
  const directory = await tempDir("skillsvc-ai-dir-");
  const cacheDir = await tempDir("skillsvc-ai-cache-");
  assert.deepEqual((await writeSkillsDirectory(client, directory, { category: "docs", cacheDir })).sort(), ["pdf-forms", "release-notes"]);
  assert.deepEqual((await readdir(directory)).sort(), [DIRECTORY_MARKER, "pdf-forms", "release-notes"]);
  // A second write replaces the folder whole: what the library no longer lists goes.
  assert.deepEqual(await writeSkillsDirectory(client, directory, { category: "data", cacheDir }), ["csv-clean"]);
  assert.deepEqual((await readdir(directory)).sort(), [DIRECTORY_MARKER, "csv-clean"]);
  assert.ok(!existsSync(path.join(directory, "pdf-forms")));

  const foreign = await tempDir("skillsvc-ai-foreign-");
  await mkdir(path.join(foreign, "mine"));
  await writeFile(path.join(foreign, "mine", "keep.txt"), "x");
  await assert.rejects(writeSkillsDirectory(client, foreign, { cacheDir }), /not written by writeSkillsDirectory/);
  assert.ok(existsSync(path.join(foreign, "mine", "keep.txt")));
});

test("uploadSkill: one skill's files to a provider's skills API", async () => {
  const calls: { files: { path: string; data: unknown }[]; displayTitle?: string }[] = [];
  const api = {
    specificationVersion: "v4" as const,
    provider: "scripted",
    async uploadSkill(params: { files: { path: string; data: unknown }[]; displayTitle?: string }) {
      calls.push(params);
      return { providerReference: { scripted: "skill-1" }, displayTitle: params.displayTitle, name: "pdf-forms", warnings: [] };
    },
  };
  const got = await uploadSkillsvcSkill(client, "pdf-forms", { api, cacheDir: await tempDir("skillsvc-ai-cache-") });
  assert.deepEqual(got.providerReference, { scripted: "skill-1" });
  assert.equal(calls.length, 1);
  assert.equal(calls[0].displayTitle, "pdf-forms");
  const sent = Object.fromEntries(
    calls[0].files.map((f) => {
      const d = f.data as { type: string; data: Uint8Array };
      assert.equal(d.type, "data");
      return [f.path, Buffer.from(d.data).toString()];
    }),
  );
  assert.deepEqual(sent, Object.fromEntries(Object.entries(LIBRARY["docs/pdf-forms"]).map(([rel, f]) => [rel, f.text])));
});
