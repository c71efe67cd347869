// TLS against the real binary serving mutual TLS (testenv --mtls): the
// client's certificate options connect, and a client without its
// certificate, or without TLS, is refused.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, test } from "node:test";

import { SkillsvcClient } from "@skillsvc/client";
import { code, testenv, type Env } from "./testenv.js";

let env: Env;
before(async () => {
  env = await testenv([], ["--mtls"]);
});
after(async () => env?.stop());

test("mutual TLS", async () => {
  assert.match(env.target, /^https:/);
  const c = new SkillsvcClient({
    target: env.target,
    user: env.user,
    thread: "ts-tls",
    ca: await readFile(env.ca_file!),
    cert: await readFile(env.client_cert_file!),
    key: await readFile(env.client_key_file!),
  });
  assert.deepEqual((await c.listCategories()).categories.map((x) => x.name).sort(), ["data", "writing"]);
});

test("refused without the client certificate, or without TLS", async () => {
  const id = { user: env.user, thread: "ts-tls", timeoutMs: 5000, maxAttempts: 1 };
  const noCert = new SkillsvcClient({ ...id, target: env.target, ca: await readFile(env.ca_file!) });
  assert.equal(await code(noCert.listCategories()), "UNAVAILABLE");
  // A plaintext HTTP/2 client is hung up on; Connect reports that as CANCELED.
  const plain = new SkillsvcClient({ ...id, target: env.target.replace(/^https:/, "http:") });
  assert.notEqual(await code(plain.listCategories()), "OK");
});
