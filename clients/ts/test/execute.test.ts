// The runner's command mode (runCommand) and SkillsvcBackend.execute
// against the real binary on MinIO: a Deep Agent with a scripted model
// calling execute to run a skill's script on a /workspace file, the skills a
// command names mounted at their /skills/ paths, timeouts killed and
// reported, and under bubblewrap no network and no host files.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { after, before, test } from "node:test";

import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { createDeepAgent, isSandboxBackend } from "deepagents";

import { Code, SkillsvcClient, SkillsvcError, probeBwrap } from "@skillsvc/client";
import { SkillsvcBackend } from "@skillsvc/client/deepagents";
import { localPaths } from "@skillsvc/client/runner";
import { ScriptedChatModel, toolCall } from "../examples/scripted-model.mjs";
import { processesWith, tempDir, testenv, type Env } from "./testenv.js";

// A skill at the library's root (/skills/cmd-test) and one in a category
// (/skills/cmdcat/cmd-other): a command names each by its /skills/ path.
const FILES: Record<string, string> = {
  "cmd-test/SKILL.md": "---\nname: cmd-test\ndescription: Scripts for the command tests.\n---\nRun scripts/upper.py IN OUT.\n",
  // Plain arguments, as the public skills take them: an input and an output file.
  "cmd-test/scripts/upper.py": `import os, sys
text = open(sys.argv[1]).read()
os.makedirs(os.path.dirname(sys.argv[2]) or ".", exist_ok=True)
open(sys.argv[2], "w").write(text.upper())
print("wrote", sys.argv[2])
print("a warning", file=sys.stderr)
`,
  // Starts a child (its command line carries the marker) that outlives any timeout.
  "cmd-test/scripts/sleepy.sh": 'sh -c "sleep 60; echo late > \\"$2\\"" "$1" "$2" &\necho started\nsleep 60\n',
  "cmd-test/scripts/net.py": `import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
    print("connected")
except OSError as e:
    print("refused:", e)
`,
  "cmdcat/cmd-other/SKILL.md": "---\nname: cmd-other\ndescription: A skill in a category.\n---\nRun scripts/hello.sh.\n",
  "cmdcat/cmd-other/scripts/hello.sh": 'echo "hello from $0"\n',
};

let env: Env;
let admin: SkillsvcClient;
let user: string;
let cacheDir: string;
const bwrap = probeBwrap();
const required = process.env.SKILLSVC_REQUIRE_SERVERS === "1";

before(async () => {
  env = await testenv();
  admin = new SkillsvcClient({ target: env.target });
  user = `ts-exec-${randomUUID().slice(0, 8)}`;
  for (const [rel, content] of Object.entries(FILES)) await admin.putLibraryFile({ path: rel, data: Buffer.from(content), user });
  await admin.dropSkillIndex({ user });
  cacheDir = await tempDir("skillsvc-cache-");
});
after(async () => env?.stop());

const threadId = () => `ts-exec-${randomUUID().slice(0, 12)}`;
const clientFor = (thread: string) => admin.withIdentity({ user, thread });

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

function backendFor(thread: string, sandbox: "none" | "bwrap" | "auto" = "auto") {
  return new SkillsvcBackend(clientFor(thread), { execute: { sandbox, cacheDir } });
}

test("a Deep Agent calls execute to run a skill's script on a /workspace file", async () => {
  // "auto": bubblewrap (a machine without it offers no execute tool, unless "none" says to run unconfined).
  const backend = new SkillsvcBackend({ target: env.target, user }, { execute: { cacheDir, sandbox: bwrap || required ? "auto" : "none" } });
  assert.ok(isSandboxBackend(backend), "deepagents sees a sandbox backend: it offers execute");
  const model = new ScriptedChatModel([
    toolCall("write_file", "c1", { file_path: "/workspace/notes.txt", content: "quarterly report\n" }),
    toolCall("execute", "c2", { command: "python3 /skills/cmd-test/scripts/upper.py /workspace/notes.txt /workspace/out/NOTES.txt" }),
    toolCall("read_file", "c3", { file_path: "/workspace/out/NOTES.txt" }),
    new AIMessage("Done: /workspace/out/NOTES.txt."),
  ]);
  const agent = createDeepAgent({ model, backend });
  const thread = threadId();
  const result = await agent.invoke({ messages: [{ role: "user", content: "Upper-case my notes" }] }, { configurable: { thread_id: thread } });
  const out = Object.fromEntries(result.messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => [m.tool_call_id, m.text]));
  // deepagents' execute tool: the output (stdout then stderr), then the exit code.
  assert.equal(out.c2, "wrote /workspace/out/NOTES.txt\na warning\n\n[Command succeeded with exit code 0]");
  assert.match(out.c3, /QUARTERLY REPORT/);
  // The file is in the thread's /workspace, and only there.
  assert.equal((await clientFor(thread).readFile({ path: "/workspace/out/NOTES.txt" })).content, "QUARTERLY REPORT");
  await assert.rejects(clientFor(threadId()).stat("/workspace/out/NOTES.txt"), (e: SkillsvcError) => e.code === Code.NotFound);
});

test("execute: the output, exit code, write-back, and the skills a command names", async () => {
  for (const sandbox of sandboxes()) {
    const thread = threadId();
    const b = backendFor(thread, sandbox);
    await clientFor(thread).writeFile({ path: "/workspace/in.txt", content: "abc\n" });
    const r = await b.execute("cd /workspace && python3 /skills/cmd-test/scripts/upper.py in.txt up.txt && pwd && echo $WORKSPACE && exit 3");
    assert.equal(r.exitCode, 3, r.output);
    assert.equal(r.truncated, false);
    // Under the plain subprocess the shell sees the local folders the paths were rewritten to.
    const lines = r.output.split("\n");
    assert.equal(lines[0], "wrote up.txt");
    assert.equal(lines[1], lines[2], "the working directory is $WORKSPACE");
    if (sandbox === "bwrap") assert.equal(lines[1], "/workspace");
    else assert.match(lines[1], /\/skillsvc-run-[^/]+\/workspace$/);
    assert.equal(lines[3], "a warning");
    assert.equal(Buffer.from(await clientFor(thread).download("/workspace/up.txt")).toString(), "ABC\n");

    // A skill in a category, named by its /skills/<category>/<skill> path; the skill is read-only.
    const other = await b.execute("bash /skills/cmdcat/cmd-other/scripts/hello.sh");
    assert.equal(other.exitCode, 0, other.output);
    assert.match(other.output, sandbox === "bwrap" ? /^hello from \/skills\/cmdcat\/cmd-other\/scripts\/hello\.sh\n$/ : /^hello from \/.*\/skills\/cmdcat\/cmd-other\/scripts\/hello\.sh\n$/);
    if (sandbox === "bwrap") {
      const ro = await b.execute("touch /skills/cmdcat/cmd-other/x && echo wrote-skill");
      assert.match(ro.output, /Read-only file system/);
    }

    // A path under /skills that names no skill is the command's error.
    assert.deepEqual(await b.execute("ls /skills/no-such-skill/scripts"), {
      output:
        "Error (INVALID_ARGUMENT): /skills/no-such-skill/scripts is in no skill: a command sees the skills it names by their folders, /skills/<skill>/... or /skills/<category>/<skill>/... (the ls tool lists /skills)",
      exitCode: null,
      truncated: false,
    });
    // A missing command is the shell's answer, not an error of the backend.
    const missing = await b.execute("no-such-command-xyz");
    assert.equal(missing.exitCode, 127);
  }
});

test("runCommand reports the skills mounted and the files written back", async () => {
  const c = clientFor(threadId());
  await c.writeFile({ path: "/workspace/in.txt", content: "x\n" });
  const r = await c.runCommand("python3 /skills/cmd-test/scripts/upper.py in.txt 'a b.txt'; bash '/skills/cmdcat/cmd-other/scripts/hello.sh' >/dev/null", {
    cacheDir,
    sandbox: "none",
  });
  assert.deepEqual([r.exitCode, r.timedOut, r.truncated, r.sandbox], [0, false, false, "none"]);
  assert.deepEqual(r.skills, ["/skills/cmd-test", "/skills/cmdcat/cmd-other"]);
  assert.deepEqual(r.written, ["/workspace/a b.txt"]);
  await assert.rejects(c.runCommand("  ", { cacheDir }), (e: SkillsvcError) => e.code === Code.InvalidArgument);
  // A script's environment, without SKILL_DIR and SKILL_TIMEOUT, and nothing of the caller's.
  process.env.AWS_SECRET_ACCESS_KEY = "must-not-leak";
  const env = await c.runCommand("env", { cacheDir, sandbox: "none" });
  const names = env.stdout.trim().split("\n").map((l) => l.split("=")[0]).filter((n) => !["PWD", "SHLVL", "_"].includes(n)).sort();
  assert.deepEqual(names, ["HOME", "LANG", "PATH", "WORKSPACE"]);
});

test("the plain subprocess sees /workspace and /skills rewritten to its folders, and nothing else", () => {
  const root = "/tmp/skillsvc-run-x";
  assert.equal(
    localPaths("python3 /skills/a/b/x.py /workspace/in.pdf '/workspace/o u t.pdf' --out=/workspace \"/skills/c\" /workspace", root),
    `python3 ${root}/skills/a/b/x.py ${root}/workspace/in.pdf '${root}/workspace/o u t.pdf' --out=${root}/workspace "${root}/skills/c" ${root}/workspace`,
  );
  // Not a prefix of another path, nor another name.
  for (const s of ["/home/u/workspace/x", "/workspaces/x", "/skillsets", "a/skills/x", "~/workspace"]) assert.equal(localPaths(s, root), s);
});

test("execute: a timeout kills the command with its children and is reported", async (t) => {
  for (const sandbox of sandboxes()) {
    if (sandbox === "bwrap" && !needBwrap(t)) continue;
    const thread = threadId();
    const marker = `marker-${randomUUID()}`;
    const late = path.join(await tempDir("late-"), "late.txt");
    const b = backendFor(thread, sandbox);
    const r = await b.execute(`echo partial > /workspace/partial.txt; bash /skills/cmd-test/scripts/sleepy.sh ${marker} ${late}`, { timeout: 2 });
    assert.equal(r.exitCode, null);
    assert.equal(r.truncated, false);
    assert.equal(r.output, "started\n[The command was killed after 2 seconds, its timeout; what it wrote in /workspace was not kept.]");
    assert.deepEqual(processesWith(marker), [], "a child of the command outlived the timeout");
    assert.ok(!existsSync(late));
    await assert.rejects(clientFor(thread).stat("/workspace/partial.txt"), (e: SkillsvcError) => e.code === Code.NotFound);
  }
  // The backend's own default, when the call gives none.
  const short = new SkillsvcBackend(clientFor(threadId()), { execute: { sandbox: "none", cacheDir, timeoutMs: 1000 } });
  assert.equal((await short.execute("sleep 30")).output, "[The command was killed after 1 second, its timeout; what it wrote in /workspace was not kept.]");
  // A timeout that is no timeout is the caller's error.
  for (const timeout of [0, -1, Number.NaN]) await assert.rejects(short.execute("true", { timeout }), RangeError);
});

test("execute: output over the cap is cut, flagged and killed", async () => {
  const b = new SkillsvcBackend(clientFor(threadId()), { execute: { sandbox: "none", cacheDir, maxOutputBytes: 1000 } });
  const r = await b.execute("head -c 5000 /dev/zero | tr '\\0' x; sleep 30");
  assert.equal(r.exitCode, null);
  assert.equal(r.truncated, true);
  assert.equal(r.output, `${"x".repeat(1000)}\n[The command was killed: its output passed 1000 bytes; what it wrote in /workspace was not kept.]`);
  // stdout and stderr together are held to the cap too, without killing the command.
  const both = await b.execute("head -c 800 /dev/zero | tr '\\0' o; head -c 800 /dev/zero | tr '\\0' e >&2; echo done > /workspace/done.txt");
  assert.deepEqual([both.exitCode, both.truncated, both.output], [0, true, `${"o".repeat(800)}\n${"e".repeat(199)}`]);
});

test("execute under bubblewrap: no network, no host files", async (t) => {
  if (!needBwrap(t)) return;
  const b = backendFor(threadId(), "bwrap");
  const connections: unknown[] = [];
  const server: Server = createServer((s) => {
    connections.push(s);
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const port = (server.address() as { port: number }).port;
    const r = await b.execute(`python3 /skills/cmd-test/scripts/net.py ${port}`);
    assert.match(r.output, /^refused:/, r.output);
    assert.equal(connections.length, 0);
    // The listener works: the same command unconfined reaches it.
    const open = await backendFor(threadId(), "none").execute(`python3 /skills/cmd-test/scripts/net.py ${port}`);
    assert.equal(open.output, "connected\n");
  } finally {
    server.close();
  }
  const hostFile = path.join(await tempDir("host-"), "secret.txt");
  await writeFile(hostFile, "top-secret-content");
  const read = await b.execute(`cat ${hostFile}; cat /etc/passwd`);
  assert.notEqual(read.exitCode, 0);
  assert.doesNotMatch(read.output, /top-secret-content|root:/);
  assert.match(read.output, /No such file or directory/);
  assert.match((await backendFor(threadId(), "none").execute(`cat ${hostFile}`)).output, /^top-secret-content/, "the file is there to read: bwrap is what hid it");
});

test("{ execute: false }: no execute tool, and execute refuses", async () => {
  const b = new SkillsvcBackend(clientFor(threadId()), { execute: false });
  assert.equal(b.id, "");
  assert.ok(!isSandboxBackend(b as unknown), "deepagents offers no execute tool to it");
  assert.deepEqual(await b.execute("true"), { output: "Error: this backend runs no commands (it was made with { execute: false })", exitCode: null, truncated: false });
  // A runner error comes back as text with its kind.
  const big = clientFor(threadId());
  const r = await new SkillsvcBackend(big, { execute: { sandbox: "none", cacheDir } }).execute("");
  assert.deepEqual(r, { output: "Error (INVALID_ARGUMENT): the command is empty", exitCode: null, truncated: false });
});
