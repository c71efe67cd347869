// Types for scripted-model.mjs, which the TypeScript tests import.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessage, BaseMessage } from "@langchain/core/messages";

export declare class ScriptedChatModel extends BaseChatModel {
  readonly seen: BaseMessage[][];
  constructor(script: AIMessage[]);
  _llmType(): string;
  bindTools(): this;
  _generate(messages: BaseMessage[]): Promise<import("@langchain/core/outputs").ChatResult>;
}

/** A model turn that calls one tool. */
export declare function toolCall(name: string, id: string, args: Record<string, unknown>): AIMessage;
