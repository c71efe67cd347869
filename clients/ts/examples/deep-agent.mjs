// A deepagents (npm) agent whose files and skills live in skillsvc.
//
//   node examples/deep-agent.mjs                  # offline: a scripted model
//   node examples/deep-agent.mjs --model anthropic:claude-sonnet-4-5   # a real model (its @langchain package and API key)
//
// The agent sees /workspace (this thread's files), /ticket and the read-only
// /skills library; skillsPromptMiddleware lists the user's skills that fit
// the task in its prompt, and the agent loads one by reading its SKILL.md.
import { parseArgs } from "node:util";

import { AIMessage } from "@langchain/core/messages";
import { createDeepAgent } from "deepagents";

import { SkillsvcClient } from "@skillsvc/client";
import { SkillsvcBackend, skillsPromptMiddleware } from "@skillsvc/client/deepagents";
import { ScriptedChatModel, toolCall } from "./scripted-model.mjs";

const TASK = "Write release notes for these merged changes: export skills as tar.gz; fix the login redirect.";

// What a model would do with TASK: find the skill, read it, write, check.
function scriptedModel() {
  const notes = "## Added\n- Export a skill as a tar.gz archive\n\n## Fixed\n- Fix the redirect after login\n";
  return new ScriptedChatModel([
    toolCall("read_file", "1", { file_path: "/skills/writing/release-notes/SKILL.md" }),
    toolCall("read_file", "2", { file_path: "/skills/writing/release-notes/references/style.md" }),
    toolCall("write_file", "3", { file_path: "/workspace/RELEASE_NOTES.md", content: notes }),
    toolCall("edit_file", "4", { file_path: "/workspace/RELEASE_NOTES.md", old_string: "Fix the redirect", new_string: "Fix the redirect loop" }),
    new AIMessage("Wrote /workspace/RELEASE_NOTES.md following the release-notes skill."),
  ]);
}

const { values: args } = parseArgs({
  options: {
    target: { type: "string", default: "http://127.0.0.1:7070" },
    user: { type: "string", default: "alice" },
    thread: { type: "string", default: "deep-agent-example" },
    model: { type: "string" },
    task: { type: "string", default: TASK },
  },
});

const backend = new SkillsvcBackend({ target: args.target, user: args.user }); // no thread: each run's thread_id
// The skills block in the system prompt holds the skills that fit the task.
const agent = createDeepAgent({ model: args.model ?? scriptedModel(), backend, middleware: [skillsPromptMiddleware(backend)] });
const result = await agent.invoke(
  { messages: [{ role: "user", content: args.task }] },
  { configurable: { thread_id: args.thread } },
);
console.log(result.messages.at(-1).text);

const c = new SkillsvcClient({ target: args.target, user: args.user, thread: args.thread });
console.log("\n--- /workspace/RELEASE_NOTES.md ---");
console.log((await c.readFile({ path: "/workspace/RELEASE_NOTES.md" })).content);
