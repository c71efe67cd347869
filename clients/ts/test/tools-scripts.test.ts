// SkillTools' run_skill_script against the real binary on MinIO: offered in
// every style, its result text (JSON mode, plain mode) and its error texts,
// with the file a script writes visible in the thread's /workspace.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";

import { Code, SkillsvcClient, SkillsvcError, probeBwrap, type Sandbox, type SandboxSpec } from "@skillsvc/client";
import { DEFINITIONS, SkillTools, type Style } from "@skillsvc/client/tools";
import { tempDir, testenv, type Env } from "./testenv.js";

const SKILL: Record<string, string> = {
  "SKILL.md": "---\nname: tools-run\ndescription: Scripts for the run_skill_script tests.\n---\nRun the scripts.\n",
  "scripts/echo.py": `import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"got": args, "note": "ü"}))
sys.exit(args.get("exit", 0))
`,
  // Plain arguments: reads a workspace file, writes two (one in a folder).
  "scripts/upper.sh": 'tr a-z A-Z < "$1" > "$2"\nmkdir -p sub && echo b > sub/b.txt\necho "done $*"\necho warn >&2\nprintf "\\377\\n"\n',
  "scripts/bad.py": 'import sys\nprint("not json " + "y" * 5000)\nprint("oops", file=sys.stderr)\n',
  "scripts/slow.sh": "echo started\nsleep 60\n",
  "scripts/plain-bad.sh": "echo no json\necho oops >&2\n",
  "notes.txt": "not a script\n",
};

let env: Env;
let base: SkillsvcClient;
let cacheDir: string;
const sandbox = probeBwrap() || process.env.SKILLSVC_REQUIRE_SERVERS === "1" ? "bwrap" : "none";

before(async () => {
  env = await testenv();
  const admin = new SkillsvcClient({ target: env.target });
  const user = `ts-tools-run-${randomUUID().slice(0, 8)}`;
  for (const [rel, content] of Object.entries(SKILL)) await admin.putLibraryFile({ path: `tools-run/${rel}`, data: Buffer.from(content), user });
  await admin.dropSkillIndex({ user });
  base = admin.withIdentity({ user });
  cacheDir = await tempDir("skillsvc-cache-");
});
after(async () => env?.stop());

const toolsFor = (c: SkillsvcClient) => new SkillTools(c, { cacheDir, sandbox });
const thread = () => base.withIdentity({ thread: `ts-tools-run-${randomUUID().slice(0, 12)}` });

test("run_skill_script is offered in every style, as the shared definition has it", () => {
  const t = new SkillTools(base);
  const def = DEFINITIONS.find((d) => d.name === "run_skill_script")!;
  const want: Record<Style, unknown> = {
    anthropic: { name: def.name, description: def.description, input_schema: def.inputSchema },
    openai: { type: "function", function: { name: def.name, description: def.description, parameters: def.inputSchema } },
    "openai-responses": { type: "function", name: def.name, description: def.description, parameters: def.inputSchema },
    gemini: { name: def.name, description: def.description, parametersJsonSchema: def.inputSchema },
  };
  for (const [style, d] of Object.entries(want)) {
    const defs = t.definitions(style as Style);
    assert.equal(defs.length, 3, style);
    assert.deepEqual(defs[2], d, style);
  }
  assert.ok(t.handles("run_skill_script"));
  // use_skill (code skills) is the Python client's: never offered here.
  assert.ok(!t.handles("use_skill"));
  assert.ok(!t.definitions("anthropic").some((d) => d.name === "use_skill"));
  // Not offered when the caller says so.
  const off = new SkillTools(base, { scripts: false });
  assert.deepEqual(off.definitions("anthropic").map((d) => d.name), ["load_skill", "read_skill_file"]);
  assert.ok(!off.handles("run_skill_script"));
});

test("the prompt names run_skill_script where it is offered", async () => {
  const c = base.withIdentity({ user: "alice", thread: "ts-tools-run-prompt" });
  const on = await new SkillTools(c).prompt();
  assert.ok(on.endsWith("Run a script the instructions name with run_skill_script; files it writes appear in /workspace."), on.slice(-200));
  const off = await new SkillTools(c, { scripts: false }).prompt();
  assert.ok(off.endsWith("then follow its instructions."), off.slice(-200));
});

test("JSON mode: exit code, the script's object, nothing written", async () => {
  const tools = toolsFor(thread());
  assert.equal(await tools.run("run_skill_script", { skill: "tools-run", script: "echo.py", json_args: { a: [1, "x"] } }), '{"exit_code":0,"output":{"got":{"a":[1,"x"]},"note":"ü"},"written":[]}');
  // A non-zero exit with a JSON object is a result; arguments as the JSON string OpenAI sends.
  const text = await tools.run("run_skill_script", JSON.stringify({ skill: "tools-run", script: "scripts/echo.py", json_args: { exit: 4 }, timeout_seconds: 30 }));
  assert.equal(text, '{"exit_code":4,"output":{"got":{"exit":4},"note":"ü"},"written":[]}');
});

test("plain mode: stdout, stderr, and the files written, visible in /workspace", async () => {
  const c = thread();
  await c.writeFile({ path: "/workspace/in.txt", content: "hello\n" });
  const text = await toolsFor(c).run("run_skill_script", { skill: "tools-run", script: "upper.sh", args: ["in.txt", "out.txt"] });
  // Keys in the contract's order; invalid UTF-8 replaced; written relative to /workspace, sorted.
  assert.equal(text, '{"exit_code":0,"stdout":"done in.txt out.txt\\n\\ufffd\\n","stderr":"warn\\n","written":["out.txt","sub/b.txt"]}'.replace("\\ufffd", "\ufffd"));
  assert.deepEqual(JSON.parse(text).written, ["out.txt", "sub/b.txt"]);
  assert.equal(Buffer.from(await c.download("/workspace/out.txt")).toString(), "HELLO\n");
  assert.equal(Buffer.from(await c.download("/workspace/sub/b.txt")).toString(), "b\n");
  // Another thread's /workspace is untouched.
  await assert.rejects(thread().stat("/workspace/out.txt"), (e: SkillsvcError) => e.code === Code.NotFound);
});

test("error texts", async () => {
  const tools = toolsFor(thread());
  const run = (args: Record<string, unknown>) => tools.run("run_skill_script", { skill: "tools-run", ...args });
  assert.match(await run({ script: "nope.py" }), /^Error \(SCRIPT_NOT_FOUND\): script "nope.py" not found in the skill/);
  assert.match(await run({ script: "../x.py" }), /^Error \(SCRIPT_OUTSIDE_SKILL\): script "..\/x.py" is outside the skill folder/);
  assert.match(await run({ script: "notes.txt" }), /^Error \(UNKNOWN_INTERPRETER\): cannot tell how to run notes.txt/);
  // BAD_OUTPUT carries the output, cut to 4 KiB.
  const bad = await run({ script: "bad.py", json_args: {} });
  assert.match(bad, /^Error \(BAD_OUTPUT\): script scripts\/bad.py of tools-run exited with 0 and did not print one JSON object on stdout/);
  // The output follows on its own lines, "stdout: " and "stderr: ", cut to 4 KiB in all (here inside stdout).
  const [first, ...rest] = bad.split("\n");
  assert.equal(Buffer.byteLength(rest.join("\n")), 4096);
  assert.ok(rest.join("\n").startsWith(`stdout: not json ${"y".repeat(100)}`), first);
  const small = await toolsFor(thread()).run("run_skill_script", { skill: "tools-run", script: "plain-bad.sh", json_args: {} });
  assert.equal(small.split("\n").slice(1).join("\n"), "stdout: no json\nstderr: oops\n");
  const timeout = await run({ script: "slow.sh", timeout_seconds: 1 });
  assert.match(timeout, /^Error \(TIMEOUT\): script scripts\/slow.sh of tools-run ran longer than its timeout of 1 s and was killed/);
  // The tool's own argument checks, and a service error as the other tools give it.
  assert.equal(await tools.run("run_skill_script", { skill: "tools-run" }), "Error (INVALID_ARGUMENT): missing argument 'script'");
  assert.equal(await run({ script: "echo.py", args: [], json_args: {} }), "Error (INVALID_ARGUMENT): pass args or json_args, not both");
  assert.equal(await run({ script: "echo.py", args: [1] }), "Error (INVALID_ARGUMENT): args must be a list of strings");
  assert.equal(await run({ script: "echo.py", json_args: [1] }), "Error (INVALID_ARGUMENT): json_args must be an object");
  assert.equal(await run({ script: "echo.py", timeout_seconds: 1.5 }), "Error (INVALID_ARGUMENT): timeout_seconds must be a whole number from 0 to 3600");
  assert.match(await tools.run("run_skill_script", { skill: "no-such-skill", script: "x.py" }), /^Error \(NOT_FOUND\)/);
  await assert.rejects(tools.run("use_skill", { skill: "tools-run" }), /not a skills tool/);
});

test("the runner's options reach the run, with safe defaults", async () => {
  // A Sandbox of the caller's own sees the prepared run.
  const seen: SandboxSpec[] = [];
  const fake: Sandbox = {
    name: "fake",
    async run(spec) {
      seen.push(spec);
      return { exitCode: 7, stdout: Buffer.from("fake\n"), stderr: Buffer.alloc(0), timedOut: false, truncated: false };
    },
  };
  const tools = new SkillTools(thread(), { sandbox: fake, cacheDir });
  assert.equal(await tools.run("run_skill_script", { skill: "tools-run", script: "upper.sh", args: ["a"] }), '{"exit_code":7,"stdout":"fake\\n","stderr":"","written":[]}');
  assert.equal(seen.length, 1);
  const [spec] = seen;
  assert.deepEqual([spec.network, spec.timeoutMs, spec.maxOutputBytes, spec.memoryBytes], [false, 60_000, 1 << 20, 1 << 30]);
  assert.ok(spec.skillDir.startsWith(cacheDir), "the skill is materialized in the cache given");
  assert.deepEqual(spec.argv.slice(-2), [`${spec.skillDir}/scripts/upper.sh`, "a"]);
});
