// Provenance through the client: listSkills and searchSkills with includeProvenance, trustLine, and SkillTools'
// opt-in trust line, against the real binary on MinIO with a signing key configured. A skill published and signed
// with skillctl (the client leaves signing to it) shows verified, scanned and its publisher; one published unsigned
// shows unsigned; the example library, uploaded to the bucket directly, shows out of band.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { accessSync, constants } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";

import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SkillsvcClient, library, trustLine, type Provenance } from "@skillsvc/client";
import { SkillTools } from "@skillsvc/client/tools";
import { repoRoot, tempDir, testenv, type Env } from "./testenv.js";

let env: Env;
let c: SkillsvcClient;
let signed: string;
let unsigned: string;

/** bin/skillctl, which `make build` writes (test-ts builds it), or $SKILLCTL_BIN. */
function skillctl(): string {
  const bin = process.env.SKILLCTL_BIN || path.join(repoRoot, "bin/skillctl");
  accessSync(bin, constants.X_OK);
  return bin;
}

async function publish(name: string, description: string): Promise<string> {
  const lib = createClient(library.LibraryService, createGrpcTransport({ baseUrl: env.target }));
  const md = `---\nname: ${name}\ndescription: ${description}\n---\n${description}\n`;
  async function* requests() {
    yield { msg: { case: "header" as const, value: { name } } };
    yield { msg: { case: "chunk" as const, value: { path: "SKILL.md", data: Buffer.from(md) } } };
  }
  const resp = await lib.publishSkill(requests(), { headers: { "x-skillsvc-user": env.user, "x-skillsvc-thread": "setup" }, timeoutMs: 30_000 });
  return resp.version!.id;
}

before(async () => {
  const keys = await tempDir("ts-prov-");
  const { publicKey, privateKey } = generateKeyPairSync("ed25519", {
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  await writeFile(path.join(keys, "release.pub"), publicKey);
  await writeFile(path.join(keys, "release.key"), privateKey, { mode: 0o600 });
  env = await testenv([`--library.signing-keys=release=${path.join(keys, "release.pub")}`]);
  c = new SkillsvcClient({ target: env.target, user: env.user, thread: "t1" });
  signed = await publish("ledger-reconcile", "Reconcile a ledger export against bank statements.");
  unsigned = await publish("invoice-archive", "Archive the paid invoices of a closed quarter as a PDF bundle.");
  await promisify(execFile)(skillctl(), ["sign", "ledger-reconcile", signed, "--key", path.join(keys, "release.key")], {
    env: { ...process.env, SKILLCTL_TARGET: env.grpc_addr, SKILLCTL_USER: env.user },
    timeout: 60_000,
  });
});
after(async () => env?.stop());

// Each published skill's own search.
const QUERIES = ["reconcile a ledger with bank statements", "archive paid invoices of a quarter"];

function check(byName: Map<string, Provenance | undefined>) {
  const s = byName.get("ledger-reconcile");
  assert.deepEqual(
    [s?.version, s?.publisher, s?.signature, s?.signatureKey, s?.scanVerdict, s?.outOfBand],
    [signed, env.user, "verified", "release", "clean", false],
  );
  const u = byName.get("invoice-archive");
  assert.deepEqual([u?.version, u?.publisher, u?.signature, u?.signatureKey, u?.scanVerdict], [unsigned, env.user, "unsigned", "", "clean"]);
}

test("listSkills and searchSkills with includeProvenance", async () => {
  const listed = (await c.listSkills({ includeProvenance: true, pageSize: 1000 })).skills;
  check(new Map(listed.map((s) => [s.name, s.provenance])));
  // The example library went into the bucket directly.
  const csv = listed.find((s) => s.name === "csv-summary")?.provenance;
  assert.deepEqual([csv?.outOfBand, csv?.signature, csv?.version], [true, "unsigned", ""]);
  for await (const s of c.iterSkills({ includeProvenance: true })) assert.ok(s.provenance, s.name);

  const found = [];
  for (const query of QUERIES) found.push(...(await c.searchSkills({ query, includeProvenance: true })).results);
  check(new Map(found.map((r) => [r.skill!.name, r.skill!.provenance])));

  // Not asked for, not set.
  assert.ok((await c.listSkills({ pageSize: 1000 })).skills.every((s) => s.provenance === undefined));
  assert.ok((await c.searchSkills({ query: QUERIES[0] })).results.every((r) => r.skill!.provenance === undefined));
});

test("trustLine", async () => {
  const listed = (await c.listSkills({ includeProvenance: true, pageSize: 1000 })).skills;
  const lines = new Map(listed.map((s) => [s.name, trustLine(s.provenance!)]));
  assert.equal(lines.get("ledger-reconcile"), `Trust: signature verified by release, scan clean, published by ${env.user}.`);
  assert.equal(lines.get("invoice-archive"), `Trust: signature unsigned, scan clean, published by ${env.user}.`);
  assert.match(lines.get("csv-summary")!, /^Trust: signature unsigned, scan \w+, uploaded to the library directly \(no published version\)\.$/);
});

test("SkillTools provenance: a trust line after load_skill only when asked", async () => {
  const plain = await new SkillTools(c).run("load_skill", { skill: "ledger-reconcile" });
  assert.ok(!plain.includes("Trust:"), plain);
  assert.ok(!(await new SkillTools(c).prompt()).includes("verified"));
  const text = await new SkillTools(c, { provenance: true }).run("load_skill", { skill: "ledger-reconcile" });
  assert.equal(text, `${plain.replace(/\n+$/, "")}\n\nTrust: signature verified by release, scan clean, published by ${env.user}.`);
});
