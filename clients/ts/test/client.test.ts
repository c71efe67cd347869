// Every SkillsvcClient method against the real binary on MinIO.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";

import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Code, SkillsvcClient, SkillsvcError, codeName, library, skills } from "@skillsvc/client";
import { examples, tempDir, testenv, type Env } from "./testenv.js";

let env: Env;
let clients: SkillsvcClient;

before(async () => {
  env = await testenv();
  clients = new SkillsvcClient({ target: env.target, user: env.user });
});
after(async () => env?.stop());

const client = () => clients.withIdentity({ thread: `ts-${randomUUID().slice(0, 12)}` });

async function rejects(p: Promise<unknown>, code: Code): Promise<SkillsvcError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SkillsvcError, String(err));
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${Code[code]}`);
}

test("files", async () => {
  const c = client();
  const info = (await c.writeFile({ path: "/workspace/notes.md", content: "alpha\nbeta\ngamma\n" })).info!;
  assert.equal(info.size, 17n);
  await rejects(c.writeFile({ path: "/workspace/notes.md", content: "x", mustNotExist: true }), Code.AlreadyExists);
  await rejects(c.writeFile({ path: "/workspace/notes.md", content: "x", ifMatch: '"stale"' }), Code.FailedPrecondition);
  assert.ok((await c.writeFile({ path: "/workspace/notes.md", content: "alpha\nbeta\ngamma\n", ifMatch: info.etag })).info?.etag);

  assert.equal((await c.stat("/workspace/notes.md")).info?.size, 17n);
  const r = await c.readFile({ path: "/workspace/notes.md", offset: 1n, limit: 1n, lineNumbers: true });
  assert.deepEqual([r.content.trim(), r.totalLines, r.nextOffset], ["2\tbeta", 3n, 2n]);
  assert.equal((await c.edit({ path: "/workspace/notes.md", oldString: "beta", newString: "BETA" })).occurrences, 1n);
  await rejects(c.edit({ path: "/workspace/notes.md", oldString: "absent", newString: "x" }), Code.FailedPrecondition);
  assert.equal((await c.readFile({ path: "/workspace/notes.md" })).content, "alpha\nBETA\ngamma");

  assert.deepEqual((await c.glob({ pattern: "**/*.md", path: "/workspace" })).matches.map((m) => m.path), ["/workspace/notes.md"]);
  const g = await c.grep({ pattern: "beta", path: "/workspace", caseInsensitive: true });
  assert.deepEqual(g.matches.map((m) => [m.path, m.line, m.text]), [["/workspace/notes.md", 2n, "BETA"]]);

  for (const i of [0, 1, 2]) await c.writeFile({ path: `/workspace/dir/f${i}.txt`, content: String(i) });
  const page = await c.list({ path: "/workspace/dir", pageSize: 2 });
  assert.equal(page.entries.length, 2);
  assert.ok(page.nextPageToken);
  const names: string[] = [];
  for await (const e of c.iterList("/workspace/dir", 2)) names.push(e.name);
  assert.deepEqual(names, ["f0.txt", "f1.txt", "f2.txt"]);

  const blob = new Uint8Array(600_000).map((_, i) => i % 251);
  assert.equal((await c.upload("/workspace/blob.bin", blob, { chunkSize: 100_000 })).size, 600_000n);
  assert.deepEqual(await c.download("/workspace/blob.bin"), Buffer.from(blob));
  assert.deepEqual(await c.download("/workspace/blob.bin", { offset: 10, limit: 5 }), Buffer.from(blob.subarray(10, 15)));
  const dir = await tempDir("skillsvc-ts-");
  await c.downloadFile("/workspace/blob.bin", path.join(dir, "blob.bin"));
  assert.deepEqual(await readFile(path.join(dir, "blob.bin")), Buffer.from(blob));
  const copied = await c.uploadFile("/workspace/copy.bin", path.join(dir, "blob.bin"), { chunkSize: 64 << 10, mustNotExist: true });
  assert.equal(copied.size, 600_000n);
  assert.deepEqual(await c.download("/workspace/copy.bin"), Buffer.from(blob));
  await rejects(c.uploadFile("/workspace/copy.bin", path.join(dir, "blob.bin"), { mustNotExist: true }), Code.AlreadyExists);
  await assert.rejects(c.uploadFile("/workspace/other.bin", path.join(dir, "missing.bin")), { code: "ENOENT" });

  assert.equal((await c.delete({ path: "/workspace/dir", recursive: true })).deleted, 3n);
  const err = await rejects(c.stat("/workspace/dir/f0.txt"), Code.NotFound);
  assert.match(err.rawMessage, /not found/);
  assert.equal(err.codeName, "NOT_FOUND");
});

test("code names are gRPC's", () => {
  assert.deepEqual(
    [Code.NotFound, Code.InvalidArgument, Code.DeadlineExceeded, Code.Canceled, Code.Unauthenticated, 0 as Code].map(codeName),
    ["NOT_FOUND", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "CANCELLED", "UNAUTHENTICATED", "OK"],
  );
});

test("errors keep the code", async () => {
  const c = client();
  await rejects(c.readFile({ path: "/workspace/missing.md" }), Code.NotFound);
  await rejects(c.readFile({ path: "/workspace/../../bob/x" }), Code.InvalidArgument);
  await rejects(c.writeFile({ path: "/skills/x.md", content: "x" }), Code.PermissionDenied);
  await rejects(c.grep({ pattern: "(", regex: true }), Code.InvalidArgument);
  await rejects(c.download("/workspace/missing.bin"), Code.NotFound);
  await rejects(c.listSkills({ pageToken: "garbage" }), Code.InvalidArgument);
  await rejects(c.withIdentity({ user: undefined }).list({ path: "/workspace" }), Code.Unauthenticated);
});

test("identity", async () => {
  const c = client();
  await c.writeFile({ path: "/workspace/mine.md", content: "mine" });
  await rejects(c.withIdentity({ thread: "ts-other" }).readFile({ path: "/workspace/mine.md" }), Code.NotFound);
  const bob = [];
  for await (const s of c.withIdentity({ user: "bob" }).iterSkills()) bob.push(s);
  assert.deepEqual(bob, []);
  const ticketed = c.withIdentity({ ticket: `T-${randomUUID().slice(0, 6)}` });
  await ticketed.writeFile({ path: "/ticket/spec.md", content: "spec" });
  assert.equal((await ticketed.readFile({ path: "/ticket/spec.md" })).content, "spec");
  // A token function is called for each request (jwt mode sends it as the bearer).
  let calls = 0;
  const withToken = c.withIdentity({ token: () => (calls++, "not-checked-in-insecure-mode") });
  await withToken.stat("/workspace/mine.md");
  assert.equal(calls, 1);
});

test("skills", async () => {
  const c = client();
  const cats = Object.fromEntries((await c.listCategories()).categories.map((x) => [x.name, x.skillCount]));
  assert.deepEqual(cats, { data: 1, writing: 2 });
  const names: string[] = [];
  for await (const s of c.iterSkills({ pageSize: 1 })) names.push(s.name);
  assert.deepEqual(names.sort(), ["commit-message", "csv-summary", "release-notes"]);
  assert.deepEqual((await c.listSkills({ category: "data" })).skills.map((s) => s.name), ["csv-summary"]);

  const block = await c.formatSkills({ charBudget: 4000 });
  assert.equal(block.included, 3);
  assert.match(block.text, /release-notes/);
  const got = await c.getSkill("release-notes");
  assert.equal(got.skill?.path, "/skills/writing/release-notes");
  assert.deepEqual(got.files.map((f) => f.path), ["references/style.md"]);
  assert.equal((got.frontmatter?.metadata as { owner?: string } | undefined)?.owner, "docs-team");
  assert.match((await c.renderSkill({ path: "commit-message", arguments: "fix login" })).text, /ARGUMENTS: fix login/);
  assert.equal(
    (await c.readSkillFile("release-notes", "references/style.md")).content,
    await readFile(path.join(examples, "writing/release-notes/references/style.md"), "utf8"),
  );
  assert.equal((await c.searchSkills({ query: "changelog", limit: 1 })).results[0].skill?.name, "release-notes");

  const dir = await tempDir("skillsvc-ts-export-");
  const folder = await c.exportSkill("csv-summary", dir);
  assert.deepEqual(
    await readFile(path.join(folder, "scripts/summarize.py")),
    await readFile(path.join(examples, "data/csv-summary/scripts/summarize.py")),
  );

  assert.ok((await c.setSkillEnabled("csv-summary", false)).skill?.disabled);
  try {
    const listed: string[] = [];
    for await (const s of c.iterSkills()) listed.push(s.name);
    assert.ok(!listed.includes("csv-summary"));
  } finally {
    await c.setSkillEnabled("csv-summary", true);
  }
});

test("admin", async () => {
  const admin = new SkillsvcClient({ target: env.target }); // insecure mode: AdminService needs no identity
  const user = `ts-admin-${randomUUID().slice(0, 6)}`;
  const c = admin.withIdentity({ user, thread: "t" });
  const md = Buffer.from("---\nname: haiku\ndescription: Write a haiku.\n---\n5-7-5\n");
  assert.equal((await admin.putLibraryFile({ path: "poems/haiku/SKILL.md", data: md, user })).size, BigInt(md.length));
  await admin.putLibraryFile({ path: "poems/haiku/count", data: Buffer.from("echo 5 7 5\n"), user, mode: 0o755 });
  await admin.putLibraryFile({ path: "poems/haiku/notes.sh", data: Buffer.from("#!/bin/sh\n"), user, mode: 0o644 });
  await admin.dropSkillIndex({ user });
  assert.deepEqual((await c.listSkills()).skills.map((s) => s.name), ["haiku"]);
  const modes = Object.fromEntries((await c.getSkill("haiku")).skill!.manifest!.files.map((f) => [f.path.split("/").pop(), f.mode]));
  assert.deepEqual(modes, { "SKILL.md": 0o644, count: 0o755, "notes.sh": 0o644 });
  assert.ok((await admin.setUserSkillEnabled(user, "haiku", false)).skill?.disabled);
  assert.deepEqual((await c.listSkills()).skills, []);
  for (const name of ["SKILL.md", "count", "notes.sh"]) await admin.deleteLibraryFile({ path: `poems/haiku/${name}`, user });
  await admin.dropSkillIndex({ user });
  assert.deepEqual((await c.listSkills({ includeDisabled: true })).skills, []);
});

test("pinLibrary", async () => {
  // A pinned thread keeps the library it started with; an unpinned one sees a skill added after.
  const admin = new SkillsvcClient({ target: env.target });
  const user = `ts-pin-${randomUUID().slice(0, 6)}`;
  const put = (name: string) =>
    admin.putLibraryFile({ path: `${name}/SKILL.md`, data: Buffer.from(`---\nname: ${name}\ndescription: ${name}.\n---\nBody.\n`), user });
  await put("first");
  const pinned = admin.withIdentity({ user, thread: "t1", pinLibrary: true });
  const before = await pinned.listSkills();
  assert.deepEqual(before.skills.map((s) => s.name), ["first"]);
  await put("second");
  const after = await pinned.listSkills();
  assert.deepEqual(after.skills.map((s) => s.name), ["first"]);
  assert.equal(after.libraryDigest, before.libraryDigest);
  const live = pinned.withIdentity({ pinLibrary: false });
  assert.deepEqual((await live.listSkills()).skills.map((s) => s.name), ["first", "second"]);
});

test("teams", async () => {
  // A member reads its team's library; a user outside the team does not; a protected team skill is not
  // replaced by the member's namesake (README "Teams and protected skills").
  const admin = new SkillsvcClient({ target: env.target });
  const user = `ts-team-${randomUUID().slice(0, 6)}`;
  const team = `ts-team-${randomUUID().slice(0, 6)}`;
  const skill = (description: string) => Buffer.from(`---\nname: contracts\ndescription: ${description}\n---\nBody.\n`);
  await admin.putLibraryFile({ path: "contracts/SKILL.md", data: skill("The team's."), team });
  const member = admin.withIdentity({ user, thread: "t1", teams: team });
  const outsider = member.withIdentity({ teams: undefined });
  assert.equal((await member.getSkill("contracts")).skill?.layer, `team:${team}`);
  assert.ok(!(await outsider.listSkills()).skills.some((s) => s.layer.startsWith("team:")));
  await admin.putLibraryFile({ path: "my-contracts/SKILL.md", data: skill("Mine."), user });
  assert.equal((await member.getSkill("contracts")).skill?.layer, "user");
  assert.deepEqual((await admin.setSkillProtected({ name: "contracts", team })).names, ["contracts"]);
  assert.deepEqual((await admin.listProtectedSkills({ team })).names, ["contracts"]);
  assert.equal((await member.getSkill("contracts")).skill?.layer, `team:${team}`);
  await admin.deleteLibraryFile({ path: "contracts/SKILL.md", team });
});

test("exportSkill maxBytes", async () => {
  // 64 KiB of noise does not compress: its gzip is too large to download for
  // a small maxBytes, and its tar (68096 bytes) too large to unpack for one
  // just below that.
  const admin = new SkillsvcClient({ target: env.target });
  const user = `ts-export-${randomUUID().slice(0, 6)}`;
  const c = admin.withIdentity({ user, thread: "t" });
  await admin.putLibraryFile({ path: "tools/noisy/SKILL.md", data: Buffer.from("---\nname: noisy\ndescription: Noise.\n---\nbody\n"), user });
  await admin.putLibraryFile({ path: "tools/noisy/noise.bin", data: randomBytes(64 * 1024), user });
  await admin.dropSkillIndex({ user });
  const dir = await tempDir("skillsvc-ts-export-");
  const small = await rejects(c.exportSkill("noisy", path.join(dir, "a"), { maxBytes: 16 * 1024 }), Code.ResourceExhausted);
  assert.match(small.rawMessage, /larger than a gzip of maxBytes/);
  const under = await rejects(c.exportSkill("noisy", path.join(dir, "b"), { maxBytes: 68095 }), Code.ResourceExhausted);
  assert.match(under.rawMessage, /unpacks to more than maxBytes/);
  const folder = await c.exportSkill("noisy", path.join(dir, "c"), { maxBytes: 68096 });
  assert.equal((await readFile(path.join(folder, "noise.bin"))).length, 64 * 1024);
});

// publish puts a version of a skill in user's library with LibraryService (the client leaves publishing to skillctl).
async function publish(user: string, name: string, files: Record<string, string>): Promise<string> {
  const lib = createClient(library.LibraryService, createGrpcTransport({ baseUrl: env.target }));
  async function* requests() {
    yield { msg: { case: "header" as const, value: { name } } };
    for (const [p, text] of Object.entries(files)) yield { msg: { case: "chunk" as const, value: { path: p, data: Buffer.from(text) } } };
  }
  const resp = await lib.publishSkill(requests(), { headers: { "x-skillsvc-user": user, "x-skillsvc-thread": "setup" }, timeoutMs: 30_000 });
  return resp.version!.id;
}

test("versions and watchSkills", async () => {
  const user = `ts-ver-${randomUUID().slice(0, 6)}`;
  const c = new SkillsvcClient({ target: env.target, user, thread: "t1" });
  const md = (body: string) => `---\nname: poem\ndescription: Write a poem.\n---\n${body} for $ARGUMENTS.\n`;
  const v1 = await publish(user, "poem", { "SKILL.md": md("Rhymes"), "refs/meter.md": "iambic\n" });
  const listed = (await c.listSkills({})).libraryDigest;
  await publish(user, "poem", { "SKILL.md": md("Free verse"), "refs/meter.md": "none\n" });

  assert.match((await c.getSkill("poem", { version: v1 })).raw, /Rhymes/);
  assert.match((await c.getSkill("poem")).raw, /Free verse/);
  assert.match((await c.renderSkill({ path: "poem", arguments: "spring", version: v1.slice(0, 19) })).text, /Rhymes for spring\./);
  assert.equal((await c.readSkillFile("poem", "refs/meter.md", { version: v1 })).content, "iambic\n");
  const dir = await tempDir("ts-ver-");
  assert.equal(await readFile(path.join(await c.exportSkill("poem", dir, { version: v1 }), "refs/meter.md"), "utf8"), "iambic\n");
  await rejects(c.getSkill("poem", { version: "no-such-label" }), Code.NotFound);

  // Resumed from the listing before the second version, the watch starts with that change.
  const stop = new AbortController();
  const watch = c.watchSkills(listed, { signal: stop.signal });
  const first = (await watch.next()).value as skills.WatchSkillsResponse;
  assert.equal(first.reset, false);
  assert.deepEqual(first.changes.map((ch) => [ch.name, ch.kind]), [["poem", skills.SkillChange_Kind.CHANGED]]);
  await c.setSkillEnabled("poem", false);
  const next = (await watch.next()).value as skills.WatchSkillsResponse;
  assert.deepEqual(next.changes.map((ch) => [ch.name, ch.kind]), [["poem", skills.SkillChange_Kind.DISABLED]]);
  stop.abort();
  await watch.return(undefined);
});
