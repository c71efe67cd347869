// The official TypeScript SDK's own host side of the skills extension —
// SkillsClient from @modelcontextprotocol/client/ext/skills, in strict mode
// (no skipInvalid: one invalid entry fails the whole listing) — against the
// real binary with its default settings, on both protocol revisions the
// server speaks: 2025-11-25 (the client's default, a plain initialize and a
// session) and 2026-07-28 (sessionless, negotiated with server/discover in
// the client's 'auto' mode). SkillsClient checks every entry
// (name equals the last skill-path segment, a complete resources list that
// includes SKILL.md, digest and size shapes, files within the skill), and
// its read() checks each file's size and sha256 digest against the entry and
// re-parses SKILL.md's frontmatter to compare it with the entry's.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SKILLS_EXTENSION_ID, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { parse as parseYAML } from 'yaml';

import { repoRoot, start } from './testenv.mjs';

// Every file of a library folder, keyed by its skill:// URI (each segment
// percent-encoded, as the server lists it), less the skills in leftOut.
function libraryFiles(library, leftOut = []) {
  const files = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const rel = path.relative(library, p).split(path.sep);
        if (!leftOut.some((dir) => rel.join('/').startsWith(dir + '/'))) {
          files.set('skill://' + rel.map(encodeURIComponent).join('/'), readFileSync(p));
        }
      }
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

// suite runs the host's checks against the binary serving library, of
// which the skills in leftOut (folders) break what hosts accept and must
// not be listed.
function suite(name, library, leftOut = []) {
  for (const [version, versionNegotiation] of [
    ['2025-11-25', undefined],
    ['2026-07-28', { mode: 'auto' }],
  ]) {
    revisionSuite(`${name} on ${version}`, library, leftOut, version, versionNegotiation);
  }
}

function revisionSuite(name, library, leftOut, version, versionNegotiation) {
  describe(name, () => {
    let env;
    let client;
    let skills;

    before(async () => {
      // No flags: the binary as it ships.
      env = await start([], { library });
      // Without versionNegotiation: the client's default, a plain initialize.
      client = new Client({ name: 'skillsvc-skillsclient-test', version: '1.0.0' }, { versionNegotiation });
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



    test(`the client negotiated ${version} and sees the skills extension`, () => {
      assert.equal(client.getNegotiatedProtocolVersion(), version);
      assert.equal(SKILLS_EXTENSION_ID, 'io.modelcontextprotocol/skills');
      assert.equal(skills.supported, true, JSON.stringify(client.getServerCapabilities()));
    });

    test('strict list() accepts every entry and lists exactly the skills hosts accept', async () => {
      const listing = await skills.list();
      assert.deepEqual(listing.invalid, []);
      assert.equal(listing.nextCursor, undefined, 'list() walked every page');

      const files = libraryFiles(library, leftOut);
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
      const files = libraryFiles(library, leftOut);
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

    test('readDirectory() walks each skill from its root to exactly the files of its entry', async () => {
      assert.equal(skills.directoryRead, true, JSON.stringify(client.getServerCapabilities()));
      const { skills: entries } = await skills.list();
      let folders = 0;
      // Every page of every folder, through the client's own schema.
      const walk = async (uri, found) => {
        const { resources } = await skills.readDirectory(uri);
        for (const child of resources) {
          const rest = child.uri.slice(uri.length + 1);
          assert.ok(child.uri.startsWith(uri + '/') && rest !== '' && !rest.includes('/'), `${child.uri} in ${uri}`);
          assert.equal(decodeURIComponent(child.uri.split('/').at(-1)), child.name, child.uri);
          assert.ok(child.mimeType, `${child.uri} has a mimeType`);
          if (child.mimeType === 'inode/directory') {
            folders++;
            await walk(child.uri, found);
          } else {
            assert.ok(!found.has(child.uri), `${child.uri} is listed once`);
            found.set(child.uri, child.size ?? 0);
          }
        }
        return found;
      };
      for (const skill of entries) {
        const found = await walk(rootOf(skill), new Map());
        assert.deepEqual(
          [...found].sort(),
          skill.resources.map((r) => [r.uri, r.size]).sort(),
          `the walk from ${rootOf(skill)} finds the entry's files and sizes`,
        );
      }
      assert.ok(folders > 0, 'some skill has a subfolder');
      // A file is not a directory.
      await assert.rejects(skills.readDirectory(entries[0].uri), (err) => err.code === -32602);
    });

    test('resources/list names the SKILL.md of exactly the listed skills, by their frontmatter', async () => {
      const { skills: entries } = await skills.list();
      const resources = [];
      let cursor;
      do {
        const page = await client.listResources(cursor ? { cursor } : undefined);
        resources.push(...page.resources);
        cursor = page.nextCursor;
      } while (cursor);
      assert.deepEqual(
        resources.map((r) => [r.uri, r.name, r.description, r.mimeType]).sort(),
        entries.map((s) => [s.uri, s.frontmatter.name, s.frontmatter.description, 'text/markdown']).sort(),
      );
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
  });
}

// A library of what hosts trip over: file names with a space, '#', '%',
// '?' and non-ASCII letters, an empty file, a binary file, a nested folder;
// and skills a strict host rejects a whole listing for, which skills/list
// leaves out (a name unlike its folder, a display name, a description over
// 1,024 characters, more than 512 files).
function awkwardLibrary() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skillsvc-awkward-'));
  const write = (rel, data) => {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), data);
  };
  const skill = (folder, name, description) =>
    write(`${folder}/SKILL.md`, `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n\nRead references/ first.\n`);
  skill('writing/spaced', 'spaced', 'Files with spaces and accents.');
  write('writing/spaced/references/my notes.md', 'spaced\n');
  write('writing/spaced/references/résumé.md', 'accented\n');
  write('writing/spaced/references/deep/nested/level.md', 'nested\n');
  write('writing/spaced/references/a#b.md', 'hash\n');
  write('writing/spaced/references/100%.md', 'percent\n');
  write('writing/spaced/references/why?.md', 'question\n');
  // An empty file, as the public docx and pptx skills' __init__.py.
  write('writing/spaced/scripts/__init__.py', '');
  skill('design/logo', 'logo', 'A skill with a binary asset.');
  write('design/logo/assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0xff, 0xfe, 1, 2, 3]));
  skill('flat-skill', 'flat-skill', 'A skill without a category.');
  // Frontmatter types a YAML parser keeps: the entry must hold them as
  // written (a number stays a number, a date stays text, every digit of a
  // large integer), since the client compares it with its own parse.
  write(
    'typed/typed-frontmatter/SKILL.md',
    '---\nname: typed-frontmatter\ndescription: Frontmatter with typed values.\nversion: 1.0\nbuild: 2\n' +
      'released: 2024-01-15\nbig: 9007199254740993\nratio: .5\nhex: 0x1F\nenabled: true\nnothing: ~\n' +
      'quoted: "1.0"\ntags: [a, 2, 3.50]\nmetadata:\n  author: someone\n  revision: "7"\n---\n# Typed\n\nBody.\n',
  );
  // Agent Skills rules the catalog only warns about, and hosts reject.
  write(
    'typed/numeric-metadata/SKILL.md',
    '---\nname: numeric-metadata\ndescription: Metadata with a number.\nmetadata:\n  revision: 7\n---\nBody.\n',
  );
  write(
    'long/compatible/SKILL.md',
    `---\nname: compatible\ndescription: A long compatibility.\ncompatibility: ${'x'.repeat(501)}\n---\nBody.\n`,
  );
  skill('test/folder-differs', 'other-name', 'Named unlike its folder.');
  skill('legal/escritura', '"Escritura de Compraventa"', 'A display name.');
  skill('long/wordy', 'wordy', 'word '.repeat(220).trim());
  skill('big/many-files', 'many-files', 'Over the file limit.');
  for (let i = 0; i < 513; i++) write(`big/many-files/assets/${String(i).padStart(3, '0')}.txt`, 'x');
  return dir;
}

suite('the example library', path.join(repoRoot, 'examples/skills'));

const awkward = awkwardLibrary();
after(() => rmSync(awkward, { recursive: true, force: true }));
suite('a library of awkward cases', awkward, ['test/folder-differs', 'legal/escritura', 'long/wordy', 'big/many-files', 'typed/numeric-metadata', 'long/compatible']);
