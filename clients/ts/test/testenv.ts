// Starts cmd/testenv — MinIO plus the real skillsvc binary with the example
// library uploaded for alice — once per test process.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { SkillsvcError } from "@skillsvc/client";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const examples = path.join(repoRoot, "examples/skills");

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

async function start(extraFlags: string[], testenvFlags: string[]): Promise<Env> {
  const bin = process.env.SKILLSVC_TESTENV;
  const [cmd, args] = bin ? [bin, []] : ["go", ["run", "./cmd/testenv"]];
  const child = spawn(cmd, [...args, ...testenvFlags, "--", ...extraFlags], { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
  // skillsvc's log: kept, and printed only if testenv fails to start.
  const log: Buffer[] = [];
  child.stderr!.on("data", (b: Buffer) => log.push(b));
  const tail = () => Buffer.concat(log).toString().split("\n").slice(-30).join("\n");
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`testenv did not start within 180 s:\n${tail()}`)), 180_000);
    createInterface({ input: child.stdout! }).once("line", (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once("exit", (code) => reject(new Error(`testenv exited with ${code}:\n${tail()}`)));
  });
  const env = JSON.parse(line) as Omit<Env, "target" | "stop">;
  // Closing stdin is testenv's signal to stop both servers and clean up.
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
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
