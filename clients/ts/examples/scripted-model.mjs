// A scripted chat model for running agents without a model provider: the
// examples' offline mode and the package's tests use it. It answers with the
// given messages in order (tool calls included) and records what it was
// sent. It is no part of the published package (dist): only the examples
// and tests need it.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";

export class ScriptedChatModel extends BaseChatModel {
  /** @type {import("@langchain/core/messages").BaseMessage[][]} */
  seen = [];
  #script;

  /** @param {AIMessage[]} script */
  constructor(script) {
    super({});
    this.#script = [...script];
  }

  _llmType() {
    return "scripted";
  }

  // The script already says which tools to call.
  bindTools() {
    return this;
  }

  async _generate(messages) {
    this.seen.push([...messages]);
    const next = this.#script.shift();
    if (!next) throw new Error("the script ran out of turns");
    return { generations: [{ text: typeof next.content === "string" ? next.content : "", message: next }] };
  }
}

/** A model turn that calls one tool. */
export function toolCall(name, id, args) {
  return new AIMessage({ content: "", tool_calls: [{ name, id, args, type: "tool_call" }] });
}
