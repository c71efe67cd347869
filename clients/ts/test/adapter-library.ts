// The categorized library the framework adapters' tests load from: three
// categories, four skills, one with scripts/ holding an executable file.
import { readdir, stat } from "node:fs/promises";
import path from "node:path";

import type { SkillsvcClient } from "@skillsvc/client";

// folder -> files; a file's mode is what skillsvc serves it with.
export const LIBRARY: Record<string, Record<string, { text: string; mode: number }>> = {
  "docs/pdf-forms": {
    "SKILL.md": { text: "---\nname: pdf-forms\ndescription: Fill in PDF forms from a JSON answer sheet.\n---\nRun scripts/fill.sh FORM.\n", mode: 0o644 },
    "scripts/fill.sh": { text: '#!/bin/sh\necho "filled $1"\n', mode: 0o755 },
    "references/fields.md": { text: "# Fields\nname, date\n", mode: 0o644 },
  },
  "docs/release-notes": {
    "SKILL.md": { text: "---\nname: release-notes\ndescription: Write release notes from a list of merged changes.\n---\nGroup by area.\n", mode: 0o644 },
  },
  "data/csv-clean": {
    "SKILL.md": { text: "---\nname: csv-clean\ndescription: Clean a CSV file by trimming cells and dropping empty rows.\n---\nTrim, then drop.\n", mode: 0o644 },
  },
  "writing/tone": {
    "SKILL.md": { text: "---\nname: tone\ndescription: Rewrite text in a friendly, plain tone.\n---\nShort sentences.\n", mode: 0o644 },
  },
};
/** name -> description. */
export const DESCRIPTIONS: Record<string, string> = Object.fromEntries(
  Object.values(LIBRARY).map((files) => {
    const md = files["SKILL.md"].text;
    return [md.match(/^name: (.*)$/m)![1], md.match(/^description: (.*)$/m)![1]];
  }),
);

/** Puts LIBRARY in user's library (admin: a client with no identity). */
export async function putLibrary(admin: SkillsvcClient, user: string): Promise<void> {
  for (const [folder, files] of Object.entries(LIBRARY)) {
    for (const [rel, f] of Object.entries(files)) await admin.putLibraryFile({ path: `${folder}/${rel}`, data: Buffer.from(f.text), user });
  }
  await admin.dropSkillIndex({ user });
}

/** The files under dir, as relative path -> mode (permission bits). */
export async function tree(dir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  async function visit(rel: string) {
    for (const e of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await visit(r);
      else out[r] = (await stat(path.join(dir, r))).mode & 0o777;
    }
  }
  await visit("");
  return out;
}

