// The official SDK's strict SkillsClient over a generated library of 1,000
// skills, against the binary with its default settings (per-user limits
// included), on both protocol revisions: every page is accepted, every
// skill listed once, and every file read back and verified. The host reads
// every SKILL.md one after another as fast as it can, as a host loading its
// skills at startup does, first cold (the binary has just started: the
// first read indexes the library in storage) and then warm; the per-user
// limits price a read served from memory at a tenth of a storage listing
// (README, "Per-user limits"), so none is refused: a refusal fails the
// test. At a flat 100 requests a second, reads were refused after about 700.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

import { CATEGORIES, PER_CATEGORY, largeLibrary } from './library.mjs';
import { start } from './testenv.mjs';

const library = largeLibrary();
after(() => rmSync(library, { recursive: true, force: true }));

for (const [version, versionNegotiation] of [
  ['2025-11-25', undefined],
  ['2026-07-28', { mode: 'auto' }],
]) {
  describe(`1,000 skills on ${version}`, () => {
    let env;
    let client;
    let skills;

    before(async () => {
      env = await start([], { library }); // the binary as it ships
      client = new Client({ name: 'skillsvc-scale-test', version: '1.0.0' }, { versionNegotiation });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://${env.http_addr}/mcp`), {
          requestInit: { headers: { 'X-Skillsvc-User': env.user, 'X-Skillsvc-Thread': 'host-scale' } },
        }),
      );
      assert.equal(client.getNegotiatedProtocolVersion(), version);
      skills = new SkillsClient(client);
    });

    after(async () => {
      await client?.close();
      await env?.stop();
    });

    test('strict list() accepts every page, and read() verifies every skill', async () => {
      const listing = await skills.list();
      assert.deepEqual(listing.invalid, []);
      const uris = listing.skills.map((s) => s.uri);
      assert.equal(new Set(uris).size, CATEGORIES * PER_CATEGORY);
      for (let c = 0; c < CATEGORIES; c++) {
        for (let s = 0; s < PER_CATEGORY; s++) {
          assert.ok(uris.includes(`skill://category-${c}/skill-${c}-${s}/SKILL.md`), `skill-${c}-${s} is listed`);
        }
      }
      for (const pass of ['cold', 'warm']) {
        for (const skill of listing.skills) {
          const manifest = await skills.read(skill);
          assert.equal(manifest.verified, true, `${pass}: ${skill.uri}`);
          assert.deepEqual(manifest.frontmatter, skill.frontmatter, `${pass}: ${skill.uri}`);
        }
      }
    });
  });
}
