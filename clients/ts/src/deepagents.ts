// SkillsvcBackend: skillsvc as the filesystem of a deepagents (npm) agent.
//
//   const backend = new SkillsvcBackend({ target: "http://127.0.0.1:7070", user: "alice" });
//   const agent = createDeepAgent({ model, backend, middleware: [skillsPromptMiddleware(backend)] });
//   await agent.invoke({ messages: [...] }, { configurable: { thread_id: "t1" } });
//
// skillsPromptMiddleware puts the skills block (FormatSkills) in the system
// prompt before each model call, asking for the skills relevant to the
// user's latest message, so a library of thousands shows the agent the few
// that fit its task. skillSources instead hands the library to deepagents'
// own skills middleware, which lists every skill.
//
// It implements deepagents' BackendProtocolV2 — ls, read, readRaw, write,
// edit, grep, glob, delete, uploadFiles, downloadFiles — and behaves as
// deepagents' own StoreBackend does (an external store, like skillsvc): the
// same results, binary handling by file extension and refusal messages,
// checked by test/deepagents-contract.test.ts against deepagentsjs's own
// backend tests. Without a fixed thread, each call runs as the thread of the
// LangGraph run (configurable.thread_id), as StateBackend reads its state,
// so one backend serves every thread, each as its own identity.
//
// It is also a sandbox backend (SandboxBackendProtocolV2): execute(command)
// runs `bash -c command` on this machine through the skill script runner
// (runner.ts runCommand), in a scratch copy of the thread's /workspace with
// the skills the command names under /skills/ mounted read-only, under
// bubblewrap where it works; what the command writes in /workspace is
// written back. { execute: false } leaves it a plain file backend.
import { Code } from "@connectrpc/connect";
import type { BaseMessage } from "@langchain/core/messages";
import { getConfig } from "@langchain/langgraph";
import type {
  DeleteResult,
  EditResult,
  ExecuteResponse,
  FileDownloadResponse,
  FileInfo,
  FileOperationError,
  FileUploadResponse,
  GlobResult,
  GrepResult,
  LsResult,
  ReadRawResult,
  ReadResult,
  SandboxBackendProtocolV2,
  WriteResult,
} from "deepagents";
import { createMiddleware } from "langchain";

import { boundedQuery, MAX_QUERY_BYTES, SkillsvcClient, type ClientOptions } from "./client.js";
import { SkillsvcError } from "./errors.js";
import { GlobHidden, type FileInfo as PbFileInfo } from "./gen/skillsvc/v1/filesystem_pb.js";
import { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_MS, probeBwrap, runCommand, ScriptRunError, type CommandOptions, type CommandResult } from "./runner.js";
import { kindName } from "./tools.js";

// The most a binary read (and an edit that must look at the whole file)
// loads: deepagents' read_file refuses larger binaries anyway.
const MAX_BINARY_READ = 10 << 20;

export interface BackendOptions {
  /**
   * Where the files deepagents' middleware keeps at the root
   * (/large_tool_results/, /conversation_history/) are stored, as skillsvc
   * has nothing at the root but its mounts: "/workspace" (the default) keeps
   * them in the thread's workspace; null passes their paths on as they are
   * (for a mount table that has such mounts).
   */
  artifacts?: string | null;
  /**
   * Whether the agent can run shell commands, and how (see runner.ts runCommand): the runner's options. sandbox:
   * "auto" (the default) runs them under bubblewrap where it works, and elsewhere offers no execute tool at all, since
   * a command the model writes should not run unconfined unless asked for; "bwrap" fails each command with
   * SANDBOX_UNAVAILABLE where bubblewrap does not work; "none" runs them as plain subprocesses, unconfined (as
   * deepagents' LocalShellBackend), with a warning; or a Sandbox of your own. timeoutMs is the timeout of a call
   * that gives none (60 s); cacheDir, maxOutputBytes, memoryBytes and network as for a script. false: no execute
   * tool (deepagents offers it only to a backend with an id), e.g. for deepagents' filesystem permissions, which
   * it refuses with a backend that runs commands.
   */
  execute?: false | Omit<CommandOptions, "signal" | "workspace">;
}

// The folders deepagents' middleware writes at the root: evicted tool
// results and offloaded conversation history.
const ARTIFACT_ROOTS = ["/large_tool_results", "/conversation_history"];

export class SkillsvcBackend implements SandboxBackendProtocolV2 {
  /** The client as configured; client() gives the one for the current thread. */
  readonly base: SkillsvcClient;
  /** "skillsvc" when it runs commands, else "": deepagents offers its execute tool only to a backend with an id. */
  readonly id: string;
  private readonly artifacts: string | null;
  private readonly runner: Omit<CommandOptions, "signal" | "workspace"> | undefined;
  // Why execute runs nothing, when it does not.
  private readonly noExecute: string;

  constructor(opts: ClientOptions | SkillsvcClient, options: BackendOptions = {}) {
    this.base = opts instanceof SkillsvcClient ? opts : new SkillsvcClient(opts);
    this.artifacts = options.artifacts === undefined ? "/workspace" : options.artifacts && dir(options.artifacts);
    const { sandbox = "auto", ...runner } = options.execute || {};
    if (options.execute === false) {
      this.noExecute = "this backend runs no commands (it was made with { execute: false })";
    } else if (sandbox === "auto" && !probeBwrap()) {
      this.noExecute = 'bubblewrap does not work here, so this backend runs no commands ({ execute: { sandbox: "none" } } runs them unconfined)';
    } else {
      this.noExecute = "";
      if (sandbox === "none") warnUnconfined();
      this.runner = { ...runner, sandbox };
    }
    this.id = this.runner ? "skillsvc" : "";
  }

  /**
   * Runs `bash -c command` in a scratch copy of the thread's /workspace (its working directory, seen as /workspace),
   * with every skill it names by a path under /skills/ materialized and seen read-only there, under the runner's
   * sandbox and limits (no network; timeout: options.timeout seconds, else the backend's, else 60 s). Files it
   * creates or changes in /workspace are written back when it exits by itself. output is stdout then stderr;
   * exitCode is null when the command was killed (timeout, or more than the output cap), and output then ends
   * with a line saying so. A run that cannot start answers "Error (KIND): ...".
   */
  async execute(command: string, options: { timeout?: number } = {}): Promise<ExecuteResponse> {
    const { timeout } = options;
    if (timeout !== undefined && !(typeof timeout === "number" && timeout > 0 && Number.isFinite(timeout))) {
      throw new RangeError(`timeout must be a positive number of seconds (every command here has one), not ${String(timeout)}`);
    }
    if (!this.runner) return { output: `Error: ${this.noExecute}`, exitCode: null, truncated: false };
    const c = this.client();
    const timeoutMs = timeout !== undefined ? timeout * 1000 : (this.runner.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const cap = this.runner.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    let r: CommandResult;
    try {
      r = await runCommand(c, command, { ...this.runner, timeoutMs });
    } catch (err) {
      return { output: commandError(err), exitCode: null, truncated: false };
    }
    const after = (text: string, line: string) => text + (text && !text.endsWith("\n") ? "\n" : "") + line;
    let output = r.stderr ? after(r.stdout, r.stderr) : r.stdout;
    // Each stream is capped by the runner; together they are held to the same cap.
    const bytes = Buffer.from(output, "utf8");
    const truncated = r.truncated || bytes.length > cap;
    if (bytes.length > cap) {
      let end = cap;
      while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // on a character boundary
      output = bytes.subarray(0, end).toString("utf8");
    }
    const seconds = timeoutMs / 1000;
    if (r.timedOut) {
      output = after(output, `[The command was killed after ${seconds} ${seconds === 1 ? "second" : "seconds"}, its timeout; what it wrote in /workspace was not kept.]`);
    } else if (r.truncated) {
      output = after(output, `[The command was killed: its output passed ${cap} bytes; what it wrote in /workspace was not kept.]`);
    }
    return { output, exitCode: r.exitCode, truncated };
  }

  /** The client for the current thread: the fixed one, or the LangGraph run's. */
  client(): SkillsvcClient {
    if (this.base.identity.thread || this.base.identity.token) return this.base;
    let thread: unknown;
    try {
      thread = getConfig()?.configurable?.thread_id;
    } catch {
      thread = undefined; // not inside a LangGraph run
    }
    if (!thread) {
      throw new Error("SkillsvcBackend has no thread: pass thread, or run the agent with { configurable: { thread_id } }");
    }
    return this.base.withIdentity({ thread: String(thread) });
  }

  // path is a path as skillsvc takes it: repeated "/" collapse (as a shell
  // treats them), and the middleware's root folders move under artifacts.
  private path(p: string): string {
    p = p.replace(/\/{2,}/g, "/");
    if (this.artifacts && ARTIFACT_ROOTS.some((r) => p === r || p.startsWith(`${r}/`))) return `${this.artifacts}${p}`;
    return p;
  }

  // shown is a path skillsvc returned, as the caller named it: below a
  // folder the caller asked for by its root name, by that name again.
  private shown(asked: string): (p: string) => string {
    const moved = this.path(asked);
    if (!this.artifacts || moved === asked.replace(/\/{2,}/g, "/")) return (p) => p;
    return (p) => (p.startsWith(`${this.artifacts}/`) ? p.slice(this.artifacts!.length) : p);
  }

  // Error texts follow the tools that show them: read_file prefixes
  // "Error: ", ls "Error listing files: " and glob "Error finding files: ",
  // while write_file, edit_file, delete and grep show the text as it is.

  /** A directory's entries; a missing directory (or a file) lists as empty, as in every deepagents backend. */
  async ls(path: string): Promise<LsResult> {
    const c = this.client();
    const shown = this.shown(path);
    try {
      const files: FileInfo[] = [];
      for await (const e of c.iterList(dir(this.path(path)))) files.push(info(e, shown));
      files.sort((a, b) => a.path.localeCompare(b.path));
      return { files };
    } catch (err) {
      const e = SkillsvcError.from(err);
      if (e.code === Code.NotFound || isNotDir(e)) return { files: [] };
      return { error: reason(e, path) };
    }
  }

  /**
   * Lines offset..offset+limit of a text file; a binary file (by extension,
   * as deepagents decides it) whole, as bytes, whatever offset and limit say.
   */
  async read(filePath: string, offset = 0, limit = 500): Promise<ReadResult> {
    const c = this.client();
    const type = mimeType(filePath);
    if (!isTextMimeType(type)) return this.readBinary(c, filePath, type);
    // As deepagents' normalizeReadPagination: whole, non-negative lines.
    offset = Number.isFinite(offset) ? Math.max(0, Math.floor(offset)) : 0;
    limit = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0;
    try {
      // limit 0 still asks for a line: the file must exist and be text.
      const r = await c.readFile({ path: this.path(filePath), offset: BigInt(offset), limit: BigInt(Math.max(limit, 1)) });
      const total = Number(r.totalLines);
      if (limit === 0 || total === 0) return { content: "", mimeType: type };
      const next = Number(r.nextOffset);
      return {
        content: r.content,
        mimeType: type,
        totalLines: total,
        startLine: offset + 1,
        endLine: next,
        nextOffset: next < total ? next : undefined,
      };
    } catch (err) {
      const e = SkillsvcError.from(err);
      if (isBinary(e)) return this.readBinary(c, filePath, "application/octet-stream");
      if (e.code === Code.NotFound) return { error: `File '${filePath}' not found` };
      if (e.code === Code.OutOfRange) {
        const lines = /\((\d+) lines\)/.exec(e.rawMessage)?.[1];
        return { error: `Line offset ${offset} exceeds file length${lines ? ` (${lines} lines)` : ""}` };
      }
      return { error: `Error reading file '${filePath}': ${reason(e, filePath)}` };
    }
  }

  private async readBinary(c: SkillsvcClient, filePath: string, type: string): Promise<ReadResult> {
    try {
      const data = await bytes(c, this.path(filePath), MAX_BINARY_READ);
      if (!data) return { error: `file too large to read (over ${MAX_BINARY_READ >> 20}MB, the limit for binary files)` };
      return { content: data, mimeType: type };
    } catch (err) {
      const e = SkillsvcError.from(err);
      if (e.code === Code.NotFound) return { error: `File '${filePath}' not found` };
      return { error: `Error reading file '${filePath}': ${reason(e, filePath)}` };
    }
  }

  /** The file as FileData: a string for text, bytes for a binary extension or content that is not UTF-8. */
  async readRaw(filePath: string): Promise<ReadRawResult> {
    const c = this.client();
    const p = this.path(filePath);
    try {
      const [st, data] = await Promise.all([c.stat(p), bytes(c, p)]);
      const modified = timestamp(st.info?.modified);
      let type = mimeType(filePath);
      let content: string | Uint8Array = data!;
      if (isTextMimeType(type)) {
        const text = utf8(data!);
        if (text === undefined) type = "application/octet-stream";
        else content = text;
      }
      return { data: { content, mimeType: type, created_at: modified, modified_at: modified } };
    } catch (err) {
      const e = SkillsvcError.from(err);
      return { error: e.code === Code.NotFound ? `File '${filePath}' not found` : reason(e, filePath) };
    }
  }

  /**
   * Creates or replaces a file. For a binary extension (.png, .pdf, …)
   * content is base64, stored decoded, as deepagents 1.14's backends do.
   */
  async write(filePath: string, content: string): Promise<WriteResult> {
    const c = this.client();
    try {
      if (isTextMimeType(mimeType(filePath))) {
        await c.writeFile({ path: this.path(filePath), content });
      } else {
        const data = decodeBase64(content);
        if (!data) return { error: `Error writing file '${filePath}': content is not base64 (a binary file such as this is written as base64)` };
        await c.upload(this.path(filePath), data);
      }
      return { path: filePath, filesUpdate: null };
    } catch (err) {
      return { error: `Error writing file '${filePath}': ${reason(SkillsvcError.from(err), filePath)}` };
    }
  }

  /**
   * Replaces oldString by newString, as deepagents' performStringReplacement
   * does: an empty oldString sets the content of an empty file, and
   * replacing a string by itself changes nothing but still counts.
   */
  async edit(filePath: string, oldString: string, newString: string, replaceAll = false): Promise<EditResult> {
    const c = this.client();
    const p = this.path(filePath);
    try {
      if (oldString === "" || oldString === newString) return await this.editLocally(c, filePath, oldString, newString, replaceAll);
      const r = await c.edit({ path: p, oldString, newString, replaceAll });
      return { path: filePath, filesUpdate: null, occurrences: Number(r.occurrences) };
    } catch (err) {
      const e = SkillsvcError.from(err);
      if (e.code === Code.NotFound) return { error: `Error: File '${filePath}' not found` };
      if (e.code === Code.FailedPrecondition && /old_string not found/.test(e.rawMessage)) return { error: notFound(oldString) };
      const times = /old_string occurs (\d+) times/.exec(e.rawMessage)?.[1];
      if (e.code === Code.FailedPrecondition && times) return { error: multiple(oldString, Number(times)) };
      return { error: `Error editing file '${filePath}': ${reason(e, filePath)}` };
    }
  }

  // editLocally decides the edits skillsvc's Edit refuses (an empty
  // old_string, or one equal to new_string) from the file's content.
  private async editLocally(c: SkillsvcClient, filePath: string, oldString: string, newString: string, replaceAll: boolean): Promise<EditResult> {
    const p = this.path(filePath);
    if (oldString === "") {
      const { info: st } = await c.stat(p);
      if (!st || st.isDir) return { error: `Error: File '${filePath}' not found` };
      if (st.size > 0n) return { error: "Error: oldString cannot be empty when file has content" };
      // Only while still empty: a concurrent writer's content is not replaced.
      await c.writeFile({ path: p, content: newString, ifMatch: st.etag });
      return { path: filePath, filesUpdate: null, occurrences: 0 };
    }
    const data = await bytes(c, p, MAX_BINARY_READ);
    if (!data) return { error: `Error editing file '${filePath}': the file is larger than ${MAX_BINARY_READ} bytes` };
    const text = utf8(data);
    if (text === undefined) return { error: `Error editing file '${filePath}': not a text file` };
    const n = text.split(oldString).length - 1;
    if (n === 0) return { error: notFound(oldString) };
    if (n > 1 && !replaceAll) return { error: multiple(oldString, n) };
    return { path: filePath, filesUpdate: null, occurrences: n };
  }

  /** Removes a file, or a directory with everything below it. */
  async delete(filePath: string): Promise<DeleteResult> {
    const c = this.client();
    try {
      await c.delete({ path: dir(this.path(filePath)), recursive: true });
      return { path: filePath, filesUpdate: null };
    } catch (err) {
      const e = SkillsvcError.from(err);
      if (e.code === Code.NotFound) return { error: `Error: File '${filePath}' not found` };
      return { error: `Error deleting '${filePath}': ${reason(e, filePath)}` };
    }
  }

  /**
   * The files below path whose path relative to it matches pattern, as
   * deepagentsjs matches them: "*" stays in one directory ("*.md" is the top
   * level only), "**" crosses any number, and both match names starting
   * with "." (micromatch's and fast-glob's dot option, which deepagentsjs
   * sets; deepagents for Python leaves them out). A leading "/" anchors at
   * path, as in FilesystemBackend.
   */
  async glob(pattern: string, path = "/"): Promise<GlobResult> {
    const c = this.client();
    const shown = this.shown(path);
    try {
      const r = await c.glob({ pattern: pattern.replace(/^\/+/, ""), path: dir(this.path(path)), hidden: GlobHidden.INCLUDE });
      const files = r.matches.filter((m) => !m.isDir).map((m) => info(m, shown));
      return r.truncated ? { files, truncated: true } : { files };
    } catch (err) {
      const e = SkillsvcError.from(err);
      if (e.code === Code.NotFound || isNotDir(e)) return { files: [] };
      return { error: reason(e, path) };
    }
  }

  /**
   * Lines containing pattern (literal text). glob filters files by name at
   * any depth, as deepagents matches it against each file's base name; a
   * glob with "/" matches the path relative to path.
   */
  async grep(pattern: string, path: string | null = "/", glob: string | null = null, maxCount: number | null = null): Promise<GrepResult> {
    const c = this.client();
    const shown = this.shown(path ?? "/");
    try {
      const r = await c.grep({
        pattern,
        path: dir(this.path(path ?? "/")),
        glob: glob ? (glob.includes("/") ? glob.replace(/^\/+/, "") : `**/${glob}`) : "",
        maxMatches: maxCount ?? 0,
      });
      let matches = r.matches.map((m) => ({ path: shown(m.path), line: Number(m.line), text: m.text }));
      let truncated = r.truncated;
      if (maxCount != null && matches.length > maxCount) {
        matches = matches.slice(0, maxCount);
        truncated = true;
      }
      return truncated ? { matches, truncated } : { matches };
    } catch (err) {
      const e = SkillsvcError.from(err);
      if (e.code === Code.NotFound) return { matches: [] };
      return { error: `Error: ${reason(e, path ?? "/")}` };
    }
  }

  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    const c = this.client();
    const out: FileUploadResponse[] = [];
    for (const [path, data] of files) {
      try {
        await c.upload(this.path(path), data);
        out.push({ path, error: null });
      } catch (err) {
        out.push({ path, error: fileError(err) });
      }
    }
    return out;
  }

  async downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
    const c = this.client();
    const out: FileDownloadResponse[] = [];
    for (const path of paths) {
      try {
        out.push({ path, content: (await bytes(c, this.path(path)))!, error: null });
      } catch (err) {
        out.push({ path, content: null, error: fileError(err) });
      }
    }
    return out;
  }
}

/**
 * The skill sources for createDeepAgent({ skills }). The skills middleware
 * looks one folder down from a source, and a skillsvc library is
 * /skills/<category>/<skill>/SKILL.md, so each category is a source.
 */
export async function skillSources(from: SkillsvcBackend | SkillsvcClient, mount = "/skills"): Promise<string[]> {
  let c = from instanceof SkillsvcBackend ? from.base : from;
  if (!c.identity.thread && !c.identity.token) c = c.withIdentity({ thread: "skill-sources" });
  const { categories } = await c.listCategories();
  return categories.filter((x) => x.skillCount > 0).map((x) => (x.name ? `${mount}/${x.name}/` : `${mount}/`));
}

/** The skills section skillsPromptMiddleware adds to the system prompt; {skills} is the FormatSkills block. */
export const SKILLS_PROMPT = `## Skills

Skills are folders of instructions, scripts and references for particular tasks. Before acting on a task a skill below fits, read its SKILL.md with read_file (the location shown, limit=1000) and follow it; read the files it names by their absolute paths under its folder.

{skills}`;

export interface SkillsPromptOptions {
  /**
   * What the block is selected for: true (the default), the latest user message, cut to maxQueryBytes on a
   * character boundary, so the block holds the skills most relevant to the task, best first; a string, that fixed
   * task; false, none (the caller's own skills first, then its teams', then the organization's).
   */
  query?: boolean | string;
  /** A named skill set; "" is the backend identity's. */
  scope?: string;
  charBudget?: number;
  maxSkills?: number;
  format?: "" | "xml" | "markdown" | "yaml";
  groupByCategory?: boolean;
  searchTool?: string;
  /** The server's --skills.max-query-bytes (4096). */
  maxQueryBytes?: number;
  /** The section added, with a {skills} slot. */
  systemPrompt?: string;
}

/** The query a block is selected for, given a model request's messages. */
export function skillsQuery(messages: readonly BaseMessage[], opts: Pick<SkillsPromptOptions, "query" | "maxQueryBytes"> = {}): string {
  const { query = true, maxQueryBytes = MAX_QUERY_BYTES } = opts;
  if (typeof query === "string") return boundedQuery(query, maxQueryBytes);
  if (!query) return "";
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].getType() === "human") return boundedQuery(messages[i].text.trim(), maxQueryBytes);
  }
  return "";
}

/**
 * A middleware for createDeepAgent({ middleware: [...] }) that puts the caller's skills block (FormatSkills) in
 * the system prompt before every model call; an empty block adds nothing.
 */
export function skillsPromptMiddleware(backend: SkillsvcBackend, opts: SkillsPromptOptions = {}) {
  const { query, maxQueryBytes, systemPrompt = SKILLS_PROMPT, ...format } = opts;
  if (!systemPrompt.includes("{skills}")) throw new Error("systemPrompt must contain the {skills} slot");
  return createMiddleware({
    name: "SkillsvcSkillsPrompt",
    async wrapModelCall(request, handler) {
      const r = await backend.client().formatSkills({ ...format, query: skillsQuery(request.messages, { query, maxQueryBytes }) });
      if (!r.included) return handler(request);
      const section = systemPrompt.replace("{skills}", r.text);
      return handler({ ...request, systemMessage: request.systemMessage.concat(request.systemMessage.text ? `\n\n${section}` : section) });
    },
  });
}

// dir is a directory argument as skillsvc takes it: deepagents writes
// directories with a trailing "/", skillsvc paths are canonical.
function dir(path: string): string {
  return path.replace(/\/+$/, "") || "/";
}

// bytes downloads a file into a plain Uint8Array (deepagents compares
// content with Uint8Array, which a Node Buffer is not), or undefined when it
// is larger than max bytes.
async function bytes(c: SkillsvcClient, path: string, max?: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of c.iterDownload(path, { limit: max === undefined ? 0 : max + 1 })) {
    chunks.push(chunk);
    size += chunk.length;
  }
  if (max !== undefined && size > max) return undefined;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

function info(e: PbFileInfo, shown: (p: string) => string): FileInfo {
  const p = shown(e.path);
  if (e.isDir) return { path: `${p.replace(/\/+$/, "")}/`, is_dir: true, size: 0, modified_at: "" };
  return { path: p, is_dir: false, size: Number(e.size), modified_at: timestamp(e.modified) };
}

function timestamp(t: PbFileInfo["modified"]): string {
  return t ? new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6)).toISOString() : "";
}

function isBinary(e: SkillsvcError): boolean {
  return e.code === Code.FailedPrecondition && e.rawMessage.includes("binary");
}

// reason is why skillsvc refused a call, worded as deepagents' own
// backends word it where they refuse the same thing.
function reason(e: SkillsvcError, path: string): string {
  if (e.code === Code.InvalidArgument && path.split("/").includes("..")) return "Path traversal not allowed";
  return e.rawMessage;
}

function isNotDir(e: SkillsvcError): boolean {
  return e.code === Code.FailedPrecondition && e.rawMessage.includes("not a directory");
}

function utf8(data: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch {
    return undefined;
  }
}

// decodeBase64 reads base64 (or a data: URL) as deepagents' decodeBase64ToBytes
// does, or undefined when it is not base64.
function decodeBase64(content: string): Uint8Array | undefined {
  const trimmed = content.trim();
  const payload = trimmed.startsWith("data:") ? trimmed.slice(trimmed.indexOf(",") + 1) : trimmed;
  let binary: string;
  try {
    binary = atob(payload.replace(/\s/g, ""));
  } catch {
    return undefined;
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

// Edit refusals, worded as deepagents' performStringReplacement words them.
function notFound(oldString: string): string {
  return `Error: String not found in file: '${oldString}'`;
}

function multiple(oldString: string, n: number): string {
  return `Error: String '${oldString}' has multiple occurrences (appears ${n} times) in file. Use replace_all=True to replace all instances, or provide a more specific string with surrounding context.`;
}

// The MIME types deepagents' getMimeType gives (deepagents 1.14.1,
// src/backends/utils.ts, not exported) where they are not "text/plain", the
// type of every other extension and of names without one. A file is binary
// when its type is not text (isTextMimeType): deepagents decides by
// extension, not by content.
const MIME_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
  ".heic": "image/heic",
  ".heif": "image/heif",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".aiff": "audio/aiff",
  ".aac": "audio/aac",
  ".ogg": "audio/ogg",
  ".flac": "audio/flac",
  ".mp4": "video/mp4",
  ".webm": "video/webm",
  ".mpeg": "video/mpeg",
  ".mov": "video/quicktime",
  ".avi": "video/x-msvideo",
  ".flv": "video/x-flv",
  ".mpg": "video/mpeg",
  ".wmv": "video/x-ms-wmv",
  ".3gpp": "video/3gpp",
  ".pdf": "application/pdf",
  ".ppt": "application/vnd.ms-powerpoint",
  ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  ".md": "text/markdown",
  ".markdown": "text/markdown",
  ".html": "text/html",
  ".htm": "text/html",
  ".css": "text/css",
  ".csv": "text/csv",
  ".xml": "text/xml",
  ".json": "application/json",
  ".js": "application/javascript",
  ".mjs": "application/javascript",
  ".cjs": "application/javascript",
};

function mimeType(path: string): string {
  const name = path.slice(path.replace(/\\/g, "/").lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return (dot > 0 && MIME_TYPES[name.slice(dot).toLowerCase()]) || "text/plain";
}

function isTextMimeType(type: string): boolean {
  return type.startsWith("text/") || type === "application/json" || type === "application/javascript" || type === "image/svg+xml";
}

let warnedUnconfined = false;

function warnUnconfined() {
  if (!warnedUnconfined) process.emitWarning('SkillsvcBackend runs commands unconfined (execute: { sandbox: "none" }): they see this host as this process\'s user');
  warnedUnconfined = true;
}

// commandError is a run that could not start or finish as the model reads
// it: the runner's kind (WORKSPACE_TOO_LARGE, SANDBOX_UNAVAILABLE, ...) or
// the service's code, as SkillTools words them.
function commandError(err: unknown): string {
  if (err instanceof ScriptRunError) return `Error (${kindName(err.kind)}): ${err.rawMessage}`;
  const e = SkillsvcError.from(err);
  return `Error (${e.codeName}): ${e.rawMessage}`;
}

function fileError(err: unknown): FileOperationError {
  const e = SkillsvcError.from(err);
  switch (e.code) {
    case Code.NotFound:
      return "file_not_found";
    case Code.PermissionDenied:
      return "permission_denied";
    case Code.FailedPrecondition:
      if (e.rawMessage.includes("is a directory")) return "is_directory";
      return "invalid_path";
    default:
      return "invalid_path";
  }
}
