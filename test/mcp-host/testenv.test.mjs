// The suite's testenv helper: a testenv that cannot start is reported with
// its exit code and the reason it gave as soon as it exits, not after the
// start timeout; without a testenv to run, the error says how to give one.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { start, tempDir } from './testenv.mjs';

test('a testenv given a bad flag says why', async () => {
  await assert.rejects(start([], { testenvFlags: ['--no-such-flag'] }), (err) => {
    assert.match(err.message, /testenv exited with code [1-9]\d* before serving/); // 2, or go run's 1
    assert.match(err.message, /flag provided but not defined: -no-such-flag/);
    return true;
  });
});

test('a skillsvc that cannot start says why', async () => {
  await assert.rejects(start(['--storage=ftp']), (err) => {
    assert.match(err.message, /testenv exited with code [1-9]\d* before serving/);
    assert.match(err.message, /unknown storage "ftp"/);
    return true;
  });
});

test('a missing testenv binary says how to give one', async () => {
  const saved = process.env.SKILLSVC_TESTENV;
  const missing = path.join(tempDir('skillsvc-mcp-host-'), 'testenv');
  process.env.SKILLSVC_TESTENV = missing;
  try {
    await assert.rejects(start(), (err) => {
      assert.ok(err.message.includes(missing) && err.message.includes('SKILLSVC_TESTENV'), err.message);
      return true;
    });
  } finally {
    if (saved === undefined) delete process.env.SKILLSVC_TESTENV;
    else process.env.SKILLSVC_TESTENV = saved;
  }
});
