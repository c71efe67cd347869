// skillsvc skills for the Vercel AI SDK (ai 7.0.173), through the two skill
// interfaces published for it:
//
// - skillsvcSkillTool: the skills toolkit of bash-tool (Vercel's bash tool
//   for AI SDK agents, 1.3.19), whose experimental_createSkillTool reads a
//   local folder of skills (one folder per skill), gives the model a `skill`
//   tool listing each skill's name and description, and returns the skills'
//   files for its bash sandbox. The skills are materialized from skillsvc
//   (verified, digest-cached) into that folder, each file with its mode.
//
//     const { skill, files, instructions } = await skillsvcSkillTool(client, { directory: "/tmp/skills" });
//     const { tools } = await createBashTool({ files, extraInstructions: instructions });
//     await generateText({ model, tools: { skill, ...tools }, prompt });
//
// - uploadSkillsvcSkill: the `ai` package's own uploadSkill, which sends a
//   skill's files to a provider's hosted skills API (SkillsV4, e.g. the
//   Anthropic provider's), for the provider's container to run.
//
// Neither is lazy: bash-tool discovers skills by reading every SKILL.md in
// the folder and reads every file when the toolkit is made, and uploadSkill
// uploads one whole skill; the `ai` package itself has no skill loader.
import { chmod, copyFile, mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";

import { Code } from "@connectrpc/connect";
import { uploadSkill, type UploadSkillResult } from "ai";
import type { SkillToolkit } from "bash-tool";

import type { SkillsvcClient } from "./client.js";
import { SkillsvcError } from "./errors.js";
import { materializeSkill } from "./runner.js";

/** The file that marks a folder as written by writeSkillsDirectory, which may then replace it. */
export const DIRECTORY_MARKER = ".skillsvc-skills";

export interface SkillsDirectoryOptions {
  /** Only this category's skills; "" only the flat ones; unset: all. */
  category?: string;
  /** A named skill set (scope); empty: the client identity's, if any. */
  scope?: string;
  /** materializeSkill's cache root. */
  cacheDir?: string;
}

/**
 * Writes the skills into directory, one folder per skill (<directory>/<name>/), each file with its mode (0755 for an
 * executable file, else 0644), and returns their names. The directory must be absent, empty, or one this function
 * wrote before (it is then replaced whole, so skills removed from the library go too).
 */
export async function writeSkillsDirectory(client: SkillsvcClient, directory: string, opts: SkillsDirectoryOptions = {}): Promise<string[]> {
  const root = path.resolve(directory);
  const existing = await readdir(root).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [] as string[];
    throw err;
  });
  if (existing.length && !existing.includes(DIRECTORY_MARKER)) {
    throw new SkillsvcError(Code.FailedPrecondition, `${root} is not empty and was not written by writeSkillsDirectory: give it a folder of its own`);
  }
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  await writeFile(path.join(root, DIRECTORY_MARKER), "Written by @skillsvc/client; replaced on the next write.\n");
  const names: string[] = [];
  const req = { scope: opts.scope ?? "", ...(opts.category !== undefined ? { category: opts.category } : {}) };
  for await (const s of client.iterSkills(req)) {
    const m = await materializeSkill(client, s.name, { cacheDir: opts.cacheDir });
    for (const { rel, executable } of await files(m.dir)) {
      const to = path.join(root, s.name, rel);
      await mkdir(path.dirname(to), { recursive: true });
      await copyFile(path.join(m.dir, rel), to);
      await chmod(to, executable ? 0o755 : 0o644);
    }
    names.push(s.name);
  }
  return names;
}

/** The regular files under dir, "/"-separated, sorted, with whether each is executable. */
async function files(dir: string): Promise<{ rel: string; executable: boolean }[]> {
  const out: { rel: string; executable: boolean }[] = [];
  async function visit(rel: string) {
    for (const e of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await visit(r);
      else if (e.isFile()) out.push({ rel: r, executable: ((await stat(path.join(dir, r))).mode & 0o111) !== 0 });
    }
  }
  await visit("");
  return out.sort((a, b) => (a.rel < b.rel ? -1 : 1));
}

export interface SkillToolOptions extends SkillsDirectoryOptions {
  /** The local folder the skills are written to (see writeSkillsDirectory). */
  directory: string;
  /** Where bash-tool places the skills in its sandbox (its `destination`, default "skills"). */
  destination?: string;
}

/**
 * bash-tool's skill toolkit (experimental_createSkillTool: the `skill` tool, the skills, their files for
 * createBashTool, and instructions) over the library's skills, written to opts.directory first.
 */
export async function skillsvcSkillTool(client: SkillsvcClient, opts: SkillToolOptions): Promise<SkillToolkit> {
  await writeSkillsDirectory(client, opts.directory, opts);
  // Imported here, so uploadSkillsvcSkill works without bash-tool installed.
  const { experimental_createSkillTool } = await import("bash-tool");
  return experimental_createSkillTool({ skillsDirectory: opts.directory, ...(opts.destination !== undefined ? { destination: opts.destination } : {}) });
}

export interface UploadSkillOptions {
  /** The provider's skills API (SkillsV4), or the provider itself (`uploadSkill`'s api). */
  api: Parameters<typeof uploadSkill>[0]["api"];
  /** Default: the skill's name. */
  displayTitle?: string;
  providerOptions?: Parameters<typeof uploadSkill>[0]["providerOptions"];
  /** materializeSkill's cache root. */
  cacheDir?: string;
}

/**
 * Uploads one skill's files (materialized and verified first) to a provider's skills API with the `ai` package's
 * uploadSkill. SkillsV4 files carry a path and bytes, no mode: the provider decides what runs.
 */
export async function uploadSkillsvcSkill(client: SkillsvcClient, skill: string, opts: UploadSkillOptions): Promise<UploadSkillResult> {
  const m = await materializeSkill(client, skill, { cacheDir: opts.cacheDir });
  const uploads = [];
  for (const { rel } of await files(m.dir)) uploads.push({ path: rel, data: new Uint8Array(await readFile(path.join(m.dir, rel))) });
  return uploadSkill({
    api: opts.api,
    files: uploads,
    displayTitle: opts.displayTitle ?? m.skill.name,
    ...(opts.providerOptions ? { providerOptions: opts.providerOptions } : {}),
  });
}
