// Skills for plain model-SDK loops (no agent framework): the FormatSkills
// prompt block, and load_skill / read_skill_file / run_skill_script tools in
// the shapes the Anthropic, OpenAI and Gemini SDKs take, with an executor
// for their calls. run_skill_script runs a skill's script here, on the
// runner (runner.ts), in a scratch copy of the client's thread's /workspace.
// use_skill (code skills) is the Python client's alone: it is not offered.
import { boundedQuery, MAX_QUERY_BYTES, trustLine, type SkillsvcClient } from "./client.js";
import { SkillsvcError } from "./errors.js";
import { toolDefinitions } from "./gen/tool-definitions.js";
import { runSkillScript, ScriptRunError, type RunOptions } from "./runner.js";

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
/** Runs in the client (runsIn "client" in the definition): the MCP server never offers it. */
export const RUN_SKILL_SCRIPT: ToolSpec = defined("run_skill_script");

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

/**
 * How run_skill_script runs scripts: the runner's options a caller may set (see RunOptions). The defaults are safe:
 * sandbox "auto" (bubblewrap where it works), no network, the runner's limits (60 s, 1 MiB of output, 1 GiB of memory).
 */
export type ScriptRunnerOptions = Pick<RunOptions, "sandbox" | "cacheDir" | "interpreters" | "maxOutputBytes" | "memoryBytes" | "network" | "workspace">;

export interface SkillToolsOptions extends ScriptRunnerOptions {
  /** Offer run_skill_script (default true); false: only load_skill and read_skill_file. */
  scripts?: boolean;
  /**
   * End each load_skill result with the skill's trust line (trustLine: signature, scan verdict, who published it), at
   * the cost of a getSkill call per load. Off by default, so the prompt and the results carry only the skill.
   */
  provenance?: boolean;
}

/** The most of a script's output a BAD_OUTPUT error carries back to the model. */
export const BAD_OUTPUT_BYTES = 4096;
/** The longest timeout_seconds run_skill_script takes (its schema's maximum). */
export const MAX_TIMEOUT_SECONDS = 3600;

export class SkillTools {
  /** Whether run_skill_script is offered. */
  readonly scripts: boolean;
  /** Whether load_skill's results end with the skill's trust line. */
  readonly provenance: boolean;
  /** The runner's options for run_skill_script. */
  readonly runner: ScriptRunnerOptions;

  constructor(
    readonly client: SkillsvcClient,
    options: SkillToolsOptions = {},
  ) {
    const { scripts = true, provenance = false, ...runner } = options;
    this.scripts = scripts;
    this.provenance = provenance;
    this.runner = runner;
  }

  private tools(): ToolSpec[] {
    return this.scripts ? [LOAD_SKILL, READ_SKILL_FILE, RUN_SKILL_SCRIPT] : [LOAD_SKILL, READ_SKILL_FILE];
  }

  /**
   * The skills block for the system prompt, naming load_skill as the way to use a skill (and run_skill_script for
   * its scripts, where it is offered). query is the task or the
   * user's latest message, cut to maxQueryBytes (the server's --skills.max-query-bytes): the block then holds the
   * skills most relevant to it. scope names a skill set ("": the client's).
   */
  async prompt(opts: PromptOptions = {}): Promise<string> {
    const { maxQueryBytes = MAX_QUERY_BYTES, query = "", ...rest } = opts;
    const r = await this.client.formatSkills({ ...rest, query: boundedQuery(query, maxQueryBytes) });
    if (!r.included) return "";
    const text = `${r.text}\n\nTo use a skill, call load_skill with its name first, then follow its instructions.`;
    return this.scripts ? `${text} Run a script the instructions name with run_skill_script; files it writes appear in /workspace.` : text;
  }

  /** The tools offered, in the shape of an SDK: load_skill, read_skill_file and (unless scripts is false) run_skill_script. */
  definitions(style: Style = "anthropic"): Record<string, unknown>[] {
    return this.tools().map((t) => definition(t, style));
  }

  handles(name: string): boolean {
    return this.tools().some((t) => t.name === name);
  }

  /**
   * Runs a tool call; a failure comes back as text ("Error (NOT_FOUND): ...") so the model can correct itself.
   * run_skill_script answers compact JSON: {"exit_code", "output", "written"} for a script of the JSON contract,
   * {"exit_code", "stdout", "stderr", "written"} for one with plain arguments ("written": the /workspace paths it
   * wrote, relative to /workspace, sorted); a failed run is "Error (KIND): ..." with KIND one of SCRIPT_NOT_FOUND,
   * SCRIPT_OUTSIDE_SKILL, UNKNOWN_INTERPRETER, BAD_OUTPUT, TIMEOUT, OUTPUT_TOO_LARGE, WORKSPACE_TOO_LARGE,
   * SANDBOX_UNAVAILABLE.
   */
  async run(name: string, args: Record<string, unknown> | string): Promise<string> {
    const a = (typeof args === "string" ? JSON.parse(args) : args) as Record<string, unknown>;
    if (!this.handles(name)) throw new Error(`${name} is not a skills tool`);
    const required = name === LOAD_SKILL.name ? ["skill"] : name === READ_SKILL_FILE.name ? ["skill", "path"] : ["skill", "script"];
    for (const r of required) {
      if (typeof a[r] !== "string") return `Error (INVALID_ARGUMENT): missing argument '${r}'`;
    }
    try {
      if (name === LOAD_SKILL.name) {
        const text = (await this.client.renderSkill({ path: a.skill as string, arguments: (a.arguments as string) ?? "" })).text;
        if (!this.provenance) return text;
        const p = (await this.client.getSkill(a.skill as string)).provenance;
        return p ? `${text.replace(/\n+$/, "")}\n\n${trustLine(p)}` : text;
      }
      if (name === READ_SKILL_FILE.name) return (await this.client.readSkillFile(a.skill as string, a.path as string)).content;
      return await this.runScript(a);
    } catch (err) {
      if (err instanceof ScriptRunError) return scriptErrorText(err);
      const e = SkillsvcError.from(err);
      return `Error (${e.codeName}): ${e.rawMessage}`;
    }
  }

  private async runScript(a: Record<string, unknown>): Promise<string> {
    const bad = (why: string) => `Error (INVALID_ARGUMENT): ${why}`;
    const { args, json_args: jsonArgs, timeout_seconds: timeout } = a;
    if (args !== undefined && jsonArgs !== undefined) return bad("pass args or json_args, not both");
    if (args !== undefined && (!Array.isArray(args) || args.some((x) => typeof x !== "string"))) return bad("args must be a list of strings");
    if (jsonArgs !== undefined && (jsonArgs === null || typeof jsonArgs !== "object" || Array.isArray(jsonArgs))) return bad("json_args must be an object");
    if (timeout !== undefined && (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 0 || timeout > MAX_TIMEOUT_SECONDS)) {
      return bad(`timeout_seconds must be a whole number from 0 to ${MAX_TIMEOUT_SECONDS}`);
    }
    const r = await runSkillScript(this.client, a.skill as string, a.script as string, {
      ...this.runner,
      jsonArgs,
      args: jsonArgs === undefined ? ((args as string[] | undefined) ?? []) : undefined,
      timeoutMs: timeout ? timeout * 1000 : undefined,
    });
    const written = r.written.map((p) => p.replace(/^\/workspace\//, "")).sort();
    if (r.output !== undefined) return JSON.stringify({ exit_code: r.exitCode, output: r.output, written });
    return JSON.stringify({ exit_code: r.exitCode, stdout: r.stdout, stderr: r.stderr, written });
  }
}

/**
 * A failed run as a tool result, as the Python client words it: "Error (KIND): message", the runner's kind as KIND
 * (ScriptNotFound: SCRIPT_NOT_FOUND). BAD_OUTPUT goes on with the output: a line "stdout: " and stdout (with a line
 * end added if it has none), "stderr: " and stderr, cut to BAD_OUTPUT_BYTES in all.
 */
export function scriptErrorText(err: ScriptRunError): string {
  let text = `Error (${kindName(err.kind)}): ${err.rawMessage}`;
  if (err.kind === "BadOutput") {
    let out = `stdout: ${err.stdout}`;
    out += `${out.endsWith("\n") ? "" : "\n"}stderr: ${err.stderr}`;
    text += `\n${cut(out, BAD_OUTPUT_BYTES)}`;
  }
  return text;
}

/** A runner error's kind as tools name it: ScriptNotFound is SCRIPT_NOT_FOUND. */
export function kindName(kind: string): string {
  return kind.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

// cut keeps the first max bytes of text, on a character boundary.
function cut(text: string, max: number): string {
  const b = Buffer.from(text, "utf8");
  if (b.length <= max) return text;
  let end = max;
  while (end > 0 && (b[end] & 0xc0) === 0x80) end--;
  return b.subarray(0, end).toString("utf8");
}
