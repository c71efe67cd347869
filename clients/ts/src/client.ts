// SkillsvcClient: every RPC of skillsvc's three services over gRPC (Connect's
// Node gRPC transport), bound to an identity. Methods take the request
// fields as a plain object and return the response messages; paged listings
// and streams are async iterators; failures throw SkillsvcError, which keeps
// the gRPC code. Read-only calls are retried on UNAVAILABLE, writes never.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, createClient, type CallOptions, type Client, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { open, rename, rm } from "node:fs/promises";

import { AdminService, type SkillScopeSchema } from "./gen/skillsvc/v1/admin_pb.js";
import {
  FilesystemService,
  type DeleteRequestSchema,
  type EditRequestSchema,
  type FileInfo,
  type GlobRequestSchema,
  type GrepRequestSchema,
  type ListRequestSchema,
  type ReadRequestSchema,
  type UploadRequest,
  type UploadRequestSchema,
  type WriteRequestSchema,
} from "./gen/skillsvc/v1/filesystem_pb.js";
import {
  SkillsService,
  type FormatSkillsRequestSchema,
  type ListSkillsRequestSchema,
  type RenderSkillRequestSchema,
  type Provenance,
  type SearchSkillsRequestSchema,
  type SkillSummary,
  type WatchSkillsResponse,
} from "./gen/skillsvc/v1/skills_pb.js";
import { SkillsvcError } from "./errors.js";
import { MAX_ARCHIVE_BYTES, downloadLimit, extractSkill, type ExtractOptions } from "./tar.js";
import {
  materializeSkill,
  runCommand,
  runSkillScript,
  type CommandOptions,
  type CommandResult,
  type MaterializeOptions,
  type MaterializedSkill,
  type RunOptions,
  type RunResult,
} from "./runner.js";
import { materializeSkills, type MaterializeSkillsOptions, type MaterializedSet } from "./skillset.js";

export const DEFAULT_TARGET = "http://127.0.0.1:7070";
const CHUNK_SIZE = 256 << 10;
const MAX_MESSAGE = 16 << 20;

/** The longest query the server takes by default (--skills.max-query-bytes): see boundedQuery. */
export const MAX_QUERY_BYTES = 4096;

/**
 * text cut to at most maxBytes of UTF-8, on a character boundary, so a long message still makes a query the
 * server takes (its start, which usually states the task).
 */
export function boundedQuery(text: string, maxBytes = MAX_QUERY_BYTES): string {
  const b = Buffer.from(text, "utf8");
  if (b.length <= maxBytes) return text;
  let end = Math.max(maxBytes, 0);
  while (end > 0 && (b[end] & 0xc0) === 0x80) end--; // b[end] continues the character before it
  return b.subarray(0, end).toString("utf8");
}

/**
 * Where a served skill comes from (skillsvc.v1.Provenance): version (the live copy's manifest digest; "" for a skill
 * uploaded to the bucket directly, then outOfBand), publisher, approver, scanVerdict ("clean", "low", "medium",
 * "high" or "unscanned"), signature ("unsigned", "verified" or "invalid") and signatureKey. getSkill always sets it;
 * listSkills and searchSkills with includeProvenance set each summary's.
 */
export type { Provenance };

/**
 * A provenance as one short line for a model or a log, worded as the Python client's trust_line: "Trust: signature
 * verified by release, scan clean, published by alice." or "Trust: signature unsigned, scan unscanned, uploaded to
 * the library directly (no published version)."
 */
export function trustLine(p: Provenance): string {
  let sig = p.signature || "unsigned";
  if (p.signatureKey) sig += ` by ${p.signatureKey}`;
  let origin = "uploaded to the library directly (no published version)";
  if (!p.outOfBand && p.version) {
    origin = `published by ${p.publisher || "unknown"}`;
    if (p.approver) origin += `, approved by ${p.approver}`;
  }
  return `Trust: signature ${sig}, scan ${p.scanVerdict || "unscanned"}, ${origin}.`;
}

/** Who is calling: user and thread (and ticket) in insecure mode, or a bearer token in jwt mode. */
export interface Identity {
  user?: string;
  thread?: string;
  ticket?: string;
  /** A token, or a function returning a fresh one. */
  token?: string | (() => string | Promise<string>);
  /** Read the library the thread pinned on its first such call (x-skillsvc-pin: library; docs/agents/pins.md). */
  pinLibrary?: boolean;
  /** The caller's teams, comma separated (x-skillsvc-teams; insecure mode — in jwt mode the token names them). */
  teams?: string;
  /**
   * The named skill set every listing shows unless a call names another (x-skillsvc-scope; in jwt mode the
   * token's claim decides).
   */
  scope?: string;
  /** The agent harness the caller runs in, matched against skills' compatibility (x-skillsvc-harness; jwt: the token's). */
  harness?: string;
}

export interface ClientOptions extends Identity {
  /** http://host:port, or https://host:port for TLS. Default http://127.0.0.1:7070. */
  target?: string;
  /** TLS: a CA bundle, and a client certificate and key for mutual TLS. */
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Default per-call timeout in ms (30 s); 0 for none. */
  timeoutMs?: number;
  /** Attempts for read-only calls answered UNAVAILABLE (4). */
  maxAttempts?: number;
  /** A transport of your own (tests, interceptors); target and TLS are then ignored. */
  transport?: Transport;
}

export interface UploadOptions {
  /** Store only if the object's current ETag is this. */
  ifMatch?: string;
  /** Store only if nothing is there yet. */
  mustNotExist?: boolean;
  /** Bytes per message (256 KiB). */
  chunkSize?: number;
}

export interface Call {
  timeoutMs?: number;
  signal?: AbortSignal;
}

type Init<S> = S extends import("@bufbuild/protobuf").DescMessage ? MessageInitShape<S> : never;

/** A published version of a skill: an id, a unique prefix of one (12 hex digits at least) or a label; unset is the live skill. */
export interface Version {
  version?: string;
}

export interface WatchOptions {
  /** Reconnect from the last digest seen when the stream drops with UNAVAILABLE (a replica draining); default true. */
  resume?: boolean;
  /** Ends the watch. */
  signal?: AbortSignal;
}

/** Reconnections of watchSkills in a row, at most. */
const WATCH_RETRIES = 5;

export class SkillsvcClient {
  readonly identity: Identity;
  private readonly transport: Transport;
  private readonly fs: Client<typeof FilesystemService>;
  private readonly skills: Client<typeof SkillsService>;
  private readonly admin: Client<typeof AdminService>;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;

  constructor(opts: ClientOptions = {}) {
    this.identity = {
      user: opts.user,
      thread: opts.thread,
      ticket: opts.ticket,
      token: opts.token,
      pinLibrary: opts.pinLibrary,
      teams: opts.teams,
      scope: opts.scope,
      harness: opts.harness,
    };
    this.transport =
      opts.transport ??
      createGrpcTransport({
        baseUrl: opts.target ?? DEFAULT_TARGET,
        nodeOptions: opts.ca || opts.cert ? { ca: opts.ca, cert: opts.cert, key: opts.key } : undefined,
        readMaxBytes: MAX_MESSAGE,
        writeMaxBytes: MAX_MESSAGE,
      });
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxAttempts = opts.maxAttempts ?? 4;
    this.fs = createClient(FilesystemService, this.transport);
    this.skills = createClient(SkillsService, this.transport);
    this.admin = createClient(AdminService, this.transport);
  }

  /** A client for another identity on the same transport (connection). */
  withIdentity(changes: Identity): SkillsvcClient {
    return new SkillsvcClient({
      ...this.identity,
      ...changes,
      transport: this.transport,
      timeoutMs: this.timeoutMs,
      maxAttempts: this.maxAttempts,
    });
  }

  private async options(call?: Call): Promise<CallOptions> {
    const headers = new Headers();
    const id = this.identity;
    if (id.token !== undefined) {
      headers.set("authorization", `Bearer ${typeof id.token === "function" ? await id.token() : id.token}`);
    }
    if (id.user) headers.set("x-skillsvc-user", id.user);
    if (id.thread) headers.set("x-skillsvc-thread", id.thread);
    if (id.ticket) headers.set("x-skillsvc-ticket", id.ticket);
    if (id.pinLibrary) headers.set("x-skillsvc-pin", "library");
    if (id.teams) headers.set("x-skillsvc-teams", id.teams);
    if (id.scope) headers.set("x-skillsvc-scope", id.scope);
    if (id.harness) headers.set("x-skillsvc-harness", id.harness);
    const timeoutMs = call?.timeoutMs ?? this.timeoutMs;
    return { headers, timeoutMs: timeoutMs > 0 ? timeoutMs : undefined, signal: call?.signal };
  }

  // write runs a call that changes something: once.
  private async write<T>(fn: (o: CallOptions) => Promise<T>, call?: Call): Promise<T> {
    try {
      return await fn(await this.options(call));
    } catch (err) {
      throw SkillsvcError.from(err);
    }
  }

  // read runs a read-only call, retrying UNAVAILABLE with backoff.
  private async read<T>(fn: (o: CallOptions) => Promise<T>, call?: Call): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn(await this.options(call));
      } catch (err) {
        const e = SkillsvcError.from(err);
        if (e.code !== Code.Unavailable || attempt >= this.maxAttempts || call?.signal?.aborted) throw e;
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** (attempt - 1), 2000) * (0.5 + Math.random() / 2)));
      }
    }
  }

  // FilesystemService

  list(req: Init<typeof ListRequestSchema>, call?: Call) {
    return this.read((o) => this.fs.list(req, o), call);
  }
  stat(path: string, call?: Call) {
    return this.read((o) => this.fs.stat({ path }, o), call);
  }
  /** Lines of a text file: offset 0-based, limit 0 means 2000. */
  readFile(req: Init<typeof ReadRequestSchema>, call?: Call) {
    return this.read((o) => this.fs.read(req, o), call);
  }
  writeFile(req: Init<typeof WriteRequestSchema>, call?: Call) {
    return this.write((o) => this.fs.write(req, o), call);
  }
  edit(req: Init<typeof EditRequestSchema>, call?: Call) {
    return this.write((o) => this.fs.edit(req, o), call);
  }
  delete(req: Init<typeof DeleteRequestSchema>, call?: Call) {
    return this.write((o) => this.fs.delete(req, o), call);
  }
  glob(req: Init<typeof GlobRequestSchema>, call?: Call) {
    return this.read((o) => this.fs.glob(req, o), call);
  }
  grep(req: Init<typeof GrepRequestSchema>, call?: Call) {
    return this.read((o) => this.fs.grep(req, o), call);
  }

  /** Every entry of a directory, page after page. */
  async *iterList(dir: string, pageSize = 0): AsyncGenerator<FileInfo> {
    let pageToken = "";
    do {
      const page = await this.list({ path: dir, pageSize, pageToken });
      yield* page.entries;
      pageToken = page.nextPageToken;
    } while (pageToken);
  }

  /** A file's bytes in chunks. */
  async *iterDownload(path: string, range: { offset?: number; limit?: number } = {}, call?: Call): AsyncGenerator<Uint8Array> {
    const o = await this.options(call);
    try {
      for await (const msg of this.fs.download({ path, offset: BigInt(range.offset ?? 0), limit: BigInt(range.limit ?? 0) }, o)) {
        yield msg.data;
      }
    } catch (err) {
      throw SkillsvcError.from(err);
    }
  }

  async download(path: string, range: { offset?: number; limit?: number } = {}, call?: Call): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    for await (const c of this.iterDownload(path, range, call)) chunks.push(c);
    return Buffer.concat(chunks);
  }

  /** Downloads to a local file, replacing it only once complete. */
  async downloadFile(path: string, localPath: string, call?: Call): Promise<void> {
    const tmp = `${localPath}.${process.pid}.tmp`;
    const f = await open(tmp, "w");
    try {
      for await (const c of this.iterDownload(path, {}, call)) await f.write(c);
      await f.close();
      await rename(tmp, localPath);
    } catch (err) {
      await f.close().catch(() => {});
      await rm(tmp, { force: true });
      throw err;
    }
  }

  /** Stores bytes at path, streamed in chunks; ifMatch/mustNotExist make it conditional. */
  async upload(path: string, data: Uint8Array, opts: UploadOptions = {}, call?: Call) {
    const size = opts.chunkSize ?? CHUNK_SIZE;
    async function* chunks() {
      for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
    }
    return this.uploadChunks(path, chunks(), opts, call);
  }

  /** Stores a local file at path, read and sent in chunks (never whole in memory). */
  async uploadFile(path: string, localPath: string, opts: UploadOptions = {}, call?: Call) {
    // Opened first, so a missing local file is the fs error, not a failed call.
    const f = await open(localPath);
    try {
      return await this.uploadChunks(path, f.createReadStream({ highWaterMark: opts.chunkSize ?? CHUNK_SIZE, autoClose: false }), opts, call);
    } finally {
      await f.close();
    }
  }

  private async uploadChunks(path: string, chunks: AsyncIterable<Uint8Array>, opts: UploadOptions, call?: Call) {
    async function* requests(): AsyncGenerator<Init<typeof UploadRequestSchema>> {
      yield { msg: { case: "header", value: { path, ifMatch: opts.ifMatch ?? "", mustNotExist: opts.mustNotExist ?? false } } };
      for await (const c of chunks) yield { msg: { case: "data", value: c } };
    }
    const resp = await this.write((o) => this.fs.upload(requests() as AsyncIterable<UploadRequest>, o), call);
    return resp.info!;
  }

  // SkillsService

  listCategories(call?: Call) {
    return this.read((o) => this.skills.listCategories({}, o), call);
  }
  /**
   * One page of skills; iterSkills follows the pages. With includeProvenance each summary's provenance is set (see
   * Provenance and trustLine); without it, it is undefined, as the lookup costs a cached read per library.
   */
  listSkills(req: Init<typeof ListSkillsRequestSchema> = {}, call?: Call) {
    return this.read((o) => this.skills.listSkills(req, o), call);
  }
  /** Every skill (listSkills' filters), page after page. */
  async *iterSkills(req: Init<typeof ListSkillsRequestSchema> = {}): AsyncGenerator<SkillSummary> {
    let pageToken = "";
    do {
      const page = await this.listSkills({ ...req, pageToken });
      yield* page.skills;
      pageToken = page.nextPageToken;
    } while (pageToken);
  }
  /**
   * The skills as a system-prompt block within charBudget characters. With query (the task or the user's latest
   * message, at most the server's --skills.max-query-bytes: see boundedQuery) the block holds the skills most
   * relevant to it, best first; scope names a skill set ("": the identity's, if any).
   */
  formatSkills(req: Init<typeof FormatSkillsRequestSchema> = {}, call?: Call) {
    return this.read((o) => this.skills.formatSkills(req, o), call);
  }
  /** The skill: its summary, SKILL.md, files and, always, its provenance. */
  getSkill(path: string, call?: Call & Version) {
    return this.read((o) => this.skills.getSkill({ path, version: call?.version }, o), call);
  }
  /** The text to hand the model when the skill is invoked. */
  renderSkill(req: Init<typeof RenderSkillRequestSchema>, call?: Call) {
    return this.read((o) => this.skills.renderSkill(req, o), call);
  }
  readSkillFile(path: string, file: string, call?: Call & Version) {
    return this.read((o) => this.skills.readSkillFile({ path, file, version: call?.version }, o), call);
  }
  /** The skills most relevant to query, best first; includeProvenance sets each result's skill.provenance, as in listSkills. */
  searchSkills(req: Init<typeof SearchSkillsRequestSchema>, call?: Call) {
    return this.read((o) => this.skills.searchSkills(req, o), call);
  }
  setSkillEnabled(path: string, enabled: boolean, call?: Call) {
    return this.write((o) => this.skills.setSkillEnabled({ path, enabled }, o), call);
  }

  /** Downloads a skill folder into dir, safely (see extractSkill); returns the folder. */
  async exportSkill(skill: string, dir: string, call?: Call & ExtractOptions & Version): Promise<string> {
    const o = await this.options(call);
    const maxBytes = call?.maxBytes ?? MAX_ARCHIVE_BYTES;
    const chunks: Uint8Array[] = [];
    let received = 0;
    try {
      for await (const msg of this.skills.exportSkill({ path: skill, version: call?.version }, o)) {
        chunks.push(msg.data);
        // Refused while downloading, so a stream that never ends cannot fill the heap.
        if ((received += msg.data.length) > downloadLimit(maxBytes)) {
          throw new SkillsvcError(Code.ResourceExhausted, `export of ${JSON.stringify(skill)} is larger than a gzip of maxBytes (${maxBytes} bytes) can be`);
        }
      }
    } catch (err) {
      throw SkillsvcError.from(err);
    }
    return extractSkill(Buffer.concat(chunks), dir, { maxBytes });
  }

  /** The skill's files in the local cache, verified against its manifest and fetched only once per content (see runner.ts). */
  materializeSkill(skill: string, opts: MaterializeOptions = {}): Promise<MaterializedSkill> {
    return materializeSkill(this, skill, opts);
  }

  /**
   * The skills a listing selects (scope, category, layer, names) as one cached directory with a folder per skill,
   * each verified against its manifest; nothing is copied for a set already there (see skillset.ts).
   */
  materializeSkills(opts: MaterializeSkillsOptions = {}): Promise<MaterializedSet> {
    return materializeSkills(this, opts);
  }

  /** Runs a script of a skill on this machine, in a scratch copy of the thread's /workspace (see runner.ts). */
  runSkillScript(skill: string, script: string, opts: RunOptions = {}): Promise<RunResult> {
    return runSkillScript(this, skill, script, opts);
  }

  /** Runs `bash -c command` on this machine as a script runs, with the skills it names under /skills/ mounted (see runner.ts). */
  runCommand(command: string, opts: CommandOptions = {}): Promise<CommandResult> {
    return runCommand(this, command, opts);
  }

  /**
   * The changes to the caller's catalog as they happen, one message each (libraryDigest is where to resume from;
   * reset means list again). since is a listing's or a message's digest. Runs until the loop breaks or the signal
   * aborts.
   */
  async *watchSkills(since = "", opts: WatchOptions = {}): AsyncGenerator<WatchSkillsResponse> {
    let failures = 0;
    for (;;) {
      const o = await this.options({ timeoutMs: 0, signal: opts.signal });
      try {
        for await (const msg of this.skills.watchSkills({ sinceDigest: since }, o)) {
          failures = 0;
          since = msg.libraryDigest || since;
          yield msg;
        }
      } catch (err) {
        const e = SkillsvcError.from(err);
        if (opts.resume === false || e.code !== Code.Unavailable || ++failures > WATCH_RETRIES || opts.signal?.aborted) throw e;
        await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** failures, 5000)));
      }
    }
  }

  // AdminService (operators: an admin token in jwt mode)

  dropSkillIndex(req: { user?: string; shared?: boolean; team?: string }, call?: Call) {
    return this.write((o) => this.admin.dropSkillIndex(req, o), call);
  }
  setUserSkillEnabled(user: string, path: string, enabled: boolean, call?: Call) {
    return this.write((o) => this.admin.setUserSkillEnabled({ user, path, enabled }, o), call);
  }
  putLibraryFile(
    // mode (0o755 or 0o644; only the executable bit counts) is recorded with the file; 0 or none records none
    // (the file is then 0o644 unless it starts with "#!").
    req: { path: string; data: Uint8Array; user?: string; shared?: boolean; team?: string; ifMatch?: string; mustNotExist?: boolean; mode?: number },
    call?: Call,
  ) {
    const { user, shared, team, ...rest } = req;
    return this.write((o) => this.admin.putLibraryFile({ ...rest, library: { user, shared, team } }, o), call);
  }
  deleteLibraryFile(req: { path: string; user?: string; shared?: boolean; team?: string }, call?: Call) {
    return this.write(
      (o) => this.admin.deleteLibraryFile({ path: req.path, library: { user: req.user, shared: req.shared, team: req.team } }, o),
      call,
    );
  }
  /** Defines (or redefines, by name) a scope of a user's, a team's or the shared library: a named skill set calls choose with scope. */
  setSkillScope(req: { scope: Init<typeof SkillScopeSchema>; user?: string; shared?: boolean; team?: string }, call?: Call) {
    const library = { user: req.user, shared: req.shared, team: req.team };
    return this.write((o) => this.admin.setSkillScope({ library, scope: req.scope }, o), call);
  }
  deleteSkillScope(req: { name: string; user?: string; shared?: boolean; team?: string }, call?: Call) {
    const library = { user: req.user, shared: req.shared, team: req.team };
    return this.write((o) => this.admin.deleteSkillScope({ library, name: req.name }, o), call);
  }
  listSkillScopes(req: { user?: string; shared?: boolean; team?: string }, call?: Call) {
    return this.read((o) => this.admin.listSkillScopes({ library: { user: req.user, shared: req.shared, team: req.team } }, o), call);
  }
  /** Protects (or no longer protects) a skill name of the shared library or a team's. */
  setSkillProtected(req: { name: string; protected?: boolean; shared?: boolean; team?: string }, call?: Call) {
    const library = { shared: req.shared, team: req.team };
    return this.write((o) => this.admin.setSkillProtected({ library, name: req.name, protected: req.protected ?? true }, o), call);
  }
  listProtectedSkills(req: { shared?: boolean; team?: string }, call?: Call) {
    return this.read((o) => this.admin.listProtectedSkills({ library: { shared: req.shared, team: req.team } }, o), call);
  }
}

