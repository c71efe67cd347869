// Starts cmd/testenv — MinIO plus the real skillsvc binary with the example
// library uploaded for alice — once per test process. A testenv that cannot
// start is reported at once, with its exit code and the last lines it wrote.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { SkillsvcError } from "@skillsvc/client";

// Directories tempDir made, removed when the test process exits (each test
// file runs in its own process), whatever the tests did with them.
const tempDirs: string[] = [];
process.once("exit", () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** A new directory under the system's temp directory, removed when the test process exits. */
export async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const examples = path.join(repoRoot, "examples/skills");

/** How to point the suite at testenv, for the errors that need it. */
export const how =
  "set SKILLSVC_TESTENV to a testenv binary (`go build -o testenv ./cmd/testenv` in a skillsvc checkout; it also needs " +
  "SKILLSVC_BIN, a skillsvc binary from `go build -o skillsvc ./cmd/skillsvc`, and MinIO as SKILLSVC_MINIO_BIN or " +
  "minio on the PATH), or run the suite in a skillsvc checkout";

export interface Env {
  grpc_addr: string;
  http_addr: string;
  user: string;
  /** With testenv's --tls or --mtls: PEM files of its CA and of a client certificate that CA issued. */
  ca_file?: string;
  client_cert_file?: string;
  client_key_file?: string;
  target: string;
  stop(): Promise<void>;
}

const started = new Map<string, Promise<Env>>();

/**
 * The shared environment, or one whose skillsvc also gets extraFlags (one
 * per distinct set); SKILLSVC_TESTENV is set by the Makefile, else testenv
 * is built on the fly.
 */
export function testenv(extraFlags: string[] = [], testenvFlags: string[] = []): Promise<Env> {
  const key = [...testenvFlags, "--", ...extraFlags].join(" ");
  if (!started.has(key)) started.set(key, start(extraFlags, testenvFlags));
  return started.get(key)!;
}

const checkout = existsSync(path.join(repoRoot, "cmd/testenv"));

/** $SKILLSVC_TESTENV, else `go run ./cmd/testenv` in the checkout this file is in. */
function command(): [string, string[]] {
  const bin = process.env.SKILLSVC_TESTENV;
  if (bin) return [bin, []];
  if (!checkout) throw new Error(`${repoRoot} is not a skillsvc checkout (no cmd/testenv): ${how}`);
  return ["go", ["run", "./cmd/testenv"]];
}

/** Starts a testenv of its own (testenv shares them); it rejects as soon as testenv exits before serving. */
export async function start(extraFlags: string[], testenvFlags: string[], timeoutMs = 180_000): Promise<Env> {
  const [cmd, args] = command();
  // In the checkout, so a testenv without SKILLSVC_BIN can build skillsvc.
  const child = spawn(cmd, [...args, ...testenvFlags, "--", ...extraFlags], {
    cwd: checkout ? repoRoot : process.cwd(),
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin!.on("error", () => {}); // EPIPE once testenv is gone: its exit is what is reported
  // skillsvc's log: its last 64 KiB kept, and shown only if testenv fails to start.
  const log: Buffer[] = [];
  let logBytes = 0;
  child.stderr!.on("data", (b: Buffer) => {
    log.push(b);
    for (logBytes += b.length; logBytes > 64 << 10 && log.length > 1; ) logBytes -= log.shift()!.length;
  });
  const tail = () => Buffer.concat(log).toString().trimEnd().split("\n").slice(-40).join("\n") || "(nothing)";
  const line = await new Promise<string>((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdin!.end(); // testenv's signal to stop, also under go run
      reject(new Error(`${why}; testenv (${cmd}) wrote last:\n${tail()}`));
    };
    const timer = setTimeout(() => {
      fail(`testenv did not start within ${timeoutMs / 1000} s`);
      child.kill();
    }, timeoutMs);
    child.once("error", (err) => fail(`cannot run testenv (${cmd}): ${err.message}; ${how}`));
    createInterface({ input: child.stdout! }).once("line", (l) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(l);
    });
    // "close" comes once stderr is read to its end; a child of testenv
    // still holding it open must not delay the report for long.
    child.once("exit", (code, signal) => {
      const why = `testenv exited with ${signal ?? `code ${code}`} before serving`;
      child.once("close", () => fail(why));
      setTimeout(() => fail(why), 2000).unref();
    });
  });
  let env: Omit<Env, "target" | "stop">;
  try {
    env = JSON.parse(line);
  } catch (err) {
    child.stdin!.end();
    throw new Error(`testenv printed ${JSON.stringify(line)}, not its JSON line: ${err}; its last lines:\n${tail()}`);
  }
  // Closing stdin is testenv's signal to stop both servers and clean up.
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.stdin!.end();
    });
  return { ...env, target: `${env.ca_file ? "https" : "http"}://${env.grpc_addr}`, stop };
}

/** The canonical code a call ends with ("OK" when it succeeds); anything but a SkillsvcError fails the test. */
export async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SkillsvcError, String(err));
    return err.codeName;
  }
  return "OK";
}

/** Live (not zombie) processes whose command line holds marker: what a killed run must not leave behind. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const state = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0];
      if (cmd.includes(marker) && state !== "Z") found.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
