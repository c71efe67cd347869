// @olaservo/ext-skills, the SEP-2640 skills extension's published client, as
// a host loading its skills at startup: it lists a generated library of
// 1,000 skills and reads every SKILL.md one after another, verified against
// its entry (digest and frontmatter), cold and then warm, against the
// binary with its default settings (per-user limits included). A refusal
// fails the test.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { listSkills, readSkill, serverSupportsSkills } from '@olaservo/ext-skills/client';

import { CATEGORIES, PER_CATEGORY, largeLibrary } from './library.mjs';
import { start } from './testenv.mjs';

const library = largeLibrary();
after(() => rmSync(library, { recursive: true, force: true }));

describe('@olaservo/ext-skills over 1,000 skills', () => {
  let env;
  let client;

  before(async () => {
    env = await start([], { library }); // the binary as it ships
    client = new Client({ name: 'skillsvc-ext-skills-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://${env.http_addr}/mcp`), {
        requestInit: { headers: { 'X-Skillsvc-User': env.user, 'X-Skillsvc-Thread': 'ext-skills-scale' } },
      }),
    );
  });

  after(async () => {
    await client?.close();
    await env?.stop();
  });

  test('listSkills() lists every skill, and readSkill() verifies every SKILL.md, cold and warm', async () => {
    assert.equal(serverSupportsSkills(client), true);
    const entries = await listSkills(client);
    const uris = new Set(entries.map((e) => e.uri));
    assert.equal(uris.size, CATEGORIES * PER_CATEGORY);
    assert.ok(uris.has('skill://category-49/skill-49-19/SKILL.md'));
    for (const pass of ['cold', 'warm']) {
      for (const entry of entries) {
        const text = await readSkill(client, entry); // throws on a digest or frontmatter mismatch
        assert.match(text, new RegExp(`^---\\nname: ${entry.frontmatter.name}\\n`), `${pass}: ${entry.uri}`);
      }
    }
  });
});
