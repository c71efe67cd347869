// Skills for plain model-SDK loops (no agent framework): the FormatSkills
// prompt block, and load_skill / read_skill_file tools in the shapes the
// Anthropic, OpenAI and Gemini SDKs take, with an executor for their calls.
import { boundedQuery, MAX_QUERY_BYTES, type SkillsvcClient } from "./client.js";
import { SkillsvcError } from "./errors.js";
import { toolDefinitions } from "./gen/tool-definitions.js";

export type Style = "anthropic" | "openai" | "openai-responses" | "gemini";

interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The tools' names, descriptions and input schemas: the one definition
 * (internal/tooldefs/tools.json in the repository) that the MCP server's
 * tools are built from too, generated into this package. */
export const DEFINITIONS: ReadonlyArray<{ name: string; description: string; inputSchema: Record<string, unknown> }> =
  toolDefinitions.tools;

function defined(name: string): ToolSpec {
  const t = DEFINITIONS.find((d) => d.name === name);
  if (!t) throw new Error(`no tool ${name} in the tool definitions`);
  return { name: t.name, description: t.description, parameters: t.inputSchema };
}

// The MCP server's list_skills and search_skills have no counterpart here:
// prompt() puts the list in the system prompt instead.
export const LOAD_SKILL: ToolSpec = defined("load_skill");
export const READ_SKILL_FILE: ToolSpec = defined("read_skill_file");

/** One tool in the shape an SDK takes. */
export function definition(tool: ToolSpec, style: Style): Record<string, unknown> {
  switch (style) {
    case "anthropic":
      return { name: tool.name, description: tool.description, input_schema: tool.parameters };
    case "openai":
      return { type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
    case "openai-responses":
      return { type: "function", name: tool.name, description: tool.description, parameters: tool.parameters };
    case "gemini":
      // A @google/genai FunctionDeclaration: parametersJsonSchema takes JSON
      // Schema as is (Gemini's `parameters` is an OpenAPI subset).
      return { name: tool.name, description: tool.description, parametersJsonSchema: tool.parameters };
    default:
      throw new Error(`unknown tool style ${String(style)}`);
  }
}

export interface PromptOptions {
  /** The task or the user's latest message. */
  query?: string;
  /** A named skill set; "" is the client's. */
  scope?: string;
  charBudget?: number;
  format?: string;
  category?: string;
  /** The server's --skills.max-query-bytes (4096). */
  maxQueryBytes?: number;
}

export class SkillTools {
  constructor(readonly client: SkillsvcClient) {}

  /**
   * The skills block for the system prompt, naming load_skill as the way to use a skill. query is the task or the
   * user's latest message, cut to maxQueryBytes (the server's --skills.max-query-bytes): the block then holds the
   * skills most relevant to it. scope names a skill set ("": the client's).
   */
  async prompt(opts: PromptOptions = {}): Promise<string> {
    const { maxQueryBytes = MAX_QUERY_BYTES, query = "", ...rest } = opts;
    const r = await this.client.formatSkills({ ...rest, query: boundedQuery(query, maxQueryBytes) });
    if (!r.included) return "";
    return `${r.text}\n\nTo use a skill, call load_skill with its name first, then follow its instructions.`;
  }

  definitions(style: Style = "anthropic"): Record<string, unknown>[] {
    return [definition(LOAD_SKILL, style), definition(READ_SKILL_FILE, style)];
  }

  handles(name: string): boolean {
    return name === LOAD_SKILL.name || name === READ_SKILL_FILE.name;
  }

  /** Runs a tool call; a failure comes back as text ("Error (NOT_FOUND): ...") so the model can correct itself. */
  async run(name: string, args: Record<string, unknown> | string): Promise<string> {
    const a = (typeof args === "string" ? JSON.parse(args) : args) as Record<string, unknown>;
    if (!this.handles(name)) throw new Error(`${name} is not a skills tool`);
    for (const required of name === LOAD_SKILL.name ? ["skill"] : ["skill", "path"]) {
      if (typeof a[required] !== "string") return `Error (INVALID_ARGUMENT): missing argument '${required}'`;
    }
    try {
      if (name === LOAD_SKILL.name) {
        return (await this.client.renderSkill({ path: a.skill as string, arguments: (a.arguments as string) ?? "" })).text;
      }
      return (await this.client.readSkillFile(a.skill as string, a.path as string)).content;
    } catch (err) {
      const e = SkillsvcError.from(err);
      return `Error (${e.codeName}): ${e.rawMessage}`;
    }
  }
}
