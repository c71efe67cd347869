// The skill script runner against the real binary on MinIO: a skill
// "runner-test" uploaded for a user of its own, materialized into a cache of
// the test's and run under bubblewrap and as a plain subprocess.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { appendFile, chmod, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { after, before, test } from "node:test";

import {
  BadOutputError,
  Code,
  OutputTooLargeError,
  ScriptNotFoundError,
  ScriptOutsideSkillError,
  ScriptTimeoutError,
  SkillsvcClient,
  SkillsvcError,
  UnknownInterpreterError,
  WorkspaceTooLargeError,
  probeBwrap,
  type RunOptions,
} from "@skillsvc/client";
import { repoRoot, tempDir, testenv, type Env } from "./testenv.js";

const SKILL: Record<string, string> = {
  "SKILL.md": "---\nname: runner-test\ndescription: Scripts for the runner's tests.\n---\nRun the scripts.\n",
  // JSON contract: echoes what it got, and its environment's names.
  "scripts/echo.py": `import json, os, sys
arg = sys.argv[1]
stdin = sys.stdin.read()
print(json.dumps({"args": json.loads(arg), "stdin_equal": stdin == arg, "argc": len(sys.argv),
                  "env": dict(os.environ), "cwd": os.getcwd()}))
`,
  "scripts/plain.sh": 'echo "args: $*"\necho "to stderr" >&2\nexit 3\n',
  "scripts/term.sh": "echo dying\nkill -TERM $$\n",
  "scripts/bad.py": 'print("not json")\n',
  "scripts/fail.py": 'import json, sys\nprint(json.dumps({"error": "bad input"}))\nsys.exit(2)\n',
  "scripts/hello.mjs": 'console.log(JSON.stringify({ node: process.version, got: JSON.parse(process.argv[2]) }));\n',
  "scripts/tool": '#!/usr/bin/env python3\nimport sys\nprint("tool", *sys.argv[1:])\n',
  // Starts a child (its command line carries the marker) that would write
  // the late file, prints its pid, and outlives any timeout.
  "scripts/sleepy.py": `import subprocess, sys, time
marker, late = sys.argv[1], sys.argv[2]
child = subprocess.Popen(["/bin/sh", "-c", 'sleep 30; echo late > "$1"', marker, late])
print(child.pid, flush=True)
time.sleep(60)
`,
  "scripts/net.py": `import json, socket, sys
port = json.loads(sys.argv[1])["port"]
try:
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    print(json.dumps({"connected": True}))
except OSError as e:
    print(json.dumps({"connected": False, "error": str(e)}))
`,
  // Tries to read a host file and to write into the skill folder.
  "scripts/probe.py": `import json, os, sys
out = {}
try:
    out["read"] = open(json.loads(sys.argv[1])["host_file"]).read()
except OSError as e:
    out["read_error"] = str(e)
try:
    open(os.path.join(os.environ["SKILL_DIR"], "scripts", "pwned.txt"), "w").write("x")
    out["wrote_skill"] = True
except OSError as e:
    out["wrote_skill"] = False
print(json.dumps(out))
`,
  // Reads a workspace file and writes a derived one, creating a folder.
  "scripts/upper.py": `import os, sys
text = open(sys.argv[1]).read()
os.makedirs("out", exist_ok=True)
open("out/result.txt", "w").write(text.upper())
open(os.path.join(os.environ["HOME"], "cache"), "w").write("not written back")
print("done")
`,
  "scripts/loud.py": 'import sys\nsys.stdout.write("x" * 100000)\n',
  "scripts/big.py": 'open("big.bin", "wb").truncate((64 << 20) + 1)\n',
  "scripts/hog.py": 'b = bytearray(300 << 20)\nprint(len(b))\n',
  "references/notes.txt": "not a script\n",
};

let env: Env;
let base: SkillsvcClient;
let user: string;
let cacheDir: string;
const bwrap = probeBwrap();
const required = process.env.SKILLSVC_REQUIRE_SERVERS === "1";

before(async () => {
  env = await testenv();
  const admin = new SkillsvcClient({ target: env.target });
  user = `ts-run-${randomUUID().slice(0, 8)}`;
  for (const [rel, content] of Object.entries(SKILL)) await admin.putLibraryFile({ path: `runner-test/${rel}`, data: Buffer.from(content), user });
  // A per-skill timeout in the frontmatter's metadata.
  await admin.putLibraryFile({ path: "runner-slow/SKILL.md", data: Buffer.from('---\nname: runner-slow\ndescription: Slow.\nmetadata:\n  timeout: "7"\n---\nSlow.\n'), user });
  await admin.putLibraryFile({ path: "runner-slow/scripts/t.sh", data: Buffer.from('echo "$SKILL_TIMEOUT"\n'), user });
  await admin.dropSkillIndex({ user });
  base = admin.withIdentity({ user });
  cacheDir = await tempDir("skillsvc-cache-");
});
after(async () => env?.stop());

const client = () => base.withIdentity({ thread: `ts-run-${randomUUID().slice(0, 12)}` });
const run = (c: SkillsvcClient, script: string, opts: RunOptions = {}) => c.runSkillScript("runner-test", script, { cacheDir, ...opts });

// The bwrap cases fail, never skip, when the suite must run everything.
function sandboxes(): ("none" | "bwrap")[] {
  return bwrap || required ? ["none", "bwrap"] : ["none"];
}
function needBwrap(t: { skip: (msg: string) => void }): boolean {
  if (bwrap) return true;
  if (required) assert.fail("bubblewrap is not available (apt-get install -y bubblewrap): the confinement tests cannot run");
  t.skip("bubblewrap not available");
  return false;
}

async function throws<E extends Error>(p: Promise<unknown>, cls: new (...a: never[]) => E): Promise<E> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof cls, `want ${cls.name}, got ${String(err)}`);
    return err as E;
  }
  assert.fail(`want ${cls.name}`);
}

test("JSON contract round trip", async () => {
  process.env.AWS_SECRET_ACCESS_KEY = "must-not-leak";
  for (const sandbox of sandboxes()) {
    const args = { name: "x", n: [1, 2, { deep: "ü" }], quote: "it's \"quoted\"" };
    const r = await run(client(), "echo.py", { jsonArgs: args, sandbox });
    assert.equal(r.sandbox, sandbox);
    assert.equal(r.exitCode, 0);
    assert.deepEqual(r.output!.args, args);
    assert.equal(r.output!.stdin_equal, true);
    assert.equal(r.output!.argc, 2);
    const e = r.output!.env as Record<string, string>;
    // bwrap sets PWD to its --chdir; nothing comes from the caller's environment.
    assert.deepEqual(Object.keys(e).filter((k) => k !== "PWD").sort(), ["HOME", "LANG", "PATH", "SKILL_DIR", "SKILL_TIMEOUT", "WORKSPACE"]);
    assert.equal(e.PATH, "/usr/local/bin:/usr/bin:/bin");
    assert.equal(e.SKILL_TIMEOUT, "60");
    assert.equal(e.LANG, "C.UTF-8");
    assert.equal(r.output!.cwd, e.WORKSPACE);
    assert.equal(e.HOME, `${e.WORKSPACE}/.home`);
    if (sandbox === "bwrap") assert.deepEqual([e.SKILL_DIR, e.WORKSPACE], ["/skill", "/workspace"]);
    assert.deepEqual(r.written, []);

    // Node starts under the default 1 GiB RLIMIT_AS.
    const n = await run(client(), "scripts/hello.mjs", { jsonArgs: [1], sandbox });
    assert.deepEqual([n.output!.got, n.stderr], [[1], ""]);
  }
});

test("plain args, exit code and interpreters", async () => {
  for (const sandbox of sandboxes()) {
    const r = await run(client(), "plain.sh", { args: ["a b", "c"], sandbox });
    assert.deepEqual([r.exitCode, r.stdout, r.stderr, r.output], [3, "args: a b c\n", "to stderr\n", undefined]);
    const t = await run(client(), "tool", { args: ["x"], sandbox }); // by its shebang
    assert.equal(t.stdout, "tool x\n");
    // Its own SIGTERM: 128 + 15, as a shell (and the other runners) report it.
    const k = await run(client(), "term.sh", { sandbox });
    assert.deepEqual([k.exitCode, k.stdout], [143, "dying\n"]);
  }
  // A JSON object with a non-zero exit is a result, not an error.
  const f = await run(client(), "fail.py", { jsonArgs: {} });
  assert.deepEqual([f.exitCode, f.output], [2, { error: "bad input" }]);
  // The memory limit holds.
  const hog = await run(client(), "hog.py", { memoryBytes: 100 << 20 });
  assert.notEqual(hog.exitCode, 0);
  assert.match(hog.stderr, /MemoryError/);
});

test("timeout: the skill's metadata, the run's option over it", async () => {
  const c = client();
  assert.equal((await c.runSkillScript("runner-slow", "t.sh", { cacheDir })).stdout, "7\n");
  assert.equal((await c.runSkillScript("runner-slow", "t.sh", { cacheDir, timeoutMs: 5000 })).stdout, "5\n");
});

test("a venv's python under bwrap", async (t) => {
  // The venv and its base interpreter live outside /usr: both are bound.
  const venv = process.env.VIRTUAL_ENV || path.join(repoRoot, ".venv");
  if (!existsSync(path.join(venv, "bin/python"))) return t.skip(`no venv at ${venv}`);
  if (!needBwrap(t)) return;
  const r = await run(client(), "echo.py", { jsonArgs: { v: 1 }, sandbox: "bwrap", interpreters: { ".py": path.join(venv, "bin/python") } });
  assert.deepEqual([r.exitCode, r.output!.args], [0, { v: 1 }], r.stderr);
});

test("BadOutput on non-JSON", async () => {
  const err = await throws(run(client(), "bad.py", { jsonArgs: { a: 1 } }), BadOutputError);
  assert.deepEqual([err.stdout, err.exitCode, err.kind, err.code], ["not json\n", 0, "BadOutput", Code.FailedPrecondition]);
  assert.ok(err instanceof SkillsvcError);
});

test("scripts outside the skill, missing, or without an interpreter", async () => {
  const c = client();
  for (const s of ["../x", "/etc/passwd", "scripts/../../x", "../../../../etc/passwd"]) {
    await throws(run(c, s, { args: [] }), ScriptOutsideSkillError);
  }
  // A symlink leaving the skill cannot be tested here: an export carries only
  // files and directories, and extraction refuses links. resolveScript still
  // checks the resolved path.
  await throws(run(c, "nope.py"), ScriptNotFoundError);
  await throws(run(c, "scripts/nope.py"), ScriptNotFoundError);
  await throws(run(c, "references/notes.txt"), UnknownInterpreterError);
});

test("output over maxOutputBytes", async () => {
  const err = await throws(run(client(), "loud.py", { args: [], maxOutputBytes: 1000 }), OutputTooLargeError);
  assert.equal(err.stdout, "x".repeat(1000));
});

// processesWith: live (not zombie) processes whose command line holds marker.
function processesWith(marker: string): number[] {
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

test("timeout kills the script's children", async (t) => {
  for (const sandbox of sandboxes()) {
    if (sandbox === "bwrap" && !needBwrap(t)) continue;
    const marker = `marker-${randomUUID()}`;
    const late = path.join(await tempDir("late-"), "late.txt");
    const err = await throws(run(client(), "sleepy.py", { args: [marker, late], timeoutMs: 3000, sandbox }), ScriptTimeoutError);
    assert.equal(err.kind, "Timeout");
    assert.deepEqual(processesWith(marker), [], "a child of the script outlived the timeout");
    assert.ok(!existsSync(late));
  }
});

test("bwrap: no network, no host files, read-only skill", async (t) => {
  if (!needBwrap(t)) return;
  const connections: unknown[] = [];
  const server: Server = createServer((s) => {
    connections.push(s);
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const port = (server.address() as { port: number }).port;
    const r = await run(client(), "net.py", { jsonArgs: { port }, sandbox: "bwrap" });
    assert.equal(r.output!.connected, false, JSON.stringify(r.output));
    assert.equal(connections.length, 0);
    // The same script reaches it with network allowed, and so does it unconfined: the listener works.
    const open = await run(client(), "net.py", { jsonArgs: { port }, sandbox: "bwrap", network: true });
    assert.equal(open.output!.connected, true, JSON.stringify(open.output));
  } finally {
    server.close();
  }

  const hostFile = path.join(await tempDir("host-"), "secret.txt");
  await writeFile(hostFile, "secret");
  const p = await run(client(), "probe.py", { jsonArgs: { host_file: hostFile }, sandbox: "bwrap" });
  assert.equal(p.output!.read, undefined);
  assert.match(String(p.output!.read_error), /No such file/);
  assert.equal(p.output!.wrote_skill, false);
  const unconfined = await run(client(), "probe.py", { jsonArgs: { host_file: hostFile }, sandbox: "none" });
  assert.equal(unconfined.output!.read, "secret"); // the file is there to read: bwrap is what hid it
});

test("a file the script writes appears in the thread's /workspace only", async () => {
  for (const sandbox of sandboxes()) {
    const c = client();
    const other = client();
    await c.writeFile({ path: "/workspace/in.txt", content: "hello\n" });
    await other.writeFile({ path: "/workspace/in.txt", content: "other\n" });
    const r = await run(c, "upper.py", { args: ["in.txt"], sandbox });
    assert.deepEqual([r.exitCode, r.stdout, r.written], [0, "done\n", ["/workspace/out/result.txt"]], r.stderr);
    assert.equal(Buffer.from(await c.download("/workspace/out/result.txt")).toString(), "HELLO\n");
    assert.equal(Buffer.from(await c.download("/workspace/in.txt")).toString(), "hello\n");
    await assert.rejects(c.stat("/workspace/.home/cache"), (e: SkillsvcError) => e.code === Code.NotFound);
    await assert.rejects(other.stat("/workspace/out/result.txt"), (e: SkillsvcError) => e.code === Code.NotFound);
    assert.equal(Buffer.from(await other.download("/workspace/in.txt")).toString(), "other\n");
  }
  // More than 64 MiB written: nothing goes back.
  const c = client();
  await throws(run(c, "big.py", { args: [] }), WorkspaceTooLargeError);
  await assert.rejects(c.stat("/workspace/big.bin"), (e: SkillsvcError) => e.code === Code.NotFound);
});

test("materialize: cached by digest, verified, altered copies fetched again", async () => {
  const dir = await tempDir("skillsvc-cache-");
  const c = client();
  const first = await c.materializeSkill("runner-test", { cacheDir: dir });
  assert.equal(first.fetched, true);
  assert.equal(first.bytes, Object.values(SKILL).reduce((n, s) => n + Buffer.byteLength(s), 0));
  assert.equal(first.dir, path.join(dir, first.digest.replace("sha256:", "")));
  for (const [rel, content] of Object.entries(SKILL)) assert.equal(readFileSync(path.join(first.dir, rel), "utf8"), content);
  // Modes as exported (scripts executable), made read-only.
  assert.equal(statSync(path.join(first.dir, "scripts/tool")).mode & 0o777, 0o555);
  assert.equal(statSync(path.join(first.dir, "SKILL.md")).mode & 0o777, 0o444);

  const second = await client().materializeSkill("runner-test", { cacheDir: dir });
  assert.deepEqual([second.fetched, second.bytes, second.dir], [false, 0, first.dir]);

  // A cached copy is checked by size on use (not by hash): one altered is fetched again.
  const altered = path.join(first.dir, "SKILL.md");
  await chmod(altered, 0o644);
  await appendFile(altered, "tampered\n");
  const third = await c.materializeSkill("runner-test", { cacheDir: dir });
  assert.equal(third.fetched, true);
  assert.equal(await readFile(altered, "utf8"), SKILL["SKILL.md"]);

  // Two threads at once on an empty cache: one copy is published, the other uses it.
  const fresh = await tempDir("skillsvc-cache-");
  const both = await Promise.all([client(), client()].map((t) => t.materializeSkill("runner-test", { cacheDir: fresh })));
  assert.equal(both[0].dir, both[1].dir);
  assert.deepEqual(both.map((m) => m.fetched).sort(), [false, true]);
  assert.deepEqual(readdirSync(fresh), [path.basename(both[0].dir)]); // no temp folder left

  // Missing skill: the client's normal error.
  await assert.rejects(c.materializeSkill("no-such-skill", { cacheDir: dir }), (e: SkillsvcError) => e.code === Code.NotFound);
});
