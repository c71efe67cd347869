// Skill sets materialized by reference (materializeSkills) against the real
// binary on MinIO: a scoped set and a category, their files and modes equal to
// the manifests, hard links into the per-skill cache, a second call that copies
// nothing, a library change that re-exports only the skill changed, and a flat
// folder name two skills share refused. Exports are counted by wrapping the
// client's exportSkill, the one call that copies.
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { accessSync, constants, existsSync, lstatSync, readFileSync, readdirSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { after, afterEach, before, beforeEach, test } from "node:test";

import { FolderCollisionError, SkillsvcClient, SkillsvcError, setDigest, type MaterializedSet } from "@skillsvc/client";
import { tempDir, testenv, type Env } from "./testenv.js";

const SCOPE = "ts-set";
// [library path, content, mode]: two categories, executable scripts, and two
// skills named dup in categories of their own.
const FILES: [string, string, number][] = [
  ["sets-a/alpha/SKILL.md", "---\nname: alpha\ndescription: Alpha for set tests.\n---\nAlpha.\n", 0],
  ["sets-a/alpha/scripts/run.sh", "#!/bin/sh\necho alpha\n", 0o755],
  ["sets-a/alpha/references/notes.md", "plain notes\n", 0o644],
  ["sets-a/beta/SKILL.md", "---\nname: beta\ndescription: Beta for set tests.\n---\nBeta.\n", 0],
  ["sets-b/gamma/SKILL.md", "---\nname: gamma\ndescription: Gamma for set tests.\n---\nGamma.\n", 0],
  ["sets-b/gamma/tool.py", "print('gamma')\n", 0o755],
  ["sets-c/dup/SKILL.md", "---\nname: dup\ndescription: One dup for set tests.\n---\nOne.\n", 0],
  ["sets-d/dup/SKILL.md", "---\nname: dup\ndescription: Another dup for set tests.\n---\nAnother.\n", 0],
];

let env: Env;
let admin: SkillsvcClient;
before(async () => {
  env = await testenv();
  admin = new SkillsvcClient({ target: env.target });
});
after(async () => env?.stop());

// Every exportSkill call of any client (withIdentity makes new ones), by skill path.
let exports: string[] = [];
const realExport = SkillsvcClient.prototype.exportSkill;
beforeEach(() => {
  exports = [];
  SkillsvcClient.prototype.exportSkill = function (this: SkillsvcClient, skill, dir, call) {
    exports.push(skill);
    return realExport.call(this, skill, dir, call);
  };
});
afterEach(() => {
  SkillsvcClient.prototype.exportSkill = realExport;
});

// A library of its own per test: one test's change is not another's.
async function library(): Promise<{ user: string; client: SkillsvcClient; cacheDir: string }> {
  const user = `ts-set-${randomUUID().slice(0, 8)}`;
  for (const [p, content, mode] of FILES) await admin.putLibraryFile({ path: p, data: Buffer.from(content), user, mode });
  await admin.setSkillScope({ user, scope: { name: SCOPE, include: { names: ["alpha", "gamma"] } } });
  await admin.dropSkillIndex({ user });
  return { user, client: new SkillsvcClient({ target: env.target, user, thread: `t-${randomUUID().slice(0, 8)}` }), cacheDir: await tempDir("skillsvc-set-") };
}

function tree(dir: string, rel = ""): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tree(dir, rel ? `${rel}/${e.name}` : e.name) : [rel ? `${rel}/${e.name}` : e.name],
  );
}

// Every member's folder holds exactly its manifest's files, each with its
// size, sha256 and executable bit, read-only, and a hard link to the
// per-skill cache's copy.
async function assertMatchesManifests(client: SkillsvcClient, cacheDir: string, s: MaterializedSet) {
  const want: string[] = [];
  for (const m of s.skills) {
    const skill = (await client.getSkill(m.skillPath)).skill!;
    assert.equal(skill.manifestDigest, m.digest);
    assert.equal(m.dir, path.join(s.dir, m.folder));
    for (const f of skill.manifest!.files) {
      const rel = f.path.slice(skill.path.length + 1);
      const p = path.join(m.dir, rel);
      const st = lstatSync(p);
      assert.ok(st.isFile() && BigInt(st.size) === f.size, rel);
      assert.equal(createHash("sha256").update(readFileSync(p)).digest("hex"), f.sha256, rel);
      assert.ok(f.mode === 0o644 || f.mode === 0o755, rel);
      assert.equal((st.mode & 0o111) !== 0, (f.mode & 0o111) !== 0, `${rel} mode ${st.mode.toString(8)}`);
      assert.equal(st.mode & 0o222, 0, `${rel} is writable`);
      const cached = statSync(path.join(cacheDir, m.digest.slice("sha256:".length), rel));
      assert.ok(cached.ino === st.ino && cached.dev === st.dev, `${rel} is not a hard link into the per-skill cache`);
      want.push(`${m.folder}/${rel}`);
    }
  }
  assert.deepEqual(tree(s.dir).sort(), want.sort());
}

async function rejects(p: Promise<unknown>, check: (err: SkillsvcError) => boolean) {
  await assert.rejects(p, (err) => err instanceof SkillsvcError && check(err));
}

test("a scoped set and a category: files and modes as the manifests, a second call copies nothing", async () => {
  const { client, cacheDir } = await library();
  const s = await client.materializeSkills({ scope: SCOPE, cacheDir });
  assert.deepEqual(
    s.skills.map((m) => [m.name, m.folder, m.skillPath]),
    [
      ["alpha", "alpha", "/skills/sets-a/alpha"],
      ["gamma", "gamma", "/skills/sets-b/gamma"],
    ],
  );
  assert.deepEqual([s.layout, s.built, s.exported, s.skipped], ["flat", true, 2, []]);
  assert.deepEqual([...exports].sort(), ["/skills/sets-a/alpha", "/skills/sets-b/gamma"]);
  assert.equal(s.dir, path.join(cacheDir, "sets", s.digest.slice("sha256:".length)));
  assert.equal(s.digest, setDigest("flat", s.skills.map((m) => [m.folder, m.digest])));
  await assertMatchesManifests(client, cacheDir, s);
  accessSync(path.join(s.dir, "alpha/scripts/run.sh"), constants.X_OK);

  // Another thread on the same library state: the same directory, nothing copied.
  const again = await client.withIdentity({ thread: "t-other" }).materializeSkills({ scope: SCOPE, cacheDir });
  assert.deepEqual([again.dir, again.digest, again.built, again.exported, exports.length], [s.dir, s.digest, false, 0, 2]);

  // A category in the categories layout: alpha comes from the per-skill
  // cache the scoped set filled; only beta is exported.
  const c = await client.materializeSkills({ category: "sets-a", layout: "categories", cacheDir });
  assert.deepEqual(c.skills.map((m) => m.folder), ["sets-a/alpha", "sets-a/beta"]);
  assert.deepEqual([c.built, c.exported, exports.slice(2)], [true, 1, ["/skills/sets-a/beta"]]);
  assert.notEqual(c.dir, s.dir);
  assert.deepEqual(readdirSync(c.dir), ["sets-a"]);
  await assertMatchesManifests(client, cacheDir, c);

  // Explicit names (a name or a library path), and one not listed.
  const n = await client.materializeSkills({ names: ["beta", "/skills/sets-b/gamma"], cacheDir });
  assert.deepEqual([n.skills.map((m) => m.folder), n.exported, exports.length], [["beta", "gamma"], 0, 3]);
  await rejects(client.materializeSkills({ names: ["beta", "nope"], cacheDir }), (e) => e.codeName === "NOT_FOUND" && e.message.includes("nope"));

  // A set damaged on disk is built again from the per-skill cache.
  unlinkSync(path.join(s.dir, "gamma/tool.py"));
  const rebuilt = await client.materializeSkills({ scope: SCOPE, cacheDir });
  assert.deepEqual([rebuilt.dir, rebuilt.built, rebuilt.exported, exports.length], [s.dir, true, 0, 3]);
  await assertMatchesManifests(client, cacheDir, rebuilt);
});

test("a library change makes a new set, exporting only the skill that changed", async () => {
  const { user, client, cacheDir } = await library();
  const before = await client.materializeSkills({ category: "sets-a", cacheDir });
  assert.deepEqual([before.exported, exports.length], [2, 2]);
  await admin.putLibraryFile({ path: "sets-a/beta/SKILL.md", data: Buffer.from("---\nname: beta\ndescription: Beta, changed.\n---\nBeta 2.\n"), user });
  await admin.dropSkillIndex({ user });
  const after = await client.materializeSkills({ category: "sets-a", cacheDir });
  assert.notEqual(after.dir, before.dir);
  assert.notEqual(after.libraryDigest, before.libraryDigest);
  assert.deepEqual([after.built, after.exported, exports.slice(2)], [true, 1, ["/skills/sets-a/beta"]]);
  const digests = (s: MaterializedSet) => Object.fromEntries(s.skills.map((m) => [m.name, m.digest]));
  assert.equal(digests(after).alpha, digests(before).alpha);
  assert.notEqual(digests(after).beta, digests(before).beta);
  assert.ok(readFileSync(path.join(after.dir, "beta/SKILL.md"), "utf8").endsWith("Beta 2.\n"));
  // The earlier set is still whole for whoever holds it.
  assert.ok(readFileSync(path.join(before.dir, "beta/SKILL.md"), "utf8").endsWith("Beta.\n"));
  await assertMatchesManifests(client, cacheDir, after);
});

test("two skills sharing a flat folder name are refused, naming both", async () => {
  const { client, cacheDir } = await library();
  await assert.rejects(
    client.materializeSkills({ layer: "user", cacheDir }),
    (err) => err instanceof FolderCollisionError && err.codeName === "FAILED_PRECONDITION" && err.message.includes("/skills/sets-c/dup and /skills/sets-d/dup would both be dup/"),
  );
  assert.deepEqual(exports, []);
  assert.ok(!existsSync(path.join(cacheDir, "sets")));
  const s = await client.materializeSkills({ layer: "user", layout: "categories", cacheDir });
  assert.deepEqual(s.skills.map((m) => m.folder), ["sets-a/alpha", "sets-a/beta", "sets-b/gamma", "sets-c/dup", "sets-d/dup"]);
  // A bound on the total is checked before anything is fetched.
  await rejects(client.materializeSkills({ layer: "user", layout: "categories", cacheDir: path.join(cacheDir, "small"), maxBytes: 100 }), (e) => e.codeName === "RESOURCE_EXHAUSTED");
  assert.equal(exports.length, 5);
});

test("the set digest is the Python client's", () => {
  // clients/python/tests/test_skillset.py has the same cases.
  const pairs: [string, string][] = [
    ["zeta", `sha256:${"b".repeat(64)}`],
    ["alpha", `sha256:${"a".repeat(64)}`],
    ["é", `sha256:${"c".repeat(64)}`],
    ["docs/pdf", `sha256:${"d".repeat(64)}`],
  ];
  assert.equal(setDigest("flat", pairs), "sha256:2fba01ac354b2b6b964ab7e0f4825166c015138488422db23323226d078a3d76");
  assert.equal(setDigest("categories", []), "sha256:12ceb90277a10936337ff1a408f9eb614da421bc2df0a01450fa1d52496f4009");
});
