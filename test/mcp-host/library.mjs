// A generated library of 1,000 skills (50 categories of 20), for the
// suites that read a large library as hosts do.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const CATEGORIES = 50;
export const PER_CATEGORY = 20;

/** Writes the library to a new temporary folder and returns its path. */
export function largeLibrary() {
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
