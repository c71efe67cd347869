// The prompt block and the skill tools for plain SDK loops, against the real binary.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";

import { SkillsvcClient } from "@skillsvc/client";
import { DEFINITIONS, SkillTools } from "@skillsvc/client/tools";
import { testenv, type Env } from "./testenv.js";

let env: Env;
let tools: SkillTools;
before(async () => {
  env = await testenv();
  tools = new SkillTools(new SkillsvcClient({ target: env.target, user: env.user, thread: "ts-tools" }));
});
after(async () => env?.stop());

test("prompt", async () => {
  const block = await tools.prompt({ charBudget: 4000 });
  for (const name of ["release-notes", "commit-message", "csv-summary"]) assert.ok(block.includes(name), name);
  assert.match(block, /load_skill/);
  assert.ok((await tools.prompt({ charBudget: 300 })).length < block.length, "the budget bounds the block");
});

test("definitions", () => {
  const anthropic = tools.definitions("anthropic") as Array<{ name: string; description: string; input_schema: { required: string[] } }>;
  assert.deepEqual(anthropic.map((t) => t.name), ["load_skill", "read_skill_file", "run_skill_script"]);
  assert.deepEqual(anthropic[0].input_schema.required, ["skill"]);
  const openai = tools.definitions("openai") as Array<{ type: string; function: { name: string; parameters: unknown } }>;
  assert.equal(openai[0].type, "function");
  assert.deepEqual(openai[0].function.parameters, anthropic[0].input_schema);
  const responses = tools.definitions("openai-responses");
  assert.deepEqual(responses[1], { type: "function", ...openai[1].function });
  assert.deepEqual(tools.definitions("gemini")[0], {
    name: "load_skill",
    description: anthropic[0].description,
    parametersJsonSchema: anthropic[0].input_schema,
  });
  assert.throws(() => tools.definitions("cohere" as never), /unknown tool style/);
});

test("definitions are the shared definition", () => {
  // The one definition the MCP server's tools are built from too (this file is dist-test/tools.test.js).
  const shared = JSON.parse(readFileSync(new URL("../../../internal/tooldefs/tools.json", import.meta.url), "utf8")) as {
    tools: Array<{ name: string; description: string; inputSchema: unknown }>;
  };
  // The copy generated into the package is the repository's definition.
  assert.deepEqual(DEFINITIONS, shared.tools);
  for (const t of tools.definitions("anthropic")) {
    const want = shared.tools.find((d) => d.name === t.name);
    assert.ok(want, String(t.name));
    assert.deepEqual(t, { name: want.name, description: want.description, input_schema: want.inputSchema });
  }
});

test("run", async () => {
  const text = await tools.run("load_skill", { skill: "commit-message", arguments: "fix login" });
  assert.match(text, /Base directory for this skill: \/skills\/writing\/commit-message/);
  assert.match(text, /ARGUMENTS: fix login/);
  // Arguments as the JSON string OpenAI sends.
  const style = await tools.run("read_skill_file", JSON.stringify({ skill: "release-notes", path: "references/style.md" }));
  assert.match(style, /^# Release notes style/);
  assert.match(await tools.run("load_skill", { skill: "no-such-skill" }), /^Error \(NOT_FOUND\)/);
  assert.match(await tools.run("load_skill", {}), /^Error \(INVALID_ARGUMENT\)/);
  assert.ok(tools.handles("load_skill") && !tools.handles("bash"));
  await assert.rejects(tools.run("bash", {}), /not a skills tool/);
});
