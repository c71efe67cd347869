// skillsvc as a lazy skill source of the OpenAI Agents SDK for JavaScript
// (@openai/agents 0.20.0: its sandbox Skills capability).
//
//   const agent = new SandboxAgent({
//     name: "assistant", model,
//     capabilities: [await skillsvcSkills(client), shell(), filesystem()],
//   });
//   await run(agent, "Fill in the form", { sandbox: { client: new UnixLocalSandboxClient() } });
//
// The SDK's own capability does the work: it lists the skills (name,
// description, path) in the agent's instructions, gives the model its
// load_skill tool, and copies a skill into the sandbox workspace when the
// model loads it. This module hands it the index from skillsvc's catalog
// (one listing, no download) and, when load_skill names a skill, fetches
// that one skill (materializeSkill: verified, digest-cached) and stages it
// as the SDK's `dir` entry, each file with its mode, just before the SDK's
// own load_skill copies it in.
//
// Why the staging wraps load_skill: in this SDK version `lazyFrom` takes
// only a LocalDirLazySkillSource, whose source is a `dir`, `local_dir` or
// `git_repo` entry that load_skill reads as it stands, with no hook to fetch
// from elsewhere (the Python SDK, 0.24.0, has an abstract LazySkillSource
// whose load_skill a source implements). A `local_dir` copy also drops the
// executable bit, where `file` entries carry `permissions`, so scripts keep
// their modes this way.
import { readFile, readdir, stat } from "node:fs/promises";
import path from "node:path";

import { dir, file, skills, type Dir, type Entry, type SkillIndexEntry, type Skills } from "@openai/agents/sandbox";
import type { FunctionTool, RunContext, Tool } from "@openai/agents";

import type { SkillsvcClient } from "./client.js";
import { SkillsvcError } from "./errors.js";
import { materializeSkill } from "./runner.js";

export interface SkillsvcSkillsOptions {
  /** Only this category's skills; "" only the flat ones; unset: all. */
  category?: string;
  /** A named skill set (scope); empty: the client identity's, if any. */
  scope?: string;
  /**
   * Where skills land in the workspace: "flat" (<skillsPath>/<name>, one folder per skill as the SDK's local sources
   * have it) or "categories" (<skillsPath>/<category>/<name>, skillsvc's own layout). Default "flat".
   */
  layout?: "flat" | "categories";
  /** The workspace folder for skills (the SDK's skillsPath, default ".agents"). */
  skillsPath?: string;
  /** materializeSkill's cache root. */
  cacheDir?: string;
}

/** The skills as the SDK's lazy index: name, description, and the path (under skillsPath) each loads to. */
export async function skillIndex(client: SkillsvcClient, opts: SkillsvcSkillsOptions = {}): Promise<SkillIndexEntry[]> {
  const index: SkillIndexEntry[] = [];
  const req = { scope: opts.scope ?? "", ...(opts.category !== undefined ? { category: opts.category } : {}) };
  for await (const s of client.iterSkills(req)) {
    const folder = opts.layout === "categories" && s.category ? `${s.category}/${s.name}` : s.name;
    index.push({ name: s.name, description: s.description, path: folder });
  }
  return index;
}

/**
 * The SDK's Skills capability over skillsvc's catalog, lazy: the index now, each skill's files when the model calls
 * load_skill. Pass it in a SandboxAgent's capabilities.
 */
export async function skillsvcSkills(client: SkillsvcClient, opts: SkillsvcSkillsOptions = {}): Promise<Skills> {
  const index = await skillIndex(client, opts);
  const capability = skills({
    lazyFrom: { source: dir({ children: {} }), index },
    ...(opts.skillsPath !== undefined ? { skillsPath: opts.skillsPath } : {}),
  });
  const ownTools = capability.tools;
  // An own property, so the SDK's clone() of the capability (one per run) keeps it.
  capability.tools = function (this: Skills): Tool<any>[] {
    const source = this.lazyFrom!.source as Dir;
    return ownTools
      .call(this)
      .map((t) => (t.type === "function" && t.name === "load_skill" ? staging(t, client, index, source, opts.cacheDir) : t));
  };
  return capability;
}

// staging wraps the SDK's load_skill: the named skill is fetched and put in
// the source's children first, then the SDK's own tool runs as it is.
function staging(tool: FunctionTool<any, any, any>, client: SkillsvcClient, index: SkillIndexEntry[], source: Dir, cacheDir?: string): FunctionTool<any, any, any> {
  const invoke = tool.invoke;
  const wrapped = Object.create(Object.getPrototypeOf(tool), Object.getOwnPropertyDescriptors(tool)) as FunctionTool<any, any, any>;
  return Object.defineProperty(wrapped, "invoke", {
    enumerable: true,
    value: async (ctx: RunContext<any>, input: string, details?: any) => {
      const entry = lookup(index, input);
      if (entry && !childAt(source, entry.path!)) {
        try {
          setChild(source, entry.path!, await skillEntry(client, entry.name, cacheDir));
        } catch (err) {
          if (err instanceof SkillsvcError) return `Error (${err.codeName}): ${err.rawMessage}`;
          throw err;
        }
      }
      return invoke.call(tool, ctx, input, details);
    },
  });
}

// lookup finds the index entry load_skill's input names, as the SDK matches
// it (name, path, or the path's last part); anything else is left to the
// SDK's own tool, which reports it.
function lookup(index: SkillIndexEntry[], input: string): SkillIndexEntry | undefined {
  let name: unknown;
  try {
    name = (JSON.parse(input) as { skill_name?: unknown }).skill_name;
  } catch {
    return undefined;
  }
  const hits = index.filter((s) => s.name === name || s.path === name || s.path!.split("/").pop() === name);
  return hits.length === 1 ? hits[0] : undefined;
}

function childAt(source: Dir, rel: string): Entry | undefined {
  let cur: Entry | undefined = source;
  for (const part of rel.split("/")) cur = cur?.type === "dir" ? cur.children?.[part] : undefined;
  return cur;
}

function setChild(source: Dir, rel: string, entry: Entry) {
  const parts = rel.split("/");
  let cur = source;
  for (const part of parts.slice(0, -1)) {
    cur.children ??= {};
    const next = cur.children[part];
    cur = next?.type === "dir" ? next : (cur.children[part] = dir({ children: {} }));
  }
  (cur.children ??= {})[parts[parts.length - 1]] = entry;
}

/**
 * One skill as the SDK's `dir` entry: materialized (verified, from the digest cache when it is there), every file a
 * `file` entry with its content and its mode (0755 for an executable file, else 0644).
 */
export async function skillEntry(client: SkillsvcClient, skill: string, cacheDir?: string): Promise<Dir> {
  const m = await materializeSkill(client, skill, { cacheDir });
  async function build(rel: string): Promise<Dir> {
    const children: Record<string, Entry> = {};
    for (const e of await readdir(path.join(m.dir, rel), { withFileTypes: true })) {
      const p = path.join(m.dir, rel, e.name);
      if (e.isDirectory()) children[e.name] = await build(path.join(rel, e.name));
      else if (e.isFile()) {
        const executable = ((await stat(p)).mode & 0o111) !== 0;
        children[e.name] = file({ content: new Uint8Array(await readFile(p)), permissions: executable ? 0o755 : 0o644 });
      }
    }
    return dir({ children, permissions: 0o755 });
  }
  return build("");
}
