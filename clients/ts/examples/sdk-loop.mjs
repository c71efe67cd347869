// A plain model-SDK loop with skills from skillsvc: the prompt block in the
// system prompt and a load_skill tool, no agent framework.
//
//   node examples/sdk-loop.mjs                              # offline: a scripted model
//   node examples/sdk-loop.mjs --model claude-sonnet-4-5    # Anthropic (npm install @anthropic-ai/sdk)
import { parseArgs } from "node:util";

import { SkillsvcClient } from "@skillsvc/client";
import { SkillTools } from "@skillsvc/client/tools";

const TASK = "Write a commit message for: fix the login redirect loop.";

// What a model would answer, in the Anthropic Messages shape.
async function* scriptedTurns() {
  yield {
    stop_reason: "tool_use",
    content: [{ type: "tool_use", id: "t1", name: "load_skill", input: { skill: "commit-message", arguments: TASK } }],
  };
  yield {
    stop_reason: "end_turn",
    content: [{ type: "text", text: "Fix login redirect loop\n\nThe redirect sent users back to /login after signing in." }],
  };
}

async function* anthropicTurns(model, system, tools, messages) {
  const { default: Anthropic } = await import("@anthropic-ai/sdk"); // only for --model
  const client = new Anthropic();
  for (;;) yield await client.messages.create({ model, max_tokens: 2048, system, tools, messages });
}

const { values: args } = parseArgs({
  options: {
    target: { type: "string", default: "http://127.0.0.1:7070" },
    user: { type: "string", default: "alice" },
    thread: { type: "string", default: "sdk-loop-example" },
    model: { type: "string" },
  },
});

const skills = new SkillTools(new SkillsvcClient({ target: args.target, user: args.user, thread: args.thread }));
const system = "You are a careful software engineer.\n\n" + (await skills.prompt({ query: TASK, charBudget: 4000 }));
const messages = [{ role: "user", content: TASK }];
const turns = args.model ? anthropicTurns(args.model, system, skills.definitions("anthropic"), messages) : scriptedTurns();
for await (const turn of turns) {
  messages.push({ role: "assistant", content: turn.content });
  if (turn.stop_reason !== "tool_use") {
    console.log(turn.content.filter((b) => b.type === "text").map((b) => b.text).join(""));
    break;
  }
  const results = [];
  for (const block of turn.content.filter((b) => b.type === "tool_use")) {
    const text = await skills.run(block.name, block.input);
    console.log(`[${block.name}(${block.input.skill})] ${text.length} characters:\n${text}\n`);
    results.push({ type: "tool_result", tool_use_id: block.id, content: text });
  }
  messages.push({ role: "user", content: results });
}
