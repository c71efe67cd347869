// Passing the task and a scope: prompt() and skillsPromptMiddleware ask
// FormatSkills for the skills relevant to the task (the real binary
// answers), and every request carries query, scope and the identity's scope
// and harness headers as a server receives them (an in-memory recorder).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";

import { createRouterTransport } from "@connectrpc/connect";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { createDeepAgent } from "deepagents";

import { Code, MAX_QUERY_BYTES, SkillsvcClient, SkillsvcError, admin, boundedQuery, skills } from "@skillsvc/client";
import { SkillsvcBackend, skillsPromptMiddleware, skillsQuery, type SkillsPromptOptions } from "@skillsvc/client/deepagents";
import { SkillTools } from "@skillsvc/client/tools";
import { ScriptedChatModel } from "../examples/scripted-model.mjs";
import { testenv, type Env } from "./testenv.js";

// A small library whose relevant skill comes last in every order that
// ignores the task, and a budget that holds two skills: only a block chosen
// for the task can hold it.
const LIBRARY: Record<string, string> = {
  "api-docs": "Write reference documentation for an HTTP API: endpoints, parameters, examples and error codes.",
  "bug-triage": "Triage incoming bug reports: reproduce, label severity and assign an owner.",
  changelog: "Keep a changelog file up to date with each release's added, changed and fixed entries.",
  "data-cleanup": "Clean a tabular dataset: remove duplicate rows, fix types and fill missing values.",
  "expense-report": "Prepare an expense report from receipts, with totals per category and currency.",
  "vendor-contract-review": "Review a vendor or supplier agreement and flag risky clauses: indemnity, liability caps, auto-renewal.",
};
// What a skill says it runs in, matched against the caller's harness.
const COMPATIBILITY: Record<string, string> = { "bug-triage": "Needs Codex (its gh tool)" };
const TARGET = "vendor-contract-review";
const TASK = "Can you check this supplier agreement for risky indemnity clauses before I sign it?";
const BUDGET = 600;

let env: Env;
let user: string;
before(async () => {
  env = await testenv();
  user = `ts-sel-${randomUUID().slice(0, 8)}`;
  const admin = new SkillsvcClient({ target: env.target });
  for (const [name, description] of Object.entries(LIBRARY)) {
    const compat = COMPATIBILITY[name] ? `compatibility: ${JSON.stringify(COMPATIBILITY[name])}\n` : "";
    const md = `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n${compat}---\nSteps for ${name}.\n`;
    await admin.putLibraryFile({ path: `${name}/SKILL.md`, data: Buffer.from(md), user });
  }
  await admin.dropSkillIndex({ user });
});
after(async () => env?.stop());

test("prompt holds the skill for the task", async () => {
  const tools = new SkillTools(new SkillsvcClient({ target: env.target, user, thread: "t" }));
  const without = await tools.prompt({ charBudget: BUDGET });
  assert.ok(without && !without.includes(TARGET), "the budget must leave the target out of a block chosen without the task");
  assert.ok((await tools.prompt({ charBudget: BUDGET, query: TASK })).includes(TARGET));
  // A message longer than the server takes is cut, not refused.
  assert.ok((await tools.prompt({ charBudget: BUDGET, query: TASK + " ñ".repeat(MAX_QUERY_BYTES) })).includes(TARGET));
});

async function agentSystemPrompt(backend: SkillsvcBackend, opts: SkillsPromptOptions, message: string): Promise<string> {
  const model = new ScriptedChatModel([new AIMessage("Done.")]);
  const agent = createDeepAgent({ model, backend, middleware: [skillsPromptMiddleware(backend, opts)] });
  await agent.invoke({ messages: [{ role: "user", content: message }] }, { configurable: { thread_id: `ts-sel-${randomUUID().slice(0, 8)}` } });
  return model.seen[0][0].text;
}

test("a Deep Agent's skills block fits the latest user message", async () => {
  const backend = new SkillsvcBackend({ target: env.target, user });
  const system = await agentSystemPrompt(backend, { charBudget: BUDGET }, TASK);
  assert.ok(system.includes("## Skills") && system.includes(`/skills/${TARGET}/SKILL.md`), system);
  // Turned off: the block ignores the task; a fixed query wins over the message.
  const off = await agentSystemPrompt(backend, { charBudget: BUDGET, query: false }, TASK);
  assert.ok(off.includes("<available_skills>") && !off.includes(TARGET));
  assert.ok((await agentSystemPrompt(backend, { charBudget: BUDGET, query: TASK }, "Hello.")).includes(TARGET));
});

test("a scope chosen per call or by the client's header narrows listing, block and search; the harness decides compatibility", async () => {
  const operator = new SkillsvcClient({ target: env.target });
  await operator.setSkillScope({ user, scope: { name: "contracts", include: { names: ["vendor-*", "expense-report"] } } });
  const set = await operator.setSkillScope({ user, scope: { name: "codex", compatibility: admin.SkillScopeCompatibility.HARNESS } });
  assert.deepEqual(set.scopes.map((s) => s.name), ["codex", "contracts"]);
  const c = new SkillsvcClient({ target: env.target, user, thread: "t" });
  const names = async (cl: SkillsvcClient, scope?: string) => {
    const out: string[] = [];
    for await (const s of cl.iterSkills({ scope })) out.push(s.name);
    return out.sort();
  };
  try {
    assert.equal((await names(c)).length, Object.keys(LIBRARY).length);
    assert.deepEqual(await names(c, "contracts"), ["expense-report", TARGET]);
    const scoped = c.withIdentity({ scope: "contracts" });
    assert.deepEqual(await names(scoped), ["expense-report", TARGET]);
    const block = await scoped.formatSkills({ query: "release changelog" });
    assert.ok(block.included === 2 && !block.text.includes("changelog"), block.text);
    assert.deepEqual((await c.searchSkills({ query: "changelog", scope: "contracts" })).results, []);
    assert.equal((await c.searchSkills({ query: "changelog" })).results[0].skill?.name, "changelog");
    assert.deepEqual(await names(c.withIdentity({ harness: "codex" }), "codex"), ["bug-triage"]);
    assert.deepEqual(await names(c.withIdentity({ harness: "claude-code", scope: "codex" })), []);
    await assert.rejects(c.listSkills({ scope: "no-such-scope" }), (e) => e instanceof SkillsvcError && e.code === Code.NotFound);
  } finally {
    await operator.deleteSkillScope({ user, name: "contracts" });
    assert.deepEqual((await operator.deleteSkillScope({ user, name: "codex" })).scopes, []);
  }
});

test("boundedQuery cuts on a character boundary", () => {
  assert.equal(boundedQuery("short"), "short");
  assert.equal(boundedQuery("aé", 2), "a", "a character is never cut in two");
  assert.equal(boundedQuery("a😀", 4), "a");
  const long = "ü".repeat(3000); // 6000 bytes
  const cut = boundedQuery(long);
  assert.equal(Buffer.byteLength(cut), MAX_QUERY_BYTES);
  assert.ok(long.startsWith(cut));
  const messages = [new HumanMessage("Earlier question."), new AIMessage("Answer."), new HumanMessage(`  ${long}  `)];
  assert.equal(skillsQuery(messages), cut, "the latest user message, bounded");
  assert.equal(skillsQuery(messages, { query: false }), "");
  assert.equal(skillsQuery(messages, { query: "fixed" }), "fixed");
  assert.equal(skillsQuery([new AIMessage("no user message")]), "");
});

interface Sent {
  method: string;
  message: { query?: string; scope?: string };
  header: Headers;
}

// recording is a client of an in-memory SkillsService that keeps each
// request and its headers as received.
function recording(opts: { scope?: string; harness?: string }): { client: SkillsvcClient; sent: Sent[] } {
  const sent: Sent[] = [];
  const transport = createRouterTransport(({ service }) =>
    service(skills.SkillsService, {
      formatSkills(message, ctx) {
        sent.push({ method: "FormatSkills", message, header: ctx.requestHeader });
        return { text: "<available_skills/>", included: 1 };
      },
      listSkills(message, ctx) {
        sent.push({ method: "ListSkills", message, header: ctx.requestHeader });
        return {};
      },
      searchSkills(message, ctx) {
        sent.push({ method: "SearchSkills", message, header: ctx.requestHeader });
        return {};
      },
    }),
  );
  return { client: new SkillsvcClient({ transport, user: "u", thread: "t", ...opts }), sent };
}

test("requests carry query, scope and the identity's scope and harness", async () => {
  const { client, sent } = recording({ scope: "contracts", harness: "claude-code" });
  await client.formatSkills({ query: TASK, scope: "legal" });
  await client.listSkills({ scope: "legal" });
  await client.searchSkills({ query: "indemnity", scope: "legal" });
  await new SkillTools(client).prompt({ query: "ü".repeat(3000) });
  await client.withIdentity({ scope: undefined }).listSkills();
  const [fmt, list, search, prompt, unscoped] = sent;
  assert.deepEqual([fmt.method, fmt.message.query, fmt.message.scope], ["FormatSkills", TASK, "legal"]);
  assert.deepEqual([list.method, list.message.scope, search.method, search.message.scope], ["ListSkills", "legal", "SearchSkills", "legal"]);
  assert.deepEqual([fmt.header.get("x-skillsvc-scope"), fmt.header.get("x-skillsvc-harness")], ["contracts", "claude-code"]);
  assert.equal(prompt.message.query, "ü".repeat(MAX_QUERY_BYTES / 2));
  assert.deepEqual([unscoped.header.get("x-skillsvc-scope"), unscoped.header.get("x-skillsvc-harness")], [null, "claude-code"]);
});

test("the middleware sends the latest user message, bounded, and its scope", async () => {
  const { client, sent } = recording({ scope: "contracts" });
  const backend = new SkillsvcBackend(client);
  const model = new ScriptedChatModel([new AIMessage("Done.")]);
  const agent = createDeepAgent({ model, backend, middleware: [skillsPromptMiddleware(backend, { scope: "legal" })] });
  const long = `Review this agreement. ${"x".repeat(5000)}`;
  await agent.invoke({
    messages: [
      { role: "user", content: "Earlier question." },
      { role: "assistant", content: "Answer." },
      { role: "user", content: long },
    ],
  });
  const fmt = sent.find((s) => s.method === "FormatSkills");
  assert.ok(fmt);
  assert.deepEqual([fmt.message.query, fmt.message.scope, fmt.header.get("x-skillsvc-scope")], [long.slice(0, MAX_QUERY_BYTES), "legal", "contracts"]);
  assert.ok(model.seen[0][0].text.includes("<available_skills/>"));
});
