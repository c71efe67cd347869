// The published skills CLI (vercel-labs/skills, `npx skills`, pinned in
// package.json) installs every skill of skillsvc's Agent Skills discovery
// index (/.well-known/agent-skills/index.json, draft v0.2.0), against the
// real binary on MinIO with its default flags and the example library:
// the CLI checks the index's $schema and names, fetches each artifact,
// verifies its sha256 against the index's digest and unpacks archives by
// its own rules (files at the root, no links, no ".."). Each installed
// file must be the file skillsvc's manifest names, byte for byte; and a
// skill whose archive arrives altered must not be installed at all.
//
// The CLI sends no credentials of its own, and skillsvc serves the index
// per caller, so the CLI talks to a small gateway here that adds the
// caller's identity headers and forwards everything else untouched, as a
// deployment's authenticating proxy would. Its fetch reaches loopback only
// (offline.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { start, tempDir } from '../mcp-host/testenv.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, 'node_modules/skills/bin/cli.mjs');
const NODE = path.join(here, 'node_modules/.bin/node');

let env;
let identity;
const gateways = [];

before(async () => {
  env = await start();
  identity = { 'X-Skillsvc-User': env.user, 'X-Skillsvc-Thread': 'well-known' };
});

after(async () => {
  for (const g of gateways) g.close();
  await env?.stop();
});

// gateway forwards to skillsvc's HTTP listener with the caller's identity
// added; alter(path, body) may change a response body on its way back.
async function gateway(alter) {
  const [host, port] = env.http_addr.split(':');
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, ...identity };
    const upstream = http.request({ host, port, method: req.method, path: req.url, headers }, (up) => {
      const chunks = [];
      up.on('data', (c) => chunks.push(c));
      up.on('end', () => {
        let body = Buffer.concat(chunks);
        if (alter) body = alter(req.url, body);
        const h = { ...up.headers };
        delete h['transfer-encoding'];
        h['content-length'] = String(body.length);
        res.writeHead(up.statusCode, h).end(body);
      });
    });
    upstream.on('error', (err) => res.writeHead(502).end(`gateway: ${err.message}`));
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  gateways.push(server);
  return `http://127.0.0.1:${server.address().port}`;
}

async function json(base, p, init) {
  const res = await fetch(base + p, init);
  assert.equal(res.status, 200, `${p}: ${res.status} ${await res.clone().text()}`);
  return res.json();
}

// skillsAdd runs `skills add <base> --skill '*' --agent claude-code --copy
// -y` in a new project directory, offline, and returns the directory and
// the URLs the CLI fetched.
function skillsAdd(base) {
  const project = tempDir('well-known-project-');
  const home = tempDir('well-known-home-');
  const log = path.join(home, 'fetch.log');
  return new Promise((resolve, reject) => {
    execFile(
      NODE,
      ['--import', path.join(here, 'offline.mjs'), CLI, 'add', base, '--skill', '*', '--agent', 'claude-code', '--copy', '-y'],
      {
        cwd: project,
        timeout: 120_000,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          XDG_CONFIG_HOME: path.join(home, '.config'),
          DISABLE_TELEMETRY: '1',
          DO_NOT_TRACK: '1',
          NO_COLOR: '1',
          WELL_KNOWN_FETCH_LOG: log,
        },
      },
      (err, stdout, stderr) => {
        const fetched = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
        if (err) reject(new Error(`skills add: ${err.message}\n${stdout}\n${stderr}\nfetched:\n${fetched.join('\n')}`));
        else resolve({ project, fetched, output: stdout + stderr });
      },
    );
  });
}

// files lists a directory's files, relative, sorted.
function files(dir, rel = '') {
  const out = [];
  for (const name of readdirSync(path.join(dir, rel)).sort()) {
    const p = path.join(rel, name);
    if (statSync(path.join(dir, p)).isDirectory()) out.push(...files(dir, p));
    else out.push(p);
  }
  return out.sort();
}

// manifest is the skill's files by path in the skill, with their sha256,
// as GetSkill (over the JSON API) lists them.
async function manifest(name) {
  const got = await json(`http://${env.http_addr}`, '/skillsvc.v1.SkillsService/GetSkill', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...identity },
    body: JSON.stringify({ path: name }),
  });
  const out = {};
  for (const f of got.skill.manifest.files) out[f.path.slice(got.skill.path.length + 1)] = f.sha256;
  return out;
}

test('skills add installs every skill of the index, each file the manifest names', async () => {
  const base = await gateway();
  const index = await json(base, '/.well-known/agent-skills/index.json');
  assert.equal(index.$schema, 'https://schemas.agentskills.io/discovery/0.2.0/schema.json');
  const types = Object.fromEntries(index.skills.map((s) => [s.name, s.type]));
  assert.deepEqual(types, { 'commit-message': 'skill-md', 'csv-summary': 'archive', 'release-notes': 'archive' });

  const { project, fetched, output } = await skillsAdd(base);
  for (const s of index.skills) {
    assert.ok(fetched.includes(`GET ${new URL(s.url, base)}`), `the CLI did not fetch ${s.url}:\n${fetched.join('\n')}`);
  }
  assert.ok(fetched.some((l) => l === `GET ${base}/.well-known/agent-skills/index.json`), fetched.join('\n'));
  const installed = path.join(project, '.claude/skills');
  assert.deepEqual(readdirSync(installed).sort(), Object.keys(types).sort(), output);
  for (const s of index.skills) {
    const want = await manifest(s.name);
    const dir = path.join(installed, s.name);
    assert.deepEqual(files(dir), Object.keys(want).sort(), `${s.name}: ${output}`);
    for (const [rel, sum] of Object.entries(want)) {
      const got = createHash('sha256').update(readFileSync(path.join(dir, rel))).digest('hex');
      assert.equal(got, sum, `${s.name}/${rel}`);
    }
  }
});

test('skills add refuses an archive whose bytes are not the digest', async () => {
  // One byte of release-notes' archive changed on the way: the CLI must
  // drop that skill and install the others.
  const base = await gateway((url, body) => {
    if (!url.endsWith('/release-notes.tar.gz')) return body;
    const altered = Buffer.from(body);
    altered[altered.length - 1] ^= 0xff;
    return altered;
  });
  const { project, output } = await skillsAdd(base);
  assert.deepEqual(readdirSync(path.join(project, '.claude/skills')).sort(), ['commit-message', 'csv-summary'], output);
});
