// The published MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in package.json) runs its server scenarios against the real
// skillsvc binary on MinIO with its default flags: every scenario that
// applies to skillsvc, on every protocol revision the suite knows from the
// newest one skillsvc serves with sessions (2025-11-25) on, and every check
// must pass. The scenarios come from the suite's own `list`, so one that an
// upgrade adds fails the run until it is classified below.
//
// The suite cannot send headers of its own, and skillsvc wants the caller's
// identity on every request, so the suite talks to a small gateway here
// that adds the identity headers and forwards everything else untouched
// (Host and Origin included, which dns-rebinding-protection relies on), as
// an MCP host's gateway would.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { start } from '../mcp-host/testenv.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SUITE = path.join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

// The first revision run: the newest one skillsvc negotiates through the
// initialize handshake. Every later revision the suite knows runs too.
const FIRST_REVISION = '2025-11-25';

// Scenarios that do not apply to skillsvc, each with why. Most call the
// suite's own fixture tools, prompts or resources (test_simple_text,
// test://static-text, …), which a real server does not have.
const NOT_APPLICABLE = {
  'logging-set-level': 'skillsvc declares no logging capability: it sends no log notifications',
  'completion-complete': "skillsvc declares no completions capability; asks for the suite's fixture prompt",
  'prompts-list': 'skillsvc serves no prompts and declares no prompts capability: prompts/list is -32601',
  'prompts-get-simple': "gets the suite's fixture prompt test_simple_prompt",
  'prompts-get-with-args': "gets the suite's fixture prompt test_prompt_with_arguments",
  'prompts-get-embedded-resource': "gets the suite's fixture prompt test_prompt_with_embedded_resource",
  'prompts-get-with-image': "gets the suite's fixture prompt test_prompt_with_image",
  'tools-call-simple-text': "calls the suite's fixture tool test_simple_text",
  'tools-call-image': "calls the suite's fixture tool test_image_content",
  'tools-call-audio': "calls the suite's fixture tool test_audio_content",
  'tools-call-embedded-resource': "calls the suite's fixture tool test_embedded_resource",
  'tools-call-mixed-content': "calls the suite's fixture tool test_multiple_content_types",
  'tools-call-with-logging': "calls the suite's fixture tool test_tool_with_logging",
  'tools-call-error': "calls the suite's fixture tool test_error_handling",
  'tools-call-with-progress': "calls the suite's fixture tool test_tool_with_progress",
  'tools-call-sampling': "calls the suite's fixture tool test_sampling (skillsvc never samples)",
  'tools-call-elicitation': "calls the suite's fixture tool test_elicitation (skillsvc never elicits)",
  'json-schema-2020-12': "looks for the suite's fixture tool json_schema_2020_12_tool",
  'elicitation-sep1034-defaults': "calls the suite's fixture tool test_elicitation_sep1034_defaults",
  'elicitation-sep1330-enums': "calls the suite's fixture tool test_elicitation_sep1330_enums",
  'server-sse-polling': "calls the suite's fixture tool test_reconnection, which drops its stream mid-call",
  'resources-read-text': "reads the suite's fixture resource test://static-text",
  'resources-read-binary': "reads the suite's fixture resource test://static-binary",
  'resources-templates-read': "reads the suite's fixture template test://template/{id}/data",
  'resources-subscribe': "subscribes to the suite's fixture resource test://watched-resource",
  'resources-unsubscribe': "unsubscribes from the suite's fixture resource test://watched-resource",
  'http-custom-header-server-validation': 'needs a tool with x-mcp-header parameters; no skillsvc tool has one',
  'input-required-result-basic-elicitation': "calls the suite's fixture tool test_input_required_result_elicitation",
  'input-required-result-basic-sampling': "calls the suite's fixture tool test_input_required_result_sampling",
  'input-required-result-basic-list-roots': "calls the suite's fixture tool test_input_required_result_list_roots",
  'input-required-result-request-state': "calls the suite's fixture tool test_input_required_result_request_state",
  'input-required-result-multiple-input-requests':
    "calls the suite's fixture tool test_input_required_result_multiple_inputs",
  'input-required-result-multi-round': "calls the suite's fixture tool test_input_required_result_multi_round",
  'input-required-result-missing-input-response':
    "calls the suite's fixture tool test_input_required_result_elicitation",
  'input-required-result-non-tool-request': "gets the suite's fixture prompt test_input_required_result_prompt",
  'input-required-result-result-type': "calls the suite's fixture tool test_input_required_result_elicitation",
  'input-required-result-tampered-state': "calls the suite's fixture tool test_input_required_result_tampered_state",
  'input-required-result-capability-check': "calls the suite's fixture tool test_input_required_result_capabilities",
  'input-required-result-ignore-extra-params': "calls the suite's fixture tool test_input_required_result_elicitation",
  'input-required-result-validate-input': "calls the suite's fixture tool test_input_required_result_elicitation",
  'tasks-lifecycle': 'skillsvc does not declare the io.modelcontextprotocol/tasks extension',
  'tasks-capability-negotiation': 'skillsvc does not declare the io.modelcontextprotocol/tasks extension',
  'tasks-wire-fields': 'skillsvc does not declare the io.modelcontextprotocol/tasks extension',
  'tasks-request-state-removal': 'skillsvc does not declare the io.modelcontextprotocol/tasks extension',
  'tasks-mrtr-input': 'skillsvc does not declare the io.modelcontextprotocol/tasks extension',
  'tasks-request-headers': 'skillsvc does not declare the io.modelcontextprotocol/tasks extension',
  'tasks-dispatch-and-envelope': 'skillsvc does not declare the io.modelcontextprotocol/tasks extension',
  'tasks-status-notifications': 'skillsvc does not declare the io.modelcontextprotocol/tasks extension',
  'tasks-required-task-error': 'skillsvc does not declare the io.modelcontextprotocol/tasks extension',
  'tasks-mrtr-composition': 'skillsvc does not declare the io.modelcontextprotocol/tasks extension',
};

// Scenarios that apply: each runs on every revision in its applicability
// (an extension scenario, off the suite's timeline, on every revision).
const APPLIES = [
  'server-initialize',
  'server-session-lifecycle',
  'server-stateless',
  'ping',
  'tools-list',
  'server-sse-multiple-streams',
  'resources-list',
  'sep-2164-resource-not-found',
  'dns-rebinding-protection',
  'caching',
  'http-header-validation',
  'input-required-result-unsupported-methods',
  'sep-2640-skills-enumeration',
  'sep-2640-skills-manifest',
  'sep-2640-skills-directory',
];

// Checks allowed to end other than SUCCESS (or INFO), by check id: the
// status, what the suite must say (its errorMessage, else details.note),
// optionally the revisions, and why. The suite reports a check it could not
// exercise without a fixture of its own as a FAILURE "Not testable: …".
const fixture = (tool) => ({
  status: 'FAILURE',
  says: new RegExp(`^Not testable: server does not list the diagnostic tool '${tool}' in tools/list`),
  reason: `needs the suite's diagnostic fixture tool ${tool}`,
});
const ALLOWED = {
  'sep-2575-server-rejects-undeclared-capability': fixture('test_missing_capability'),
  'sep-2575-missing-capability-http-400': fixture('test_missing_capability'),
  'sep-2575-http-server-no-independent-requests-on-stream': fixture('test_streaming_elicitation'),
  'sep-2575-server-no-log-without-loglevel': fixture('test_logging_tool'),
  'sep-2575-server-sends-tools-list-changed-on-subscription': {
    status: 'SKIPPED',
    says: /^Server did not declare tools\.listChanged capability/,
    reason: 'skillsvc declares no tools.listChanged: its tool list is fixed',
  },
  'sep-2575-server-sends-prompts-list-changed-on-subscription': {
    status: 'SKIPPED',
    says: /^Server did not declare prompts\.listChanged capability/,
    reason: 'skillsvc serves no prompts and declares no prompts capability',
  },
  'sep-2549-prompts-list-caching-hints': {
    status: 'FAILURE',
    says: /^prompts\/list returned JSON-RPC error -32601/,
    reason: 'skillsvc serves no prompts and declares no prompts capability: prompts/list is -32601',
  },
  'sep-2640-skills-list-cache-attributes': {
    status: 'SKIPPED',
    revisions: ['2025-11-25'],
    says: /^not applicable on negotiated protocol 2025-11-25/,
    reason: 'ttlMs and cacheScope are defined from 2026-07-28 on',
  },
  'sep-2640-skills-get-cache-attributes': {
    status: 'SKIPPED',
    revisions: ['2025-11-25'],
    says: /^not applicable on negotiated protocol 2025-11-25/,
    reason: 'ttlMs and cacheScope are defined from 2026-07-28 on',
  },
};

function suite(args, { timeoutMs = 120_000 } = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [SUITE, ...args], { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code ?? err.signal) : 0, stdout, stderr }),
    );
  });
}

// The suite's server scenarios with the revisions each applies at, or
// ['extension'] for one off the timeline: `list --server` prints
// "  - <name> [<revision>,…]".
async function listScenarios() {
  const { code, stdout, stderr } = await suite(['list', '--server']);
  assert.equal(code, 0, `conformance list failed:\n${stderr}`);
  const scenarios = new Map();
  for (const line of stdout.split('\n')) {
    const m = /^\s+- (\S+) \[([^\]]*)\]$/.exec(line);
    if (m) scenarios.set(m[1], m[2].split(','));
  }
  assert.ok(scenarios.size > 0, `no scenarios in the suite's list output:\n${stdout}`);
  return scenarios;
}

const scenarios = await listScenarios();
// Every dated revision a scenario applies at, from FIRST_REVISION on.
const revisions = [...new Set([...scenarios.values()].flat())]
  .filter((tag) => /^\d{4}-\d{2}-\d{2}$/.test(tag) && tag >= FIRST_REVISION)
  .sort();

let env;
let gateway;
let url;

before(async () => {
  env = await start();
  gateway = await startGateway(env.http_addr, { 'X-Skillsvc-User': env.user, 'X-Skillsvc-Thread': 'conformance' });
  url = `http://127.0.0.1:${gateway.address().port}/mcp`;
});

after(async () => {
  gateway?.closeAllConnections();
  await new Promise((resolve) => (gateway ? gateway.close(resolve) : resolve()));
  await env?.stop();
});

// startGateway forwards every request to target with identity set on top
// of the request's own headers, and the response back as it comes (SSE
// streams included).
function startGateway(target, identity) {
  const [host, port] = target.split(':');
  const ours = new Set(Object.keys(identity).map((k) => k.toLowerCase()));
  const server = http.createServer((req, res) => {
    const headers = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (!ours.has(req.rawHeaders[i].toLowerCase())) headers.push(req.rawHeaders[i], req.rawHeaders[i + 1]);
    }
    for (const [k, v] of Object.entries(identity)) headers.push(k, v);
    const upstream = http.request({ host, port, method: req.method, path: req.url, headers }, (up) => {
      res.writeHead(up.statusCode, up.rawHeaders);
      up.pipe(res);
    });
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502).end(`gateway: ${err.message}`);
      else res.destroy(err);
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('every scenario of the suite is classified', () => {
  const known = new Set([...APPLIES, ...Object.keys(NOT_APPLICABLE)]);
  const unclassified = [...scenarios.keys()].filter((s) => !known.has(s));
  assert.deepEqual(unclassified, [], 'scenarios neither in APPLIES nor in NOT_APPLICABLE');
  assert.deepEqual(
    [...known].filter((s) => !scenarios.has(s)),
    [],
    'classified scenarios the suite no longer has',
  );
  assert.deepEqual(
    APPLIES.filter((s) => s in NOT_APPLICABLE),
    [],
    'scenarios classified both ways',
  );
  for (const s of APPLIES.filter((s) => scenarios.has(s))) {
    const tags = scenarios.get(s);
    assert.ok(
      tags.includes('extension') || tags.some((r) => revisions.includes(r)),
      `${s} applies at ${tags.join(', ')}, none of which runs here`,
    );
  }
});

for (const revision of revisions) {
  for (const scenario of APPLIES) {
    const tags = scenarios.get(scenario);
    const extension = tags?.includes('extension');
    if (!tags || !(extension || tags.includes(revision))) continue;
    test(`${revision} ${scenario}`, async (t) => {
      const checks = await runScenario(scenario, revision, extension);
      const problems = [];
      for (const c of checks) {
        if (c.status === 'SUCCESS' || c.status === 'INFO') continue;
        const said = c.errorMessage ?? c.details?.note ?? '';
        const allowed = ALLOWED[c.id];
        if (
          allowed &&
          allowed.status === c.status &&
          (!allowed.revisions || allowed.revisions.includes(revision)) &&
          allowed.says.test(said)
        ) {
          t.diagnostic(`${c.id} ${c.status} allowed: ${allowed.reason}`);
          continue;
        }
        problems.push(`${c.id} ${c.status}: ${said}`);
      }
      const passed = checks.filter((c) => c.status === 'SUCCESS').length;
      t.diagnostic(`${passed} of ${checks.length} checks SUCCESS`);
      if (problems.length > 0) assert.fail(`${scenario} on ${revision}:\n  ${problems.join('\n  ')}`);
    });
  }
}

// runScenario runs one scenario at one revision and returns its checks. An
// extension scenario needs --force to run at a dated revision.
async function runScenario(scenario, revision, extension) {
  const out = mkdtempSync(path.join(tmpdir(), 'skillsvc-conformance-'));
  try {
    const args = ['server', '--url', url, '--scenario', scenario, '--spec-version', revision, '--output-dir', out];
    if (extension) args.push('--force');
    const { code, stdout, stderr } = await suite(args);
    // The suite writes <out>/server-<scenario>-<time>/checks.json, unless
    // the scenario threw.
    const results = readdirSync(out).map((d) => path.join(out, d, 'checks.json'));
    if (results.length !== 1 || !existsSync(results[0])) {
      assert.fail(
        `${scenario} on ${revision} wrote no checks (exit ${code}):\n${stdout.slice(-4000)}\n${stderr.slice(-4000)}`,
      );
    }
    const checks = JSON.parse(readFileSync(results[0], 'utf8'));
    assert.ok(checks.length > 0, `${scenario} on ${revision} ran no checks:\n${stdout.slice(-4000)}`);
    return checks;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
