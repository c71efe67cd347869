// SkillsvcBackend against the real binary: every BackendProtocolV2 method,
// and a deepagents agent driven by a scripted model that loads a skill and
// lists, reads, writes and edits files in the service.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";

import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { createDeepAgent } from "deepagents";

import { SkillsvcClient } from "@skillsvc/client";
import { SkillsvcBackend, skillSources } from "@skillsvc/client/deepagents";
import { ScriptedChatModel, toolCall } from "../examples/scripted-model.mjs";
import { examples, testenv, type Env } from "./testenv.js";

let env: Env;
before(async () => {
  env = await testenv();
});
after(async () => env?.stop());

const thread = (p: string) => `${p}-${randomUUID().slice(0, 10)}`;

test("every backend method", async () => {
  const b = new SkillsvcBackend({ target: env.target, user: env.user, thread: thread("ts-be") });

  assert.deepEqual(await b.write("/workspace/notes.md", "alpha\nbeta\ngamma\n"), { path: "/workspace/notes.md", filesUpdate: null });
  assert.equal((await b.write("/workspace/notes.md", "alpha\nbeta\ngamma\n")).error, undefined, "write overwrites");
  assert.match((await b.write("/skills/x.md", "no")).error ?? "", /^Error writing file '\/skills\/x.md': permission denied/);

  const r = await b.read("/workspace/notes.md", 1, 1);
  assert.deepEqual(r, { content: "beta", mimeType: "text/markdown", totalLines: 3, startLine: 2, endLine: 2, nextOffset: 2 });
  assert.equal((await b.read("/workspace/notes.md")).nextOffset, undefined);
  assert.equal((await b.read("/workspace/missing.md")).error, "File '/workspace/missing.md' not found");
  assert.equal((await b.read("/workspace/notes.md", 10)).error, "Line offset 10 exceeds file length (3 lines)");
  const raw = await b.readRaw("/workspace/notes.md");
  assert.equal(raw.data?.content, "alpha\nbeta\ngamma\n");
  assert.ok(raw.data && "mimeType" in raw.data && raw.data.mimeType === "text/markdown" && raw.data.modified_at);

  assert.deepEqual(await b.edit("/workspace/notes.md", "beta", "BETA"), { path: "/workspace/notes.md", filesUpdate: null, occurrences: 1 });
  assert.equal((await b.edit("/workspace/notes.md", "a", "A", true)).occurrences, 4);
  assert.equal((await b.edit("/workspace/notes.md", "absent", "x")).error, "Error: String not found in file: 'absent'");
  assert.equal((await b.edit("/workspace/none.md", "a", "b")).error, "Error: File '/workspace/none.md' not found");

  const ls = await b.ls("/workspace/");
  assert.deepEqual(ls.files?.map((f) => [f.path, f.is_dir, f.size]), [["/workspace/notes.md", false, 17]]);
  assert.deepEqual((await b.ls("/skills")).files?.map((f) => f.path), ["/skills/data/", "/skills/writing/"]);
  assert.deepEqual(await b.ls("/nowhere"), { files: [] });

  assert.deepEqual((await b.glob("*.md", "/skills/writing")).files, [], "* stays in one directory");
  assert.deepEqual((await b.glob("**/*.md", "/skills/writing")).files?.map((f) => f.path), [
    "/skills/writing/commit-message/SKILL.md",
    "/skills/writing/release-notes/SKILL.md",
    "/skills/writing/release-notes/references/style.md",
  ]);
  assert.deepEqual((await b.glob("/*/SKILL.md", "/skills/data")).files?.map((f) => f.path), ["/skills/data/csv-summary/SKILL.md"]);
  assert.deepEqual((await b.grep("BETA", "/workspace")).matches, [{ path: "/workspace/notes.md", line: 2, text: "BETA" }]);
  assert.equal((await b.grep("name:", "/skills", "SKILL.md")).matches?.length, 3);
  const capped = await b.grep("name:", "/skills", null, 1);
  assert.equal(capped.matches?.length, 1);
  assert.ok(capped.truncated);

  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);
  assert.deepEqual(await b.uploadFiles([["/workspace/logo.png", png], ["/skills/x.png", png], ["/workspace/../x", png]]), [
    { path: "/workspace/logo.png", error: null },
    { path: "/skills/x.png", error: "permission_denied" },
    { path: "/workspace/../x", error: "invalid_path" },
  ]);
  const down = await b.downloadFiles(["/workspace/logo.png", "/workspace/none"]);
  assert.deepEqual(down[0].content, png);
  assert.equal(down[1].error, "file_not_found");
  const bin = await b.read("/workspace/logo.png");
  assert.deepEqual([bin.content, bin.mimeType], [png, "image/png"]);

  assert.deepEqual(await b.delete("/workspace/logo.png"), { path: "/workspace/logo.png", filesUpdate: null });
  assert.equal((await b.delete("/workspace/logo.png")).error, "Error: File '/workspace/logo.png' not found");
  assert.deepEqual(await skillSources(b), ["/skills/data/", "/skills/writing/"]);
});

test("glob matches as deepagentsjs's backends do: * in one directory, ** across, both matching dot-names", async () => {
  const b = new SkillsvcBackend({ target: env.target, user: env.user, thread: thread("ts-glob") });
  for (const p of [".env", "a.yml", ".github/workflows/ci.yml", "src/.hidden.py", "src/main.py"]) {
    assert.equal((await b.write(`/workspace/${p}`, "x")).error, undefined, p);
  }
  const glob = async (pattern: string) => (await b.glob(pattern, "/workspace")).files?.map((f) => f.path.slice("/workspace/".length)).sort();
  assert.deepEqual(await glob("*"), [".env", "a.yml"]);
  assert.deepEqual(await glob("**/*.yml"), [".github/workflows/ci.yml", "a.yml"]);
  assert.deepEqual(await glob("src/*.py"), ["src/.hidden.py", "src/main.py"]);
  assert.deepEqual(await glob("/*.yml"), ["a.yml"], "a leading / anchors at the search path");
});

test("a backend without a thread refuses calls outside a LangGraph run (the agent test runs it inside one)", async () => {
  const b = new SkillsvcBackend({ target: env.target, user: env.user });
  assert.throws(() => b.client(), /no thread/);
});

test("a Deep Agent on skillsvc", async () => {
  const backend = new SkillsvcBackend({ target: env.target, user: env.user });
  const model = new ScriptedChatModel([
    toolCall("ls", "c1", { path: "/skills/writing" }),
    toolCall("read_file", "c2", { file_path: "/skills/writing/release-notes/SKILL.md" }),
    toolCall("read_file", "c3", { file_path: "/skills/writing/release-notes/references/style.md" }),
    toolCall("write_file", "c4", { file_path: "/workspace/RELEASE_NOTES.md", content: "## Added\n- Export skills\n" }),
    toolCall("edit_file", "c5", { file_path: "/workspace/RELEASE_NOTES.md", old_string: "Export skills", new_string: "Export skills as tar.gz" }),
    toolCall("read_file", "c6", { file_path: "/workspace/RELEASE_NOTES.md" }),
    new AIMessage("Release notes written to /workspace/RELEASE_NOTES.md."),
  ]);
  const agent = createDeepAgent({ model, backend, skills: await skillSources(backend) });
  const t = thread("ts-agent");
  const result = await agent.invoke(
    { messages: [{ role: "user", content: "Write release notes for: export skills" }] },
    { configurable: { thread_id: t } },
  );

  const system = model.seen[0][0].text;
  for (const name of ["release-notes", "commit-message", "csv-summary"]) assert.ok(system.includes(name), `${name} in the system prompt`);
  const out = Object.fromEntries(
    result.messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => [m.tool_call_id, m.text]),
  );
  assert.match(out.c1, /release-notes/);
  assert.match(out.c2, /Group the changes under/, "the skill's instructions reached the model");
  assert.match(out.c3, /Thanks to @handle/);
  assert.match(out.c6, /Export skills as tar\.gz/);
  assert.equal(result.messages.at(-1)?.text, "Release notes written to /workspace/RELEASE_NOTES.md.");

  const c = new SkillsvcClient({ target: env.target, user: env.user, thread: t });
  assert.equal((await c.readFile({ path: "/workspace/RELEASE_NOTES.md" })).content, "## Added\n- Export skills as tar.gz");
  assert.ok((await readFile(path.join(examples, "writing/release-notes/SKILL.md"), "utf8")).includes("Group the changes under"));
});
