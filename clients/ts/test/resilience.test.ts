// What the client does when the service fails: read-only calls are retried
// on UNAVAILABLE and writes are not, timeouts end calls, and a per-user
// limit's retry delay reaches the caller. Failures are injected by an
// interceptor in front of the real service (the behaviour under test is the
// client's); the retry delay comes from the real binary with a tight limit.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";

import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

import { SkillsvcClient, SkillsvcError } from "@skillsvc/client";
import { code, testenv, type Env } from "./testenv.js";

let env: Env;
before(async () => {
  env = await testenv();
});
after(async () => env?.stop());

// flaky fails the first `failures` calls of each method in `fail` with
// UNAVAILABLE, and holds every call of a method in `hold` until the caller
// gives up; it counts every call by method.
function flaky(opts: { fail?: string[]; failures?: number; hold?: string[] }) {
  const calls: Record<string, number> = {};
  const interceptor: Interceptor = (next) => async (req) => {
    const name = req.method.name;
    calls[name] = (calls[name] ?? 0) + 1;
    if (opts.fail?.includes(name) && calls[name] <= (opts.failures ?? Infinity)) {
      throw new ConnectError("storage is not answering", Code.Unavailable);
    }
    if (opts.hold?.includes(name)) {
      await new Promise<void>((resolve) => {
        const safety = setTimeout(resolve, 10_000);
        req.signal.addEventListener("abort", () => (clearTimeout(safety), resolve()));
      });
      if (!req.signal.aborted) throw new ConnectError("the client did not give up", Code.Internal);
    }
    return next(req);
  };
  const transport = createGrpcTransport({ baseUrl: env.target, interceptors: [interceptor] });
  return { calls, transport };
}

const identity = () => ({ user: env.user, thread: `ts-res-${randomUUID().slice(0, 8)}` });

test("read-only calls are retried on UNAVAILABLE, then answered by the service", async () => {
  const id = identity();
  await new SkillsvcClient({ target: env.target, ...id }).writeFile({ path: "/workspace/a.md", content: "seven.\n" });
  const f = flaky({ fail: ["Stat"], failures: 2 });
  const c = new SkillsvcClient({ ...id, transport: f.transport });
  assert.equal((await c.stat("/workspace/a.md")).info?.size, 7n);
  assert.equal(f.calls.Stat, 3);
});

test("retries stop after maxAttempts", async () => {
  const f = flaky({ fail: ["Stat"] });
  const c = new SkillsvcClient({ ...identity(), transport: f.transport, maxAttempts: 3 });
  assert.equal(await code(c.stat("/workspace/a.md")), "UNAVAILABLE");
  assert.equal(f.calls.Stat, 3);
});

test("writes are not retried", async () => {
  const f = flaky({ fail: ["Write", "Edit", "Delete"] });
  const c = new SkillsvcClient({ ...identity(), transport: f.transport });
  assert.equal(await code(c.writeFile({ path: "/workspace/a.md", content: "x" })), "UNAVAILABLE");
  assert.equal(await code(c.edit({ path: "/workspace/a.md", oldString: "x", newString: "y" })), "UNAVAILABLE");
  assert.equal(await code(c.delete({ path: "/workspace/a.md" })), "UNAVAILABLE");
  assert.deepEqual(f.calls, { Write: 1, Edit: 1, Delete: 1 });
});

test("timeouts end calls: the client's default and per call", async () => {
  const f = flaky({ hold: ["Read"] });
  const c = new SkillsvcClient({ ...identity(), transport: f.transport, timeoutMs: 200 });
  assert.equal(await code(c.readFile({ path: "/workspace/a.md" })), "DEADLINE_EXCEEDED");
  const none = new SkillsvcClient({ ...identity(), transport: f.transport, timeoutMs: 0 });
  assert.equal(await code(none.readFile({ path: "/workspace/a.md" }, { timeoutMs: 100 })), "DEADLINE_EXCEEDED");
  assert.equal(f.calls.Read, 2);
});

test("a per-user limit's retry delay reaches the caller", async () => {
  const limited = await testenv(["--limits.rate=0.01", "--limits.burst=1"]);
  try {
    const c = new SkillsvcClient({ target: limited.target, user: limited.user, thread: "ts-limits" });
    try {
      // The burst is one unit: ten calls from memory at a tenth each,
      // fewer when the first indexes the library in storage.
      for (let i = 0; i < 11; i++) await c.listCategories();
      assert.fail("eleven calls were not limited");
    } catch (err) {
      assert.ok(err instanceof SkillsvcError, String(err));
      assert.equal(err.codeName, "RESOURCE_EXHAUSTED");
      // A tenth of a unit short, up to a burst in debt: 10 to 110 s at 0.01 a second.
      assert.ok(err.retryAfterMs !== undefined && err.retryAfterMs >= 1000 && err.retryAfterMs <= 111_000, String(err.retryAfterMs));
    }
  } finally {
    await limited.stop();
  }
});
