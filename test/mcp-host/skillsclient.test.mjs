// The official TypeScript SDK's own host side of the skills extension —
// SkillsClient from @modelcontextprotocol/client/ext/skills, in strict mode
// (no skipInvalid: one invalid entry fails the whole listing) — against the
// real binary with its default settings, on the protocol revision the
// client negotiates by default (2025-11-25). SkillsClient checks every entry
// (name equals the last skill-path segment, a complete resources list that
// includes SKILL.md, digest and size shapes, files within the skill), and
// its read() checks each file's size and sha256 digest against the entry and
// re-parses SKILL.md's frontmatter to compare it with the entry's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SKILLS_EXTENSION_ID, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { parse as parseYAML } from 'yaml';

import { repoRoot, start } from './testenv.mjs';

const library = path.join(repoRoot, 'examples/skills');

let env;
let client;
let skills;

before(async () => {
  // No flags: the binary as it ships.
  env = await start();
  // No versionNegotiation option: the client's default, a plain initialize.
  client = new Client({ name: 'skillsvc-skillsclient-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://${env.http_addr}/mcp`), {
      requestInit: { headers: { 'X-Skillsvc-User': env.user, 'X-Skillsvc-Thread': 'host-skillsclient' } },
    }),
  );
  skills = new SkillsClient(client);
});

after(async () => {
  await client?.close();
  await env?.stop();
});

// Every file of the example library testenv uploads, keyed by its skill:// URI.
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

// The frontmatter as the author wrote it, parsed independently of both sides.
function frontmatterOf(skillMd) {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(skillMd);
  assert.ok(m, 'SKILL.md starts with frontmatter');
  return parseYAML(m[1]);
}

const rootOf = (skill) => skill.uri.slice(0, -'/SKILL.md'.length);

test('the client negotiated 2025-11-25 and sees the skills extension', () => {
  assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
  assert.equal(SKILLS_EXTENSION_ID, 'io.modelcontextprotocol/skills');
  assert.equal(skills.supported, true, JSON.stringify(client.getServerCapabilities()));
});

test('strict list() accepts every entry and lists exactly the example library', async () => {
  const listing = await skills.list();
  assert.deepEqual(listing.invalid, []);
  assert.equal(listing.nextCursor, undefined, 'list() walked every page');

  const files = libraryFiles();
  assert.deepEqual(
    listing.skills.map((s) => s.uri).sort(),
    [...files.keys()].filter((u) => u.endsWith('/SKILL.md')).sort(),
  );

  const listed = new Map();
  for (const skill of listing.skills) {
    assert.equal(skill.uri.split('/').at(-2), skill.frontmatter.name, skill.uri);
    assert.ok(Array.isArray(skill.resources), `${skill.uri}: resources is a list, not "dynamic"`);
    assert.ok(skill.resources.some((r) => r.uri === skill.uri), `${skill.uri} lists its SKILL.md`);
    assert.deepEqual(skill.frontmatter, frontmatterOf(files.get(skill.uri).toString()), skill.uri);
    for (const r of skill.resources) {
      assert.ok(r.uri.startsWith(rootOf(skill) + '/'), `${r.uri} lies within ${skill.uri}`);
      assert.ok(!listed.has(r.uri), `${r.uri} is listed once`);
      listed.set(r.uri, r);
    }
  }
  // Every file of every skill, and nothing else.
  assert.deepEqual([...listed.keys()].sort(), [...files.keys()].sort());
});

test('read() verifies every file of every listed skill: size, digest and SKILL.md frontmatter', async () => {
  const { skills: entries } = await skills.list();
  const files = libraryFiles();
  let read = 0;
  for (const skill of entries) {
    // The skill's own SKILL.md, the default ref: size, digest and the
    // frontmatter re-parsed by the client and compared with the entry.
    const manifest = await skills.read(skill);
    assert.equal(manifest.uri, skill.uri);
    assert.equal(manifest.verified, true, skill.uri);
    assert.deepEqual(manifest.frontmatter, skill.frontmatter, skill.uri);
    assert.deepEqual(Buffer.from(manifest.bytes), files.get(skill.uri), skill.uri);
    assert.equal(manifest.mimeType, 'text/markdown', skill.uri);
    assert.ok(manifest.body?.length > 0, `${skill.uri} has a body`);

    // Every listed file, by its path relative to the skill's root, as a
    // host resolves what SKILL.md refers to.
    for (const r of skill.resources) {
      const ref = r.uri.slice(rootOf(skill).length + 1);
      const file = await skills.read(skill, ref);
      assert.equal(file.uri, r.uri);
      assert.equal(file.verified, true, r.uri);
      assert.equal(file.bytes.byteLength, r.size, r.uri);
      assert.deepEqual(Buffer.from(file.bytes), files.get(r.uri), r.uri);
      if (r.uri === skill.uri) assert.deepEqual(file.frontmatter, skill.frontmatter, r.uri);
      read++;
    }
  }
  assert.equal(read, files.size, 'every file of the library was read and verified');
});

test('get() returns each listed skill, the same entry as the listing', async () => {
  const { skills: entries } = await skills.list();
  assert.ok(entries.length > 0);
  for (const entry of entries) {
    const { skill } = await skills.get(entry.uri);
    assert.deepEqual(skill, entry, entry.uri);
    // The entry get() returned is as good as the listed one for reads.
    const manifest = await skills.read(skill);
    assert.equal(manifest.verified, true, entry.uri);
  }
});
