// MCP Inspector's CLI (the published @modelcontextprotocol/inspector, pinned)
// against the real skillsvc binary on MinIO, on both protocol eras: its
// tool-schema portability lint (tools/list --strict) finds nothing, not
// even a warning, and its SEP-2640 checks (skills/list --verify) pass with
// every digest verified.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { start, tempDir } from './testenv.mjs';

const CLI = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js',
);

let env;
before(async () => {
  env = await start();
});
after(async () => {
  await env?.stop();
});

// inspector runs the CLI as a user would, with a catalog and home of its own.
function inspector(args) {
  const home = tempDir('skillsvc-inspector-');
  const all = [
    CLI,
    `http://${env.http_addr}/mcp`,
    '--header', `X-Skillsvc-User: ${env.user}`,
    '--header', 'X-Skillsvc-Thread: inspector',
    ...args,
  ];
  return new Promise((resolve) => {
    execFile(process.execPath, all, { env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') }, timeout: 120_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => resolve({ code: err ? (err.code ?? err.signal) : 0, stdout, stderr }));
  });
}

for (const era of ['legacy', 'modern']) {
  test(`tools/list --strict finds no schema portability problem (${era})`, async () => {
    const { code, stdout, stderr } = await inspector(['--protocol-era', era, '--method', 'tools/list', '--strict', '--format', 'json']);
    assert.equal(code, 0, `exit ${code}:\n${stderr}`);
    assert.equal(stderr.trim(), '', 'the lint reported findings');
    const out = JSON.parse(stdout);
    assert.equal(out.schemaFindings, undefined, JSON.stringify(out.schemaFindings));
    assert.ok(out.result.tools.length >= 10);
    for (const tool of out.result.tools) {
      assert.ok(tool.annotations?.title && typeof tool.annotations.readOnlyHint === 'boolean', `${tool.name} has no annotations`);
    }
  });

  test(`skills/list --verify passes every check (${era})`, async () => {
    const { code, stdout, stderr } = await inspector(['--protocol-era', era, '--method', 'skills/list', '--verify']);
    assert.equal(code, 0, `exit ${code}:\n${stderr}`);
    const reports = stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(reports.length, 3, stdout);
    for (const r of reports) {
      assert.deepEqual(r.conformance, [], `${r.uri}: ${JSON.stringify(r.conformance)}`);
      assert.deepEqual(r.frontmatter, [], `${r.uri}: ${JSON.stringify(r.frontmatter)}`);
      for (const f of r.files) assert.equal(f.status, 'verified', `${f.uri}: ${f.status}`);
    }
    assert.match(stderr, /no conformance errors/);
    assert.doesNotMatch(stderr, /warn/i);
  });
}
