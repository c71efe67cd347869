// The official TypeScript MCP SDK, as an MCP host would use it, against the
// real skillsvc binary on MinIO: the skills extension (skills/list with
// digests, skills/get, skill:// reads verified the way the extension tells
// hosts to verify them), every tool, and a list change after an upload made
// with an ordinary S3 tool behind the service's back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { parse as parseYAML } from 'yaml';
import * as z from 'zod';

import { repoRoot, start, tempDir } from './testenv.mjs';

const EXTENSION = 'io.modelcontextprotocol/skills';
const library = path.join(repoRoot, 'examples/skills');

// The extension's result shapes, checked as a host would check them.
const SkillResource = z.object({
  uri: z.string(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
});
const Skill = z.object({
  uri: z.string(),
  frontmatter: z.looseObject({ name: z.string(), description: z.string() }),
  resources: z.union([z.array(SkillResource), z.literal('dynamic')]),
});
const Cacheable = { ttlMs: z.number().int().nonnegative(), cacheScope: z.string() };
const ListSkillsResult = z.looseObject({ skills: z.array(Skill), nextCursor: z.string().optional(), ...Cacheable });
const GetSkillResult = z.looseObject({ skill: Skill, ...Cacheable });

let env;
const clients = [];

before(async () => {
  // A one-second index refresh and watch interval, so an out-of-band upload
  // shows up within seconds.
  env = await start(['--skills.index-refresh=1s', '--mcp.watch-interval=1s']);
});

after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await env?.stop();
});

async function connect(thread, { user = env.user, onListChanged } = {}) {
  const client = new Client({ name: 'skillsvc-host-test', version: '1.0.0' });
  if (onListChanged) client.setNotificationHandler(ResourceListChangedNotificationSchema, onListChanged);
  const transport = new StreamableHTTPClientTransport(new URL(`http://${env.http_addr}/mcp`), {
    requestInit: { headers: { 'X-Skillsvc-User': user, 'X-Skillsvc-Thread': thread } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function listAllSkills(client) {
  const skills = [];
  let cursor;
  do {
    const page = await client.request({ method: 'skills/list', params: cursor ? { cursor } : {} }, ListSkillsResult);
    skills.push(...page.skills);
    cursor = page.nextCursor;
  } while (cursor);
  return skills;
}

// within fails the test when p has not settled after ms: a deadline, not a wait.
function within(p, ms, what) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms:\n${env.tail()}`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

const sha256 = (bytes) => 'sha256:' + createHash('sha256').update(bytes).digest('hex');

// The bytes a resources/read content carries, text or blob.
const contentBytes = (c) => (c.blob !== undefined ? Buffer.from(c.blob, 'base64') : Buffer.from(c.text, 'utf8'));

// Every file of the example library, keyed by its skill:// URI.
function libraryFiles() {
  const files = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else files.set('skill://' + path.relative(library, p).split(path.sep).join('/'), readFileSync(p));
    }
  };
  walk(library);
  return files;
}

function frontmatterOf(skillMd) {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(skillMd);
  assert.ok(m, 'SKILL.md starts with frontmatter');
  return parseYAML(m[1]);
}

// A host reads a listed file and verifies size and digest against the entry.
async function readVerified(client, resource) {
  const { contents } = await client.readResource({ uri: resource.uri });
  assert.equal(contents.length, 1, resource.uri);
  assert.equal(contents[0].uri, resource.uri);
  const bytes = contentBytes(contents[0]);
  assert.equal(bytes.length, resource.size, `size of ${resource.uri}`);
  assert.equal(sha256(bytes), resource.digest, `digest of ${resource.uri}`);
  return { content: contents[0], bytes };
}

async function callTool(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  const text = res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  return { isError: res.isError === true, text };
}

test('the server declares the skills extension and resources', async () => {
  const client = await connect('host-caps');
  const caps = client.getServerCapabilities();
  assert.ok(caps.resources, 'resources capability');
  assert.ok(caps.tools, 'tools capability');
  assert.ok(caps.extensions?.[EXTENSION], `extension ${EXTENSION} in ${JSON.stringify(caps)}`);
});

test('skills/list is a complete manifest of the real library, with digests', async () => {
  const client = await connect('host-list');
  const skills = await listAllSkills(client);
  const files = libraryFiles();

  assert.deepEqual(
    skills.map((s) => s.uri).sort(),
    [...files.keys()].filter((u) => u.endsWith('/SKILL.md')).sort(),
  );
  const listed = new Map();
  for (const skill of skills) {
    // The final skill-path segment is the skill's name.
    const segments = skill.uri.slice('skill://'.length).split('/');
    assert.equal(segments.at(-2), skill.frontmatter.name, skill.uri);
    assert.ok(Array.isArray(skill.resources), `${skill.uri} lists its files`);
    assert.ok(skill.resources.some((r) => r.uri === skill.uri), `${skill.uri} lists its SKILL.md`);
    // Frontmatter verbatim: every field the author wrote, nested ones too.
    assert.deepEqual(skill.frontmatter, frontmatterOf(files.get(skill.uri).toString()), skill.uri);
    for (const r of skill.resources) listed.set(r.uri, r);
  }
  // Every file of every skill, each with the digest and size of its bytes.
  assert.deepEqual([...listed.keys()].sort(), [...files.keys()].sort());
  for (const [uri, bytes] of files) {
    assert.equal(listed.get(uri).digest, sha256(bytes), uri);
    assert.equal(listed.get(uri).size, bytes.length, uri);
  }
});

test('a host loads a SKILL.md and a reference through skill:// URIs and verifies them', async () => {
  const client = await connect('host-read');
  const { skill } = await client.request(
    { method: 'skills/get', params: { uri: 'skill://writing/release-notes/SKILL.md' } },
    GetSkillResult,
  );
  assert.equal(skill.frontmatter.name, 'release-notes');
  assert.equal(skill.frontmatter.license, 'Apache-2.0');
  assert.deepEqual(skill.frontmatter.metadata, { owner: 'docs-team' });

  const skillMd = skill.resources.find((r) => r.uri === skill.uri);
  const { content, bytes } = await readVerified(client, skillMd);
  assert.equal(content.mimeType, 'text/markdown');
  assert.deepEqual(frontmatterOf(bytes.toString()), skill.frontmatter);

  // The reference SKILL.md names, resolved against the skill's root.
  assert.match(bytes.toString(), /references\/style\.md/);
  const ref = skill.resources.find((r) => r.uri === 'skill://writing/release-notes/references/style.md');
  assert.ok(ref, 'the reference is listed');
  const refRead = await readVerified(client, ref);
  assert.deepEqual(refRead.bytes, readFileSync(path.join(library, 'writing/release-notes/references/style.md')));

  // A script is a resource too.
  const script = await client.readResource({ uri: 'skill://data/csv-summary/scripts/summarize.py' });
  assert.match(script.contents[0].text, /csv/i);
});

test('unknown skills and files are Invalid params, as the extension requires', async () => {
  const client = await connect('host-errors');
  for (const call of [
    () => client.request({ method: 'skills/get', params: { uri: 'skill://writing/no-such-skill/SKILL.md' } }, GetSkillResult),
    () => client.readResource({ uri: 'skill://writing/release-notes/references/missing.md' }),
    () => client.readResource({ uri: 'skill://writing/../../bob/skills/x/SKILL.md' }),
  ]) {
    await assert.rejects(call, (err) => err instanceof McpError && err.code === ErrorCode.InvalidParams);
  }
});

test('the skill file template is listed', async () => {
  const client = await connect('host-templates');
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.ok(
    resourceTemplates.some((t) => t.uriTemplate.startsWith('skill://')),
    JSON.stringify(resourceTemplates),
  );
});

test('every tool works for a host without the extension', async () => {
  const client = await connect('host-tools');
  const { tools } = await client.listTools();
  const want = [
    'list_skills', 'load_skill', 'read_skill_file', 'search_skills',
    'ls', 'read_file', 'write_file', 'edit_file', 'glob', 'grep',
  ];
  assert.deepEqual(tools.map((t) => t.name).sort(), [...want].sort());
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object', t.name);
    assert.ok(t.description && t.description.length > 20, `${t.name} has a description a model can use`);
  }
  const schema = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema]));

  let r = await callTool(client, 'list_skills', {});
  assert.equal(r.isError, false, r.text);
  for (const name of ['release-notes', 'commit-message', 'csv-summary']) assert.match(r.text, new RegExp(name));

  r = await callTool(client, 'load_skill', { skill: 'writing/commit-message', arguments: 'fix the login redirect' });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /ARGUMENTS: fix the login redirect/);
  assert.ok(schema.load_skill.required?.includes('skill'));

  r = await callTool(client, 'read_skill_file', { skill: 'writing/release-notes', path: 'references/style.md' });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.text, readFileSync(path.join(library, 'writing/release-notes/references/style.md'), 'utf8'));

  r = await callTool(client, 'search_skills', { query: 'changelog' });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /release-notes/);

  r = await callTool(client, 'write_file', { path: '/workspace/notes.md', content: 'alpha\nbeta\ngamma\n' });
  assert.equal(r.isError, false, r.text);

  r = await callTool(client, 'edit_file', { path: '/workspace/notes.md', old_string: 'beta', new_string: 'BETA' });
  assert.equal(r.isError, false, r.text);

  r = await callTool(client, 'read_file', { path: '/workspace/notes.md', offset: 1, limit: 1 });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /BETA/);
  assert.doesNotMatch(r.text, /alpha|gamma/);

  r = await callTool(client, 'ls', { path: '/workspace' });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /notes\.md/);

  r = await callTool(client, 'glob', { pattern: '**/*.md', path: '/skills' });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /\/skills\/writing\/release-notes\/references\/style\.md/);

  r = await callTool(client, 'grep', { pattern: 'BETA', path: '/workspace' });
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /\/workspace\/notes\.md/);

  // Failures come back as tool errors a model can read, with the reason.
  r = await callTool(client, 'read_file', { path: '/workspace/missing.md' });
  assert.equal(r.isError, true);
  assert.match(r.text, /not found/i);
  r = await callTool(client, 'write_file', { path: '/skills/writing/x.md', content: 'no' });
  assert.equal(r.isError, true);
  assert.match(r.text, /read-only|permission/i);
  r = await callTool(client, 'read_file', { path: '/workspace/../../bob/x' });
  assert.equal(r.isError, true);
});

test('threads and users are isolated', async () => {
  const a = await connect('host-iso-a');
  const b = await connect('host-iso-b');
  const bob = await connect('host-iso-a', { user: 'bob' });
  let r = await callTool(a, 'write_file', { path: '/workspace/secret.md', content: 'only for thread a\n' });
  assert.equal(r.isError, false, r.text);
  r = await callTool(b, 'read_file', { path: '/workspace/secret.md' });
  assert.equal(r.isError, true, 'another thread does not see the file');
  r = await callTool(bob, 'read_file', { path: '/workspace/secret.md' });
  assert.equal(r.isError, true, 'another user does not see the file');
  assert.deepEqual(await listAllSkills(bob), [], "bob has no library and does not see alice's");
});

test('an upload with an ordinary S3 tool reaches the host as a list change', async () => {
  let notified;
  const changed = new Promise((resolve) => (notified = resolve));
  const client = await connect('host-watch', { onListChanged: () => notified() });
  const before = await listAllSkills(client);
  assert.ok(!before.some((s) => s.frontmatter.name === 'haiku'));

  const dir = tempDir('mcp-host-');
  writeFileSync(path.join(dir, 'SKILL.md'), '---\nname: haiku\ndescription: Write a haiku about the change.\n---\nThree lines: 5, 7, 5.\n');
  // A binary asset: served as a blob, digest over the raw bytes.
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80, 0x01]);
  writeFileSync(path.join(dir, 'logo.png'), png);
  const s3 = (src, key) =>
    execFileSync('aws', ['--endpoint-url', env.s3_endpoint, 's3', 'cp', '--only-show-errors', src, `s3://${env.bucket}/${key}`], {
      env: {
        ...process.env,
        AWS_ACCESS_KEY_ID: env.access_key,
        AWS_SECRET_ACCESS_KEY: env.secret_key,
        AWS_DEFAULT_REGION: env.region,
      },
    });
  s3(path.join(dir, 'logo.png'), `${env.user}/skills/writing/haiku/assets/logo.png`);
  s3(path.join(dir, 'SKILL.md'), `${env.user}/skills/writing/haiku/SKILL.md`);

  // The server notices on its own (index refresh and watch interval are 1s).
  await within(changed, 60_000, 'notifications/resources/list_changed after the upload');
  const skills = await listAllSkills(client);
  const haiku = skills.find((s) => s.frontmatter.name === 'haiku');
  assert.ok(haiku, 'the new skill is listed after the notification');
  assert.equal(haiku.uri, 'skill://writing/haiku/SKILL.md');
  const logo = haiku.resources.find((r) => r.uri === 'skill://writing/haiku/assets/logo.png');
  assert.ok(logo, 'the asset is listed');
  const { content, bytes } = await readVerified(client, logo);
  assert.ok(content.blob !== undefined, 'binary files are blobs');
  assert.deepEqual(bytes, png);
});
