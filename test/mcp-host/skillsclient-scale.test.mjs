// The official SDK's strict SkillsClient over a generated library of 1,000
// skills, against the binary with its default settings (per-user limits
// included), on both protocol revisions: every page is accepted, every
// skill listed once, and every file read back and verified. The host paces
// itself within the default per-user rate (100 requests a second), as a
// host sharing a user's quota would, and a refusal fails the test.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

import { start } from './testenv.mjs';

const CATEGORIES = 50;
const PER_CATEGORY = 20;

function largeLibrary() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skillsvc-1000-'));
  for (let c = 0; c < CATEGORIES; c++) {
    for (let s = 0; s < PER_CATEGORY; s++) {
      const name = `skill-${c}-${s}`;
      const folder = path.join(dir, `category-${c}`, name);
      mkdirSync(folder, { recursive: true });
      writeFileSync(
        path.join(folder, 'SKILL.md'),
        `---\nname: ${name}\ndescription: Generated skill ${s} of category ${c}, for listing at scale.\nversion: 1.${s}\n---\n# ${name}\n\nDo task ${s}.\n`,
      );
    }
  }
  return dir;
}

// pace spaces calls at most perSecond a second.
function pacer(perSecond) {
  let next = 0;
  return async () => {
    const now = performance.now();
    next = Math.max(next, now);
    const wait = next - now;
    next += 1000 / perSecond;
    if (wait > 0) await delay(wait);
  };
}

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
    const pace = pacer(80);

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
      for (const skill of listing.skills) {
        await pace();
        const manifest = await skills.read(skill);
        assert.equal(manifest.verified, true, skill.uri);
        assert.deepEqual(manifest.frontmatter, skill.frontmatter, skill.uri);
      }
    });
  });
}
