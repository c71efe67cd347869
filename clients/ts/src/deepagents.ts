// SkillsvcBackend: skillsvc as the filesystem of a deepagents (npm) agent.
//
//   const backend = new SkillsvcBackend({ target: "http://127.0.0.1:7070", user: "alice" });
//   const agent = createDeepAgent({ model, backend, skills: await skillSources(backend) });
//   await agent.invoke({ messages: [...] }, { configurable: { thread_id: "t1" } });
//
// It implements deepagents' BackendProtocolV2 — ls, read, readRaw, write,
// edit, grep, glob, delete, uploadFiles, downloadFiles — with its result
// shapes and error literals. Without a fixed thread, each call runs as the
// thread of the LangGraph run (configurable.thread_id), as StateBackend reads
// its state, so one backend serves every thread, each as its own identity.
import { Code } from "@connectrpc/connect";
import { getConfig } from "@langchain/langgraph";
import type {
  BackendProtocolV2,
  DeleteResult,
  EditResult,
  FileDownloadResponse,
  FileInfo,
  FileOperationError,
  FileUploadResponse,
  GlobResult,
  GrepResult,
  LsResult,
  ReadRawResult,
  ReadResult,
  WriteResult,
} from "deepagents";

import { SkillsvcClient, type ClientOptions } from "./client.js";
import { SkillsvcError } from "./errors.js";
import type { FileInfo as PbFileInfo } from "./gen/skillsvc/v1/filesystem_pb.js";

const MAX_BINARY_READ = 10 << 20;

export class SkillsvcBackend implements BackendProtocolV2 {
  /** The client as configured; client() gives the one for the current thread. */
  readonly base: SkillsvcClient;

  constructor(opts: ClientOptions | SkillsvcClient) {
    this.base = opts instanceof SkillsvcClient ? opts : new SkillsvcClient(opts);
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

  async ls(path: string): Promise<LsResult> {
    try {
      const files: FileInfo[] = [];
      for await (const e of this.client().iterList(dir(path))) files.push(info(e));
      files.sort((a, b) => a.path.localeCompare(b.path));
      return { files };
    } catch (err) {
      return { error: message(err, path, "Directory") };
    }
  }

  async read(filePath: string, offset = 0, limit = 500): Promise<ReadResult> {
    const c = this.client();
    offset = Math.max(0, Math.floor(offset));
    if (limit <= 0) return { content: "", mimeType: "text/plain" };
    try {
      const r = await c.readFile({ path: filePath, offset: BigInt(offset), limit: BigInt(limit) });
      const total = Number(r.totalLines);
      const next = Number(r.nextOffset);
      if (!r.content.trim()) return { content: r.content, mimeType: mimeType(filePath, true) };
      return {
        content: r.content,
        mimeType: mimeType(filePath, true),
        totalLines: total,
        startLine: offset + 1,
        endLine: next,
        nextOffset: next < total ? next : undefined,
      };
    } catch (err) {
      const e = SkillsvcError.from(err);
      if (isBinary(e)) return this.readBinary(c, filePath);
      if (e.code === Code.OutOfRange) return { error: `Line offset ${offset} exceeds file length` };
      if (e.code === Code.NotFound) return { error: `File '${filePath}' not found` };
      return { error: `Error: ${e.rawMessage}` };
    }
  }

  private async readBinary(c: SkillsvcClient, filePath: string): Promise<ReadResult> {
    try {
      const data = await c.download(filePath, { limit: MAX_BINARY_READ + 1 });
      if (data.length > MAX_BINARY_READ) return { error: `Error: binary file is larger than ${MAX_BINARY_READ} bytes` };
      return { content: data, mimeType: mimeType(filePath, false) };
    } catch (err) {
      return { error: message(err, filePath) };
    }
  }

  async readRaw(filePath: string): Promise<ReadRawResult> {
    const c = this.client();
    try {
      const [st, data] = await Promise.all([c.stat(filePath), c.download(filePath)]);
      const modified = st.info?.modified ? new Date(Number(st.info.modified.seconds) * 1000).toISOString() : "";
      const text = isText(data);
      return {
        data: {
          content: text ? Buffer.from(data).toString("utf8") : data,
          mimeType: mimeType(filePath, text),
          created_at: modified,
          modified_at: modified,
        },
      };
    } catch (err) {
      const e = SkillsvcError.from(err);
      return { error: e.code === Code.NotFound ? `File '${filePath}' not found` : `Error: ${e.rawMessage}` };
    }
  }

  async write(filePath: string, content: string): Promise<WriteResult> {
    try {
      await this.client().writeFile({ path: filePath, content });
      return { path: filePath };
    } catch (err) {
      return { error: message(err, filePath) };
    }
  }

  async edit(filePath: string, oldString: string, newString: string, replaceAll = false): Promise<EditResult> {
    try {
      const r = await this.client().edit({ path: filePath, oldString, newString, replaceAll });
      return { path: filePath, occurrences: Number(r.occurrences) };
    } catch (err) {
      return { error: message(err, filePath) };
    }
  }

  async delete(filePath: string): Promise<DeleteResult> {
    try {
      await this.client().delete({ path: dir(filePath), recursive: true });
      return { path: filePath };
    } catch (err) {
      return { error: message(err, filePath) };
    }
  }

  async glob(pattern: string, path = "/"): Promise<GlobResult> {
    try {
      const r = await this.client().glob({ pattern: globPattern(pattern), path: dir(path) });
      return { files: r.matches.filter((m) => !m.isDir).map(info), truncated: r.truncated };
    } catch (err) {
      return { error: message(err, path) };
    }
  }

  async grep(pattern: string, path: string | null = "/", glob: string | null = null, maxCount: number | null = null): Promise<GrepResult> {
    try {
      const r = await this.client().grep({
        pattern,
        path: dir(path ?? "/"),
        glob: glob ? globPattern(glob) : "",
        maxMatches: maxCount ?? 0,
      });
      let matches = r.matches.map((m) => ({ path: m.path, line: Number(m.line), text: m.text }));
      let truncated = r.truncated;
      if (maxCount != null && matches.length > maxCount) {
        matches = matches.slice(0, maxCount);
        truncated = true;
      }
      return { matches, truncated };
    } catch (err) {
      return { error: message(err, path ?? "/") };
    }
  }

  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    const c = this.client();
    const out: FileUploadResponse[] = [];
    for (const [path, data] of files) {
      try {
        await c.upload(path, data);
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
        out.push({ path, content: await c.download(path), error: null });
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

// dir is a directory argument as skillsvc takes it: deepagents writes
// directories with a trailing "/", skillsvc paths are canonical.
function dir(path: string): string {
  return path.replace(/\/+$/, "") || "/";
}

// globPattern is the backend contract's glob: without "/" a pattern matches
// the base name at any depth; a leading "/" anchors it to the search root.
function globPattern(p: string): string {
  if (p.startsWith("/")) return p.replace(/^\/+/, "");
  return p.includes("/") ? p : `**/${p}`;
}

function info(e: PbFileInfo): FileInfo {
  if (e.isDir) return { path: `${e.path.replace(/\/+$/, "")}/`, is_dir: true, size: 0, modified_at: "" };
  const modified = e.modified ? new Date(Number(e.modified.seconds) * 1000 + Math.floor(e.modified.nanos / 1e6)).toISOString() : "";
  return { path: e.path, is_dir: false, size: Number(e.size), modified_at: modified };
}

function isBinary(e: SkillsvcError): boolean {
  return e.code === Code.FailedPrecondition && e.rawMessage.includes("binary");
}

function isText(data: Uint8Array): boolean {
  if (data.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}

const MIME: Record<string, string> = {
  md: "text/markdown",
  txt: "text/plain",
  py: "text/x-python",
  ts: "text/typescript",
  js: "text/javascript",
  json: "application/json",
  csv: "text/csv",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  pdf: "application/pdf",
};

function mimeType(path: string, text: boolean): string {
  const ext = path.split("/").pop()?.split(".").slice(1).pop()?.toLowerCase() ?? "";
  return MIME[ext] ?? (text ? "text/plain" : "application/octet-stream");
}

// message is the error a model reads, worded as deepagents' own backends
// word theirs where the meaning is the same.
function message(err: unknown, path: string, what = "File"): string {
  const e = SkillsvcError.from(err);
  if (e.code === Code.NotFound) return `Error: ${what} '${path}' not found`;
  return `Error: ${e.rawMessage}`;
}

function fileError(err: unknown): FileOperationError {
  const e = SkillsvcError.from(err);
  switch (e.code) {
    case Code.NotFound:
      return "file_not_found";
    case Code.PermissionDenied:
      return "permission_denied";
    case Code.FailedPrecondition:
      if (e.rawMessage.includes("directory")) return "is_directory";
      return "invalid_path";
    default:
      return "invalid_path";
  }
}
