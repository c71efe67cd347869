// The skill script runner: skills run where the agent runs (this machine),
// never on the server. materializeSkill puts a skill's files in a local
// cache directory named by its manifest digest, verified file by file;
// runSkillScript runs one of its scripts with the seeds' contract (JSON in
// argv[1] and on stdin, one JSON object out; or plain arguments), in a
// scratch copy of the thread's /workspace whose changes are written back,
// bounded by a timeout and caps on output and memory, under bubblewrap where
// the machine has it. A Sandbox runs the prepared command, so a remote one
// (E2B, Modal, a Kubernetes job with gVisor) can take the same runs.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants as fsConstants, existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { chmod, lstat, mkdir, mkdtemp, open, readFile, readdir, realpath, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { constants as osConstants, homedir, tmpdir } from "node:os";
import path from "node:path";

import { Code } from "@connectrpc/connect";

import type { Call, SkillsvcClient, Version } from "./client.js";
import { SkillsvcError } from "./errors.js";
import type { SkillSummary } from "./gen/skillsvc/v1/skills_pb.js";

/** Defaults of a run (the contract all three runners share). */
export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_OUTPUT_BYTES = 1 << 20;
export const DEFAULT_MEMORY_BYTES = 1 << 30;
/** Bounds of the scratch copy of /workspace, and of what is written back. */
export const MAX_WORKSPACE_BYTES = 64 << 20;
export const MAX_WORKSPACE_FILES = 2000;

/** The script's PATH, and where interpreters are looked up unless RunOptions.interpreters names them. */
export const SCRIPT_PATH = "/usr/local/bin:/usr/bin:/bin";

// Errors. Each is a SkillsvcError (so code and codeName work as for a failed
// call) with the output so far, where there is some, and a message a model
// can act on.

export interface ScriptOutput {
  stdout?: string;
  stderr?: string;
  /** The script's exit code; none when it never ran or the runner killed it (timeout, too much output). */
  exitCode?: number;
}

/** A run that failed: kind names it the same way in every client (ScriptNotFound, Timeout, ...). */
export class ScriptRunError extends SkillsvcError {
  readonly kind: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode?: number;

  constructor(kind: string, code: Code, message: string, out: ScriptOutput = {}) {
    super(code, message);
    this.name = `${kind}Error`;
    this.kind = kind;
    this.stdout = out.stdout ?? "";
    this.stderr = out.stderr ?? "";
    this.exitCode = out.exitCode;
  }
}

export class ScriptNotFoundError extends ScriptRunError {
  constructor(message: string) {
    super("ScriptNotFound", Code.NotFound, message);
  }
}
export class ScriptOutsideSkillError extends ScriptRunError {
  constructor(message: string) {
    super("ScriptOutsideSkill", Code.InvalidArgument, message);
  }
}
export class UnknownInterpreterError extends ScriptRunError {
  constructor(message: string) {
    super("UnknownInterpreter", Code.FailedPrecondition, message);
  }
}
export class BadOutputError extends ScriptRunError {
  constructor(message: string, out: ScriptOutput) {
    super("BadOutput", Code.FailedPrecondition, message, out);
  }
}
export class ScriptTimeoutError extends ScriptRunError {
  constructor(message: string, out: ScriptOutput) {
    super("Timeout", Code.DeadlineExceeded, message, out);
  }
}
export class OutputTooLargeError extends ScriptRunError {
  constructor(message: string, out: ScriptOutput) {
    super("OutputTooLarge", Code.ResourceExhausted, message, out);
  }
}
export class WorkspaceTooLargeError extends ScriptRunError {
  constructor(message: string, out: ScriptOutput = {}) {
    super("WorkspaceTooLarge", Code.ResourceExhausted, message, out);
  }
}
export class SandboxUnavailableError extends ScriptRunError {
  constructor(message: string) {
    super("SandboxUnavailable", Code.FailedPrecondition, message);
  }
}

/**
 * An export that does not match the manifest getSkill gave (the skill changed between the two calls, or the bytes were
 * damaged): nothing is kept, and fetching again is the remedy. ABORTED, as Python's ManifestMismatch and Go's
 * VerifyFailed: nothing in an export tells the two causes apart.
 */
export class ManifestMismatchError extends SkillsvcError {
  constructor(message: string) {
    super(Code.Aborted, message);
    this.name = "ManifestMismatchError";
  }
}

// Materializing.

export interface MaterializeOptions extends Call, Version {
  /** The cache root: $SKILLSVC_SKILL_CACHE, else $XDG_CACHE_HOME/skillsvc/skills, else ~/.cache/skillsvc/skills. */
  cacheDir?: string;
}

export interface MaterializedSkill {
  /** The local directory holding the skill's files: <cache root>/<hex of manifest_digest>. */
  dir: string;
  /** "sha256:<hex>". */
  digest: string;
  /** False when the directory was already there and nothing was fetched. */
  fetched: boolean;
  /** Bytes of files fetched (0 when not fetched). */
  bytes: number;
  /** GetSkill's summary, with manifest and metadata. */
  skill: SkillSummary;
}

/** The cache root materializeSkill uses without a cacheDir. */
export function skillCacheDir(): string {
  if (process.env.SKILLSVC_SKILL_CACHE) return process.env.SKILLSVC_SKILL_CACHE;
  const base = process.env.XDG_CACHE_HOME || path.join(homedir(), ".cache");
  return path.join(base, "skillsvc", "skills");
}

/**
 * The skill's files in a local directory, fetched only when the cache has no copy of this exact content. A fetched
 * copy is verified against the manifest (every file's size, sha256 and executable bit, no file more) before it is
 * published by an atomic rename; a cached copy is checked cheaply on use (the same file names, sizes and executable
 * bits) and fetched again if it was altered. The files are made read-only.
 */
export async function materializeSkill(client: SkillsvcClient, skill: string, opts: MaterializeOptions = {}): Promise<MaterializedSkill> {
  const { cacheDir, ...call } = opts;
  const got = await client.getSkill(skill, call);
  const s = got.skill!;
  const m = s.manifest;
  if (m?.overLimits || !s.manifestDigest) {
    throw new SkillsvcError(
      Code.FailedPrecondition,
      `skill ${JSON.stringify(s.name)} is over the manifest limits (${m?.fileCount ?? "?"} files, ${m?.totalBytes ?? "?"} bytes; at most 512 files and 16 MiB): it cannot be materialized to run`,
    );
  }
  const hex = s.manifestDigest.replace(/^sha256:/, "");
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new ManifestMismatchError(`skill ${JSON.stringify(s.name)} has a malformed manifest digest ${JSON.stringify(s.manifestDigest)}`);
  const root = path.resolve(cacheDir ?? skillCacheDir());
  const dir = path.join(root, hex);
  const want = new Map(m!.files.map((f) => [relativeTo(s.path, f.path), f]));

  if (existsSync(dir)) {
    if (await sizesMatch(dir, want)) return { dir, digest: s.manifestDigest, fetched: false, bytes: 0, skill: s };
    await removeTree(dir); // altered since it was published: fetched again below
  }
  await mkdir(root, { recursive: true });
  const tmp = await mkdtemp(path.join(root, `.tmp-${hex.slice(0, 12)}-`));
  try {
    const folder = await client.exportSkill(skill, tmp, { ...call, version: call.version });
    const bytes = await verify(folder, want, s.name);
    await makeReadOnly(folder);
    try {
      await rename(folder, dir);
    } catch (err) {
      // Another process or thread published the same content first: use that copy.
      if (!existsSync(dir)) throw err;
      return { dir, digest: s.manifestDigest, fetched: false, bytes: 0, skill: s };
    }
    return { dir, digest: s.manifestDigest, fetched: true, bytes, skill: s };
  } finally {
    await removeTree(tmp);
  }
}

function relativeTo(skillPath: string, filePath: string): string {
  const prefix = skillPath.replace(/\/+$/, "") + "/";
  return filePath.startsWith(prefix) ? filePath.slice(prefix.length) : filePath.replace(/^\/+/, "");
}

// walk lists the regular files under dir (relative paths, "/"-separated),
// skipping skip; anything else that is not a directory is returned in others.
async function walk(dir: string, skip?: (rel: string) => boolean): Promise<{ files: string[]; others: string[] }> {
  const files: string[] = [];
  const others: string[] = [];
  async function visit(rel: string) {
    for (const e of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (skip?.(r)) continue;
      if (e.isDirectory()) await visit(r);
      else if (e.isFile()) files.push(r);
      else others.push(r);
    }
  }
  await visit("");
  return { files: files.sort(), others };
}

// verify checks an extracted skill against its manifest; the first mismatch
// throws, and the caller removes the copy.
async function verify(dir: string, want: Map<string, { size: bigint; sha256: string; mode: number }>, name: string): Promise<number> {
  const { files, others } = await walk(dir);
  const bad = (why: string): never => {
    throw new ManifestMismatchError(`skill ${JSON.stringify(name)} as exported does not match its manifest (${why}); nothing was kept: try again, the skill may have changed meanwhile`);
  };
  if (others.length) bad(`${others[0]} is not a regular file`);
  for (const f of files) if (!want.has(f)) bad(`${f} is not in the manifest`);
  let bytes = 0;
  for (const [rel, f] of want) {
    let data: Buffer;
    try {
      data = await readFile(path.join(dir, rel));
    } catch {
      return bad(`${rel} is missing`);
    }
    if (BigInt(data.length) !== f.size) bad(`${rel} has ${data.length} bytes, the manifest says ${f.size}`);
    if (createHash("sha256").update(data).digest("hex") !== f.sha256) bad(`${rel} has another sha256`);
    const mode = (await stat(path.join(dir, rel))).mode & 0o777;
    if (!modeMatches(mode, f.mode)) bad(`${rel} has mode 0o${mode.toString(8)}, the manifest says 0o${f.mode.toString(8)}`);
    bytes += data.length;
  }
  return bytes;
}

// modeMatches: executable exactly when the manifest says so; a manifest
// without modes (a thread pinned before they were recorded) says nothing.
// Only the executable bit counts: the cached copy is read-only.
function modeMatches(mode: number, want: number): boolean {
  return want === 0 || ((mode & 0o111) !== 0) === ((want & 0o111) !== 0);
}

/** Whether dir holds exactly want's files, each with its size and executable bit (the cheap check on use). */
export async function sizesMatch(dir: string, want: Map<string, { size: bigint; mode: number }>): Promise<boolean> {
  try {
    const { files, others } = await walk(dir);
    if (others.length || files.length !== want.size) return false;
    for (const f of files) {
      const w = want.get(f);
      if (!w) return false;
      const st = await stat(path.join(dir, f));
      if (BigInt(st.size) !== w.size || !modeMatches(st.mode, w.mode)) return false;
    }
    return true;
  } catch {
    return false;
  }
}

// makeReadOnly takes the write bits off the files. The folders stay
// writable, so the cache can be removed with rm -r like any other (a file a
// script adds is an extra file: the copy is fetched again on next use).
async function makeReadOnly(dir: string) {
  const { files } = await walk(dir);
  for (const f of files) {
    const p = path.join(dir, f);
    await chmod(p, (await stat(p)).mode & 0o555);
  }
}

// removeTree removes a tree whose directories may be read-only. Files keep
// their modes: a skill set's are hard links to the per-skill cache's.
export async function removeTree(dir: string) {
  if (!existsSync(dir)) return;
  const fix = async (p: string) => {
    const st = await lstat(p);
    if (!st.isDirectory()) return;
    await chmod(p, 0o755);
    for (const e of await readdir(p)) await fix(path.join(p, e));
  };
  await fix(dir).catch(() => {});
  await rm(dir, { recursive: true, force: true });
}

// Sandboxes.

/** A prepared run: what a Sandbox executes. Paths in argv and env are as the script sees them (Sandbox.skillDir/workspaceDir). */
export interface SandboxSpec {
  argv: string[];
  env: Record<string, string>;
  /** Bytes on the script's stdin (nothing: empty stdin). */
  stdin?: Uint8Array;
  /** The materialized skill on this machine (read-only to the script); "" in command mode, which has none. */
  skillDir: string;
  /**
   * Command mode: further skills, read-only, each with the path the command names it by (/skills/<folder>). A
   * Sandbox with a workspaceMount mounts each dir at its mount; without one, the command's paths are rewritten to
   * the local directories instead.
   */
  skills?: { dir: string; mount: string }[];
  /** The scratch workspace on this machine: the script's working directory. */
  workspaceDir: string;
  /** Directories the interpreter needs besides /usr, /bin and /lib* (a venv, a node install), read-only. */
  runtimeDirs: string[];
  network: boolean;
  timeoutMs: number;
  /** Each of stdout and stderr; more kills the run. */
  maxOutputBytes: number;
  /** RLIMIT_AS; 0: none. */
  memoryBytes: number;
}

export interface SandboxResult {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
  /** An output went over maxOutputBytes (it is cut there, and the run was killed). */
  truncated: boolean;
}

/** Runs prepared commands: BwrapSandbox, SubprocessSandbox, or a remote sandbox of your own. */
export interface Sandbox {
  /** Reported as RunResult.sandbox. */
  readonly name: string;
  /** Where the script sees the skill and the workspace; unset: at their paths on this machine. */
  readonly skillMount?: string;
  readonly workspaceMount?: string;
  run(spec: SandboxSpec): Promise<SandboxResult>;
}

let warnedNoPrlimit = false;

function prlimitPath(): string | undefined {
  return findOnPath("prlimit", SCRIPT_PATH);
}

// limited prefixes argv with prlimit for RLIMIT_AS (Node has no setrlimit).
function limited(argv: string[], memoryBytes: number): string[] {
  if (memoryBytes <= 0) return argv;
  const prlimit = prlimitPath();
  if (!prlimit) {
    if (!warnedNoPrlimit) process.emitWarning("skill scripts run without a memory limit: prlimit (util-linux) not found");
    warnedNoPrlimit = true;
    return argv;
  }
  return [prlimit, `--as=${memoryBytes}`, "--", ...argv];
}

// execute spawns argv in a process group of its own, feeds stdin, collects
// both outputs within maxOutputBytes, and kills the whole group on timeout
// or too much output.
function execute(argv: string[], spec: SandboxSpec, cwd: string): Promise<SandboxResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, env: spec.env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const sizes = [0, 0];
    let timedOut = false;
    let truncated = false;
    let killed = false;
    const kill = () => {
      if (killed || child.pid === undefined) return;
      killed = true;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const collect = (i: number, into: Buffer[]) => (b: Buffer) => {
      const room = spec.maxOutputBytes - sizes[i];
      if (b.length > room) {
        if (room > 0) into.push(b.subarray(0, room));
        sizes[i] = spec.maxOutputBytes;
        truncated = true;
        kill();
        return;
      }
      into.push(b);
      sizes[i] += b.length;
    };
    child.stdout!.on("data", collect(0, out));
    child.stderr!.on("data", collect(1, err));
    child.stdin!.on("error", () => {}); // EPIPE: a script that does not read its stdin
    child.stdin!.end(spec.stdin ?? Buffer.alloc(0));
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, Math.min(spec.timeoutMs, 2 ** 31 - 1)); // setTimeout fires at once past 2^31-1 ms
    let exitCode = 0;
    let grace: NodeJS.Timeout | undefined;
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("exit", (code, signal) => {
      exitCode = code ?? 128 + (signal ? osConstants.signals[signal] ?? 0 : 0);
      // The group goes with the script, so a child left holding the
      // outputs open cannot keep the run alive.
      kill();
      // A process that left the group and holds the pipes is not waited for long.
      grace = setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
      }, 2000);
    });
    child.once("close", () => {
      clearTimeout(timer);
      clearTimeout(grace);
      resolve({ exitCode, stdout: Buffer.concat(out), stderr: Buffer.concat(err), timedOut, truncated });
    });
  });
}

/** A plain subprocess in its own process group: no confinement but the limits. */
export class SubprocessSandbox implements Sandbox {
  readonly name = "none";
  run(spec: SandboxSpec): Promise<SandboxResult> {
    return execute(limited(spec.argv, spec.memoryBytes), spec, spec.workspaceDir);
  }
}

const RO_TRY = ["/bin", "/lib", "/lib64", "/lib32", "/etc/alternatives", "/etc/ssl", "/etc/ca-certificates", "/etc/resolv.conf", "/etc/hosts", "/etc/localtime"];

/**
 * bubblewrap: no network (unless the run allows it), a new PID namespace and session, read-only /usr and the
 * interpreter's runtime, the skill read-only at /skill (in command mode, each skill named at its /skills/<folder>),
 * the scratch workspace at /workspace, an empty /tmp; nothing else of the host (no /home, /root, /etc/passwd, host
 * /tmp).
 */
export class BwrapSandbox implements Sandbox {
  readonly name = "bwrap";
  readonly skillMount = "/skill";
  readonly workspaceMount = "/workspace";
  readonly bwrap: string;

  constructor(bwrap?: string) {
    const found = bwrap ?? findOnPath("bwrap", `${process.env.PATH ?? ""}:${SCRIPT_PATH}`);
    if (!found) throw new SandboxUnavailableError("bubblewrap (bwrap) is not installed: install it (apt-get install bubblewrap) or run with sandbox \"none\"");
    this.bwrap = found;
  }

  /** The bwrap command line for a spec. */
  command(spec: SandboxSpec): string[] {
    const a = [this.bwrap, "--unshare-all"];
    if (spec.network) a.push("--share-net");
    a.push("--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr");
    for (const p of RO_TRY) a.push("--ro-bind-try", p, p);
    for (const d of spec.runtimeDirs) a.push("--ro-bind", d, d);
    a.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
    if (spec.skillDir) a.push("--ro-bind", spec.skillDir, this.skillMount);
    for (const s of spec.skills ?? []) a.push("--ro-bind", s.dir, s.mount);
    a.push("--bind", spec.workspaceDir, this.workspaceMount, "--chdir", this.workspaceMount);
    return [...a, "--", ...limited(spec.argv, spec.memoryBytes)];
  }

  run(spec: SandboxSpec): Promise<SandboxResult> {
    return execute(this.command(spec), spec, spec.workspaceDir);
  }
}

let bwrapProbe: BwrapSandbox | null | undefined;

/** A BwrapSandbox when this is Linux and bubblewrap runs a probe (checked once per process), else null. */
export function probeBwrap(): BwrapSandbox | null {
  if (bwrapProbe !== undefined) return bwrapProbe;
  bwrapProbe = null;
  if (process.platform === "linux") {
    try {
      const sb = new BwrapSandbox();
      const tmp = tmpdir();
      const argv = sb.command({ argv: ["/bin/sh", "-c", "true"], env: { PATH: SCRIPT_PATH }, skillDir: tmp, workspaceDir: tmp, runtimeDirs: [], network: false, timeoutMs: 0, maxOutputBytes: 0, memoryBytes: 0 });
      if (spawnSync(argv[0], argv.slice(1), { stdio: "ignore", timeout: 10_000 }).status === 0) bwrapProbe = sb;
    } catch {
      // not installed
    }
  }
  return bwrapProbe;
}

let warnedUnconfined = false;

function chooseSandbox(choice: RunOptions["sandbox"]): Sandbox {
  if (choice && typeof choice === "object") return choice;
  if (choice === "none") return new SubprocessSandbox();
  const bw = probeBwrap();
  if (bw) return bw;
  if (choice === "bwrap") {
    throw new SandboxUnavailableError(
      process.platform === "linux"
        ? "bubblewrap is not available or cannot create a sandbox here: install it (apt-get install bubblewrap), allow unprivileged user namespaces, or run with sandbox \"none\""
        : `bubblewrap needs Linux, this is ${process.platform}: run with sandbox "none" or a Sandbox of your own`,
    );
  }
  if (!warnedUnconfined) process.emitWarning("skill scripts run unconfined: bubblewrap not available");
  warnedUnconfined = true;
  return new SubprocessSandbox();
}

// Running.

export interface RunOptions extends Version {
  /** JSON mode: any JSON value, passed as argv[1] and on stdin; stdout must be one JSON object. */
  jsonArgs?: unknown;
  /** Plain mode: the script's arguments (e.g. file paths in the workspace). */
  args?: string[];
  /** The run's timeout; default the skill's frontmatter metadata "timeout" (seconds, e.g. "120"), else 60 s. */
  timeoutMs?: number;
  /** Aborts the calls to the server (the run itself is bounded by timeoutMs). */
  signal?: AbortSignal;
  /** Each of stdout and stderr; default 1 MiB. */
  maxOutputBytes?: number;
  /** RLIMIT_AS, applied with prlimit; default 1 GiB, 0 for none. */
  memoryBytes?: number;
  /** Allow network access (bwrap only; default false). */
  network?: boolean;
  /** "auto" (default: bwrap if it works here, else none with a warning), "bwrap", "none", or a Sandbox. */
  sandbox?: "auto" | "bwrap" | "none" | Sandbox;
  /** Run in a scratch copy of the thread's /workspace and write changes back (default true); else an empty scratch dir. */
  workspace?: boolean;
  /** Extension (".py") -> interpreter path, over the defaults (python3, node and bash from SCRIPT_PATH, then PATH). */
  interpreters?: Record<string, string>;
  /** The skill cache root (see materializeSkill). */
  cacheDir?: string;
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** JSON mode: the object the script printed. */
  output?: Record<string, unknown>;
  /** Paths under /workspace written back ("/workspace/out.txt"). */
  written: string[];
  /** "bwrap", "none", or a custom Sandbox's name. */
  sandbox: string;
  durationMs: number;
}

function findOnPath(name: string, searchPath: string): string | undefined {
  for (const d of searchPath.split(":")) {
    if (!d) continue;
    const p = path.join(d, name);
    try {
      accessSync(p, fsConstants.X_OK);
      if (statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

// resolveScript finds the script in the skill folder: "x.py" under scripts/
// first, then at the root; every path must stay inside the folder, symlinks
// resolved.
async function resolveScript(skillDir: string, script: string): Promise<string> {
  const outside = () => new ScriptOutsideSkillError(`script ${JSON.stringify(script)} is outside the skill folder: name a file of the skill, e.g. "scripts/run.py" or "run.py"`);
  if (!script) throw new ScriptNotFoundError(`no script named: give a path such as "scripts/run.py"`);
  if (script.startsWith("/") || script.includes("\\") || script.includes("\0")) throw outside();
  const parts = script.split("/");
  if (parts.includes("..")) throw outside();
  const candidates = parts.length === 1 ? [`scripts/${script}`, script] : [parts.filter((p) => p && p !== ".").join("/")];
  const root = await realpath(skillDir);
  for (const rel of candidates) {
    const p = path.join(skillDir, rel);
    let real: string;
    try {
      real = await realpath(p);
    } catch {
      continue;
    }
    if (real !== root && !real.startsWith(root + path.sep)) throw outside(); // the folder itself is inside, and no file
    if ((await stat(real)).isFile()) return rel;
  }
  throw new ScriptNotFoundError(`script ${JSON.stringify(script)} not found in the skill (looked for ${candidates.map((c) => JSON.stringify(c)).join(" and ")}): list the skill's files with getSkill`);
}

interface Interpreter {
  /** The command before the script path ([] for an executable run directly). */
  argv: string[];
  runtimeDirs: string[];
}

// lookupPath is where interpreters named without a folder are found: SCRIPT_PATH, then the caller's PATH.
function lookupPath(): string {
  return `${SCRIPT_PATH}:${process.env.PATH ?? ""}`;
}

async function chooseInterpreter(file: string, rel: string, overrides: Record<string, string> = {}): Promise<Interpreter> {
  const ext = path.extname(rel).toLowerCase();
  const byExt: Record<string, () => string | undefined> = {
    ".py": () => findOnPath("python3", lookupPath()),
    // node from the lookup path, as Go and Python find it, not this process's own: the contract names one
    // interpreter for every runner, and a host without node on its PATH is UnknownInterpreter in all three.
    ".js": () => findOnPath("node", lookupPath()),
    ".mjs": () => findOnPath("node", lookupPath()),
    ".cjs": () => findOnPath("node", lookupPath()),
    ".sh": () => findOnPath("bash", lookupPath()),
  };
  const given = overrides[ext] ?? overrides[ext.slice(1)];
  if (given) {
    // A path must be an executable file; a name is looked up on SCRIPT_PATH, then the caller's PATH.
    const found = given.includes("/") ? findOnPath(path.basename(given), path.dirname(given)) : findOnPath(given, lookupPath());
    if (!found) throw new UnknownInterpreterError(`interpreter ${JSON.stringify(given)} for ${ext} scripts is not installed here (looked on ${SCRIPT_PATH} and PATH)`);
    return { argv: [found], runtimeDirs: runtimeDirs(found) };
  }
  if (byExt[ext]) {
    const interp = byExt[ext]();
    if (!interp) throw new UnknownInterpreterError(`no interpreter for ${ext} scripts on ${SCRIPT_PATH}: install it, or name one with interpreters {"${ext}": "/path/to/it"}`);
    return { argv: [interp], runtimeDirs: runtimeDirs(interp) };
  }
  const f = await open(file);
  const head = Buffer.alloc(256);
  const { bytesRead } = await f.read(head, 0, 256, 0);
  await f.close();
  const first = head.subarray(0, bytesRead).toString("utf8").split("\n")[0];
  if (first.startsWith("#!")) {
    const words = first.slice(2).trim().split(/\s+/).filter(Boolean);
    let argv = words;
    if (words[0] === "/usr/bin/env" || words[0] === "/bin/env") {
      // env X, or env -S X -flags: the flags are the interpreter's.
      const rest = words[1] === "-S" ? words.slice(2) : words.slice(1);
      const found = rest[0] ? findOnPath(rest[0], lookupPath()) : undefined;
      if (!found) throw new UnknownInterpreterError(`the shebang of ${rel} names ${JSON.stringify(rest[0] ?? "")}, which is not on ${SCRIPT_PATH}`);
      argv = [found, ...rest.slice(1)];
    }
    if (!argv.length || !existsSync(argv[0])) throw new UnknownInterpreterError(`the shebang of ${rel} names ${JSON.stringify(argv[0] ?? "")}, which does not exist here`);
    return { argv, runtimeDirs: runtimeDirs(argv[0]) };
  }
  // Only a program runs itself: a text file without a #! line would be run by /bin/sh or not at all, depending on who execs it.
  if ((await stat(file)).mode & 0o111 && head.subarray(0, 4).toString("latin1") === "\x7fELF") return { argv: [], runtimeDirs: [] };
  throw new UnknownInterpreterError(`cannot tell how to run ${rel}: not .py, .js, .mjs, .cjs or .sh, no shebang and not executable; name an interpreter with interpreters {"${ext || rel}": "/path/to/it"}`);
}

const SYSTEM = ["/usr/", "/bin/", "/lib/", "/lib64/", "/lib32/"];

// runtimeDirs: what bwrap must bind for an interpreter that lives outside
// /usr: its install prefix (both the path given and where its links lead),
// and a venv's base interpreter (pyvenv.cfg's home).
function runtimeDirs(interp: string): string[] {
  const dirs = new Set<string>();
  const add = (p: string) => {
    if (!SYSTEM.some((s) => (p + "/").startsWith(s)) && p !== "/") dirs.add(p);
  };
  for (const p of [interp, safeRealpath(interp)]) {
    if (SYSTEM.some((s) => p.startsWith(s))) continue;
    const prefix = path.dirname(path.dirname(p));
    add(prefix);
    try {
      const home = /^home\s*=\s*(.+)$/m.exec(readFileSync(path.join(prefix, "pyvenv.cfg"), "utf8"))?.[1]?.trim();
      if (home) add(path.dirname(safeRealpath(home)));
    } catch {
      // not a venv
    }
  }
  return [...dirs];
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** A run's own timeout, when given, is a positive finite number of milliseconds (0 is not "the default"). */
function checkTimeout(timeoutMs: number | undefined): void {
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new SkillsvcError(Code.InvalidArgument, `timeoutMs must be a positive number of milliseconds, not ${timeoutMs}`);
  }
}

function skillTimeoutMs(skill: SkillSummary): number | undefined {
  const t = skill.metadata?.timeout;
  if (t === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(t) || Number(t) <= 0) return undefined;
  return Number(t) * 1000;
}

/** The thread's /workspace files: path -> sha256 of what was downloaded. */
async function pullWorkspace(client: SkillsvcClient, scratch: string, call: Call): Promise<Map<string, string>> {
  const files: { path: string; rel: string }[] = [];
  let bytes = 0;
  async function visit(dir: string) {
    let pageToken = "";
    do {
      let page;
      try {
        page = await client.list({ path: dir, pageToken }, call);
      } catch (err) {
        if (dir === "/workspace" && err instanceof SkillsvcError && err.code === Code.NotFound) return;
        throw err;
      }
      for (const e of page.entries) {
        if (e.isDir) {
          await visit(e.path);
          continue;
        }
        bytes += Number(e.size);
        files.push({ path: e.path, rel: e.path.slice("/workspace/".length) });
        if (files.length > MAX_WORKSPACE_FILES || bytes > MAX_WORKSPACE_BYTES) {
          throw new WorkspaceTooLargeError(
            `the thread's /workspace holds more than ${MAX_WORKSPACE_FILES} files or ${MAX_WORKSPACE_BYTES >> 20} MiB: remove what the script does not need, or run with workspace: false`,
          );
        }
      }
      pageToken = page.nextPageToken;
    } while (pageToken);
  }
  await visit("/workspace");
  const hashes = new Map<string, string>();
  for (const f of files) {
    const data = await client.download(f.path, {}, call);
    const local = path.join(scratch, ...f.rel.split("/"));
    if (!local.startsWith(scratch + path.sep)) continue;
    await mkdir(path.dirname(local), { recursive: true });
    await writeFile(local, data);
    hashes.set(f.rel, createHash("sha256").update(data).digest("hex"));
  }
  return hashes;
}

// pushWorkspace writes back what the script created or changed (by
// content), .home/ aside; deletions are not propagated.
async function pushWorkspace(client: SkillsvcClient, scratch: string, before: Map<string, string>, call: Call, out: ScriptOutput): Promise<string[]> {
  const { files } = await walk(scratch, (rel) => rel === ".home");
  const changed: { rel: string; data: Buffer }[] = [];
  let bytes = 0;
  for (const rel of files) {
    const data = await readFile(path.join(scratch, rel));
    if (before.get(rel) === createHash("sha256").update(data).digest("hex")) continue;
    bytes += data.length;
    if (bytes > MAX_WORKSPACE_BYTES) {
      throw new WorkspaceTooLargeError(`the script wrote more than ${MAX_WORKSPACE_BYTES >> 20} MiB to its workspace; nothing was written back`, out);
    }
    changed.push({ rel, data });
  }
  const written: string[] = [];
  for (const c of changed) {
    await client.upload(`/workspace/${c.rel}`, c.data, {}, call);
    written.push(`/workspace/${c.rel}`);
  }
  return written;
}

// A run in scratch: the parts runSkillScript and runCommand share.

interface Scratch {
  /** The run's own temporary folder: workspace/ and, for a plain subprocess in command mode, skills/. */
  root: string;
  /** The scratch copy of the thread's /workspace on this machine. */
  dir: string;
  /** The thread's files as pulled: path -> sha256 (empty without the workspace). */
  before: Map<string, string>;
}

// inScratch pulls the thread's /workspace (unless workspace is false) into a
// scratch folder of its own, runs fn there, and removes it afterwards.
async function inScratch<T>(client: SkillsvcClient, call: Call, workspace: boolean | undefined, fn: (s: Scratch) => Promise<T>): Promise<T> {
  const root = await realpath(await mkdtemp(path.join(tmpdir(), "skillsvc-run-")));
  try {
    const dir = path.join(root, "workspace");
    await mkdir(dir);
    const before = workspace === false ? new Map<string, string>() : await pullWorkspace(client, dir, call);
    await mkdir(path.join(dir, ".home"), { recursive: true });
    return await fn({ root, dir, before });
  } finally {
    await removeTree(root);
  }
}

// scriptEnv is the whole environment of a run: nothing of the caller's.
function scriptEnv(workspaceSeen: string, extra: Record<string, string> = {}): Record<string, string> {
  // PWD: bwrap's --chdir sets it whatever the environment says, so every sandbox does.
  return { PATH: SCRIPT_PATH, HOME: path.posix.join(workspaceSeen, ".home"), LANG: "C.UTF-8", ...extra, WORKSPACE: workspaceSeen, PWD: workspaceSeen };
}

function outputOf(r: SandboxResult): ScriptOutput {
  return { stdout: r.stdout.toString("utf8"), stderr: r.stderr.toString("utf8"), exitCode: r.exitCode };
}

/**
 * Runs a script of a skill where this process runs: materialized (see materializeSkill), in a scratch copy of the
 * thread's /workspace whose new and changed files are written back, under the sandbox chosen. JSON mode (jsonArgs)
 * returns the object the script printed as output; plain mode (args) returns stdout, stderr and exit code as they are.
 */
export async function runSkillScript(client: SkillsvcClient, skill: string, script: string, opts: RunOptions = {}): Promise<RunResult> {
  const { jsonArgs, args, timeoutMs: runTimeoutMs, maxOutputBytes, memoryBytes, network, sandbox: choice, workspace, interpreters, cacheDir, signal, version } = opts;
  const call: Call = { signal };
  if (jsonArgs !== undefined && args !== undefined) throw new SkillsvcError(Code.InvalidArgument, "give jsonArgs or args, not both");
  checkTimeout(runTimeoutMs);
  const sandbox = chooseSandbox(choice);
  const m = await materializeSkill(client, skill, { signal, version, cacheDir });
  const rel = await resolveScript(m.dir, script);
  const interp = await chooseInterpreter(path.join(m.dir, rel), rel, interpreters);
  const timeoutMs = runTimeoutMs ?? skillTimeoutMs(m.skill) ?? DEFAULT_TIMEOUT_MS;
  const json = jsonArgs === undefined ? undefined : JSON.stringify(jsonArgs);
  if (jsonArgs !== undefined && json === undefined) throw new SkillsvcError(Code.InvalidArgument, "jsonArgs is not a JSON value");

  return inScratch(client, call, workspace, async (scratch) => {
    const skillSeen = sandbox.skillMount ?? m.dir;
    const wsSeen = sandbox.workspaceMount ?? scratch.dir;
    const spec: SandboxSpec = {
      argv: [...interp.argv, path.posix.join(skillSeen, rel), ...(json !== undefined ? [json] : (args ?? []))],
      env: scriptEnv(wsSeen, { SKILL_DIR: skillSeen, SKILL_TIMEOUT: String(Math.ceil(timeoutMs / 1000)) }),
      stdin: json !== undefined ? Buffer.from(json) : undefined,
      skillDir: m.dir,
      workspaceDir: scratch.dir,
      runtimeDirs: interp.runtimeDirs,
      network: network ?? false,
      timeoutMs,
      maxOutputBytes: maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      memoryBytes: memoryBytes ?? DEFAULT_MEMORY_BYTES,
    };
    const started = performance.now();
    const r = await sandbox.run(spec);
    const durationMs = performance.now() - started;
    const out = outputOf(r);
    // Killed by the runner: no exit code of the script's (Go's -1, Python's None).
    const killed = { stdout: out.stdout, stderr: out.stderr };
    if (r.timedOut) {
      throw new ScriptTimeoutError(`script ${rel} of ${m.skill.name} ran longer than its timeout of ${timeoutMs / 1000} s and was killed with its processes; nothing was written back`, killed);
    }
    if (r.truncated) {
      throw new OutputTooLargeError(`script ${rel} of ${m.skill.name} printed more than ${spec.maxOutputBytes} bytes on stdout or stderr and was killed; its output is cut there`, killed);
    }
    // A run that ended is written back before its output is judged: it is the script's work, whatever it printed.
    const written = workspace === false ? [] : await pushWorkspace(client, scratch.dir, scratch.before, call, out);
    let output: Record<string, unknown> | undefined;
    if (json !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(out.stdout!);
      } catch {
        parsed = undefined;
      }
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
        throw new BadOutputError(`script ${rel} of ${m.skill.name} exited with ${r.exitCode} and did not print one JSON object on stdout (see stdout and stderr)`, out);
      }
      output = parsed as Record<string, unknown>;
    }
    return { exitCode: r.exitCode, stdout: out.stdout!, stderr: out.stderr!, output, written, sandbox: sandbox.name, durationMs };
  });
}

// Command mode: what a Deep Agents backend's execute runs.

/** The options of runCommand: those of a script run that apply to a shell command. */
export type CommandOptions = Pick<RunOptions, "timeoutMs" | "signal" | "maxOutputBytes" | "memoryBytes" | "network" | "sandbox" | "workspace" | "cacheDir">;

export interface CommandResult {
  /** The shell's exit code; null when the command was killed (timeout, or too much output). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** Killed when its timeout passed. */
  timedOut: boolean;
  /** Killed when stdout or stderr went over maxOutputBytes; each is cut there. */
  truncated: boolean;
  /** Paths under /workspace written back ("/workspace/out.txt"); none when the command was killed. */
  written: string[];
  /** The skill folders the command named, mounted read-only at these paths ("/skills/docs/pdf"). */
  skills: string[];
  /** "bwrap", "none", or a custom Sandbox's name. */
  sandbox: string;
  /** The timeout the command ran with. */
  timeoutMs: number;
  durationMs: number;
}

/** The most skill folders one command can name (each costs a GetSkill and perhaps an export). */
export const MAX_COMMAND_SKILLS = 16;

// A path under /skills in a command (as the Python client reads it).
const SKILL_PATH = /(?<![\w.~/$-])\/skills((?:\/[A-Za-z0-9_.@+-]+)+)/g;
// /workspace or /skills where a command's text names them (not inside a
// longer path or name): the plain subprocess rewrites them to local paths.
const SEEN_ROOTS = /(?<![\w.~/$-])\/(workspace|skills)(?=\/|$|[^\w.-])/g;
// What a rewritten command can carry unquoted in any shell context.
const PLAIN_PATH = /^[A-Za-z0-9_./-]+$/;

// namedSkills materializes every skill a command names by a path under
// /skills: /skills/<a>/... is the skill /skills/<a> when there is one,
// else /skills/<a>/<b> (a skill in category a). A path in no skill is the
// command's error (INVALID_ARGUMENT), as in the Python client.
async function namedSkills(client: SkillsvcClient, command: string, opts: CommandOptions): Promise<{ mount: string; dir: string }[]> {
  const found = new Map<string, string>();
  const tried = new Map<string, string | undefined>();
  for (const m of command.matchAll(SKILL_PATH)) {
    const parts = m[1].replace(/^\/+|\/+$/g, "").split("/");
    let folder: string | undefined;
    for (let depth = 1; depth <= Math.min(2, parts.length); depth++) {
      const candidate = `/skills/${parts.slice(0, depth).join("/")}`;
      if (found.has(candidate)) {
        folder = candidate;
        break;
      }
      if (parts.slice(0, depth).some((p) => p === "." || p === "..")) break;
      if (!tried.has(candidate)) {
        tried.set(candidate, undefined);
        try {
          const mat = await materializeSkill(client, candidate, { signal: opts.signal, cacheDir: opts.cacheDir });
          if (mat.skill.path.replace(/\/+$/, "") === candidate) tried.set(candidate, mat.dir);
        } catch (err) {
          const e = SkillsvcError.from(err);
          if (e.code !== Code.NotFound) throw e;
        }
      }
      const dir = tried.get(candidate);
      if (dir !== undefined) {
        if (found.size >= MAX_COMMAND_SKILLS) throw new SkillsvcError(Code.InvalidArgument, `the command names more than ${MAX_COMMAND_SKILLS} skills; run it in parts`);
        found.set(candidate, dir);
        folder = candidate;
        break;
      }
    }
    if (folder === undefined) {
      throw new SkillsvcError(
        Code.InvalidArgument,
        `${m[0]} is in no skill: a command sees the skills it names by their folders, /skills/<skill>/... or /skills/<category>/<skill>/... (the ls tool lists /skills)`,
      );
    }
  }
  return [...found].map(([mount, dir]) => ({ mount, dir }));
}

/**
 * A command's /workspace and /skills path prefixes rewritten to root/workspace and root/skills, for a sandbox that
 * shows the command this machine's own file system. root must be a plain path (letters, digits, _ . / -).
 */
export function localPaths(command: string, root: string): string {
  if (!PLAIN_PATH.test(root)) {
    throw new SandboxUnavailableError(`the scratch directory ${root} has characters a rewritten command cannot carry: set TMPDIR to a plain path`);
  }
  return command.replace(SEEN_ROOTS, (_, name: string) => `${root}/${name}`);
}

/**
 * Runs `bash -c command` where this process runs, as runSkillScript runs a script: in a scratch copy of the thread's
 * /workspace, seen as /workspace and the working directory, whose new and changed files are written back after the
 * command exits by itself; with every skill it names by a path under /skills/ (e.g. /skills/docs/pdf/scripts/x.py)
 * materialized and seen read-only at that path; under the sandbox chosen, with the same limits (timeout 60 s unless
 * given, output and memory caps, no network). Under bubblewrap the folders are mounted at those paths; a plain
 * subprocess gets the command with its /workspace and /skills path prefixes rewritten to local folders. A timeout or
 * too much output is reported in the result (exitCode null), not thrown.
 */
export async function runCommand(client: SkillsvcClient, command: string, opts: CommandOptions = {}): Promise<CommandResult> {
  const { timeoutMs = DEFAULT_TIMEOUT_MS, maxOutputBytes, memoryBytes, network, sandbox: choice, workspace, signal } = opts;
  const call: Call = { signal };
  if (typeof command !== "string" || !command.trim()) throw new SkillsvcError(Code.InvalidArgument, "the command is empty");
  if (command.includes("\0")) throw new SkillsvcError(Code.InvalidArgument, "the command holds a NUL byte");
  checkTimeout(timeoutMs);
  const sandbox = chooseSandbox(choice);
  const bash = findOnPath("bash", SCRIPT_PATH);
  if (!bash) throw new UnknownInterpreterError(`bash is not on ${SCRIPT_PATH}: install it to run commands`);
  const skills = await namedSkills(client, command, opts);

  return inScratch(client, call, workspace, async (scratch) => {
    let seen = command;
    const wsSeen = sandbox.workspaceMount ?? scratch.dir;
    if (!sandbox.workspaceMount) {
      // The plain subprocess sees this machine: <root>/workspace is the scratch copy, <root>/skills/<folder> links to the cache.
      for (const s of skills) {
        const link = path.join(scratch.root, ...s.mount.split("/").filter(Boolean));
        await mkdir(path.dirname(link), { recursive: true });
        await symlink(s.dir, link);
      }
      seen = localPaths(command, scratch.root);
    }
    const spec: SandboxSpec = {
      argv: [bash, "-c", seen],
      env: scriptEnv(wsSeen), // a script's, without SKILL_DIR and SKILL_TIMEOUT
      skillDir: "",
      skills: sandbox.workspaceMount ? skills : undefined,
      workspaceDir: scratch.dir,
      runtimeDirs: [],
      network: network ?? false,
      timeoutMs,
      maxOutputBytes: maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      memoryBytes: memoryBytes ?? DEFAULT_MEMORY_BYTES,
    };
    const started = performance.now();
    const r = await sandbox.run(spec);
    const durationMs = performance.now() - started;
    const out = outputOf(r);
    const killed = r.timedOut || r.truncated;
    const written = killed || workspace === false ? [] : await pushWorkspace(client, scratch.dir, scratch.before, call, out);
    return {
      exitCode: killed ? null : r.exitCode,
      stdout: out.stdout!,
      stderr: out.stderr!,
      timedOut: r.timedOut,
      truncated: r.truncated,
      written,
      skills: skills.map((s) => s.mount),
      sandbox: sandbox.name,
      timeoutMs,
      durationMs,
    };
  });
}
