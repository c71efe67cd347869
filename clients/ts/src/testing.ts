// A scripted chat model for running agents without a model provider: the
// tests and the examples' offline mode use it. It answers with the given
// messages in order (tool calls included) and records what it was sent.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

export class ScriptedChatModel extends BaseChatModel {
  readonly seen: BaseMessage[][] = [];
  private readonly script: AIMessage[];

  constructor(script: AIMessage[]) {
    super({});
    this.script = [...script];
  }

  _llmType(): string {
    return "scripted";
  }

  // The script already says which tools to call.
  bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.seen.push([...messages]);
    const next = this.script.shift();
    if (!next) throw new Error("the script ran out of turns");
    return { generations: [{ text: typeof next.content === "string" ? next.content : "", message: next }] };
  }
}

/** A model turn that calls one tool. */
export function toolCall(name: string, id: string, args: Record<string, unknown>): AIMessage {
  return new AIMessage({ content: "", tool_calls: [{ name, id, args, type: "tool_call" }] });
}
