// Skill sets materialized by reference: materializeSkills. A set is the
// skills a listing selects (a scope, a category, a layer, names), each
// materialized through materializeSkill (verified against its manifest,
// cached by its manifest digest, so shared with single-skill
// materializations), gathered into one directory with a folder per skill:
// <cache>/sets/<hex of the set digest>/. The set digest covers the layout and
// the sorted (folder, manifest digest) pairs, so a second thread on the same
// library state finds the directory and copies nothing, and a changed library
// names a new one (fetching only the skills that changed).
//
// The set's files are hard links into the per-skill cache, or copies where
// the filesystem refuses a link. Not symlinks: a host reading the folder and
// a bubblewrap bind mount must see real files, and a link to an absolute
// cache path dangles once the set is mounted elsewhere; a hard link also
// outlives a per-skill folder removed and fetched again. The files are
// read-only, as in the per-skill cache (a hard link shares the inode, so its
// mode). The Python client's materialize_skills is the same contract
// (docs/agents/skill-folders.md): the same directory for the same set.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, copyFile, link, mkdir, mkdtemp, rename, stat } from "node:fs/promises";
import path from "node:path";

import { Code } from "@connectrpc/connect";

import type { Call, SkillsvcClient } from "./client.js";
import { SkillsvcError } from "./errors.js";
import { SkillView, type SkillSummary } from "./gen/skillsvc/v1/skills_pb.js";
import { ManifestMismatchError, materializeSkill, removeTree, sizesMatch, skillCacheDir, type MaterializedSkill } from "./runner.js";

/** Skills fetched at once when a set is built. */
export const SET_PARALLELISM = 4;
/** The most a set may hold (the sum of its skills' manifest bytes) unless maxBytes says otherwise. */
export const DEFAULT_SET_MAX_BYTES = 256 << 20;
// What the set digest hashes first: a new contract gets a new tag.
const DIGEST_TAG = "skillsvc-set/1\n";
// A link's failures that mean "copy instead": another filesystem, one
// without hard links, a file we may not link (protected_hardlinks).
const NO_LINK = new Set(["EXDEV", "EPERM", "EMLINK", "EACCES", "ENOTSUP", "EOPNOTSUPP"]);

export type SetLayout = "flat" | "categories";

export interface MaterializeSkillsOptions extends Call {
  /** A skill set: the calls are made with it as the identity's scope, so every skill listed can be fetched. */
  scope?: string;
  /** As listSkills takes it: unset lists all, "" the skills outside any category. */
  category?: string;
  /** "user", "team" (any team's), "team:<id>" or "shared". */
  layer?: string;
  /** Only these skills (names or library paths), each of which must be listed. */
  names?: string[];
  /** "flat" (the default): <folder name>/; "categories": <category>/<name>/. */
  layout?: SetLayout;
  /** The cache root, as materializeSkill's; the set is under <root>/sets/. */
  cacheDir?: string;
  /** More than this in all (manifest bytes) is refused before anything is fetched; default 256 MiB. */
  maxBytes?: number;
}

export interface SetMember {
  name: string;
  /** The skill's folder in the set directory. */
  dir: string;
  /** "sha256:<hex>" of its manifest. */
  digest: string;
  /** dir relative to the set directory: "pdf", or "docs/pdf" in the categories layout. */
  folder: string;
  /** Its folder in the library, e.g. "/skills/docs/pdf". */
  skillPath: string;
  layer: string;
}

export interface MaterializedSet {
  /** <cache root>/sets/<hex of digest>. */
  dir: string;
  /** "sha256:<hex>" of the set: setDigest(layout, its (folder, manifest digest) pairs). */
  digest: string;
  layout: SetLayout;
  /** By folder. */
  skills: SetMember[];
  /** Selected skills over the manifest limits, whose files cannot be verified (library paths). */
  skipped: string[];
  libraryDigest: string;
  /** False when the directory was there already. */
  built: boolean;
  /** Skills this call fetched with ExportSkill (0 when every one was cached). */
  exported: number;
}

/** Two selected skills would share a folder of the set (the same flat folder name, or one inside the other). */
export class FolderCollisionError extends SkillsvcError {
  constructor(message: string) {
    super(Code.FailedPrecondition, message);
    this.name = "FolderCollisionError";
  }
}

const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** "sha256:<hex>" of a set: the tag, the layout, then each pair by folder in UTF-8 byte order as `folder NUL digest LF`. */
export function setDigest(layout: string, pairs: [string, string][]): string {
  const h = createHash("sha256").update(`${DIGEST_TAG}layout=${layout}\n`);
  for (const [folder, digest] of [...pairs].sort((a, b) => byUtf8(a[0], b[0]))) h.update(`${folder}\0${digest}\n`);
  return `sha256:${h.digest("hex")}`;
}

/**
 * The skills the listing selects, one folder each in a cached set directory (see the top of skillset.ts): listed
 * page by page in the full view, each materialized and verified as materializeSkill does, SET_PARALLELISM at a time,
 * then linked into <cache>/sets/<digest>/ by an atomic rename. A set already there (its files checked cheaply, as
 * the per-skill cache's) is returned without fetching anything.
 */
export async function materializeSkills(client: SkillsvcClient, opts: MaterializeSkillsOptions = {}): Promise<MaterializedSet> {
  const { scope = "", category, layer = "", names, layout = "flat", cacheDir, maxBytes = DEFAULT_SET_MAX_BYTES, ...call } = opts;
  if (layout !== "flat" && layout !== "categories") throw new SkillsvcError(Code.InvalidArgument, `layout ${JSON.stringify(layout)}: want flat or categories`);
  if (!["", "user", "team", "shared"].includes(layer) && !/^team:.+$/.test(layer)) {
    throw new SkillsvcError(Code.InvalidArgument, `layer ${JSON.stringify(layer)}: want user, team, team:<id> or shared`);
  }
  if (scope) client = client.withIdentity({ scope });
  const { picked, skipped, libraryDigest } = await select(client, { scope, category, layer, names, maxBytes }, call);
  const folders = folderMap(picked, layout);
  const want = new Map<string, { size: bigint; mode: number }>();
  for (const [folder, s] of folders) for (const [rel, f] of manifestOf(s)) want.set(`${folder}/${rel}`, f);
  const digest = setDigest(layout, [...folders].map(([folder, s]) => [folder, s.manifestDigest]));
  const root = path.resolve(cacheDir ?? skillCacheDir());
  const sets = path.join(root, "sets");
  const dir = path.join(sets, digest.slice("sha256:".length));
  const skills = [...folders]
    .sort((a, b) => byUtf8(a[0], b[0]))
    .map(([folder, s]) => ({ name: s.name, dir: path.join(dir, folder), digest: s.manifestDigest, folder, skillPath: s.path, layer: s.layer }));
  const done = (built: boolean, exported: number): MaterializedSet => ({ dir, digest, layout, skills, skipped, libraryDigest, built, exported });

  if (existsSync(dir)) {
    if (await sizesMatch(dir, want)) return done(false, 0);
    await removeTree(dir);
  }
  const mats = await materializeAll(client, folders, { ...call, cacheDir: root });
  await mkdir(sets, { recursive: true });
  const tmp = await mkdtemp(path.join(sets, ".build-"));
  try {
    for (const [folder, s] of folders) {
      for (const rel of manifestOf(s).keys()) {
        const dst = path.join(tmp, folder, rel);
        await mkdir(path.dirname(dst), { recursive: true });
        await linkOrCopy(path.join(mats.get(folder)!.dir, rel), dst);
      }
    }
    // The per-skill folders were checked as they were materialized; one
    // replaced meanwhile (found damaged by another thread) is caught here.
    if (!(await sizesMatch(tmp, want))) {
      throw new SkillsvcError(Code.Aborted, `the skills of set ${digest} changed in the cache while it was built; try again`);
    }
    try {
      await rename(tmp, dir);
    } catch (err) {
      if (!existsSync(dir)) throw err; // not another thread's copy that won
    }
  } finally {
    await removeTree(tmp);
  }
  return done(true, [...mats.values()].filter((m) => m.fetched).length);
}

interface Selection {
  scope: string;
  category?: string;
  layer: string;
  names?: string[];
  maxBytes: number;
}

// select lists every page (full view: the manifests) and filters it; the
// total is checked as the pages come, so a large library is refused
// without being listed whole.
async function select(client: SkillsvcClient, sel: Selection, call: Call) {
  const wanted = sel.names ? new Set(sel.names) : undefined;
  const found = new Set<string>();
  const picked: SkillSummary[] = [];
  const skipped: string[] = [];
  let total = 0n;
  let libraryDigest = "";
  let pageToken = "";
  do {
    const page = await client.listSkills(
      { scope: sel.scope, pageToken, view: SkillView.FULL, ...(sel.category !== undefined ? { category: sel.category } : {}) },
      call,
    );
    libraryDigest = page.libraryDigest || libraryDigest;
    for (const s of page.skills) {
      if (!layerMatches(sel.layer, s.layer)) continue;
      if (wanted) {
        const hits = [s.name, s.path].filter((n) => wanted.has(n));
        if (!hits.length) continue;
        for (const h of hits) found.add(h);
      }
      const m = s.manifest;
      if (m?.overLimits || !s.manifestDigest) {
        if (wanted) {
          throw new SkillsvcError(
            Code.FailedPrecondition,
            `skill ${JSON.stringify(s.name)} is over the manifest limits (${m?.fileCount ?? "?"} files, ${m?.totalBytes ?? "?"} bytes; at most 512 files and 16 MiB): its files cannot be verified`,
          );
        }
        skipped.push(s.path);
        continue;
      }
      total += m?.totalBytes ?? 0n;
      if (total > BigInt(sel.maxBytes)) {
        throw new SkillsvcError(
          Code.ResourceExhausted,
          `the selected skills hold more than maxBytes (${sel.maxBytes} bytes): nothing was fetched; narrow the selection (scope, category, layer, names) or raise maxBytes`,
        );
      }
      picked.push(s);
    }
    pageToken = page.nextPageToken;
  } while (pageToken);
  const missing = wanted ? [...wanted].filter((n) => !found.has(n)).sort() : [];
  if (missing.length) throw new SkillsvcError(Code.NotFound, `not listed (absent, disabled, invalid or out of the selection): ${JSON.stringify(missing.slice(0, 10))}`);
  return { picked, skipped, libraryDigest };
}

function layerMatches(want: string, layer: string): boolean {
  if (want === "team") return layer.startsWith("team:");
  return want === "" || want === layer;
}

// folderMap places each skill in the layout; two on one folder, or one
// inside another's, is FolderCollisionError naming both.
function folderMap(picked: SkillSummary[], layout: SetLayout): Map<string, SkillSummary> {
  const by = new Map<string, SkillSummary>();
  const problems: string[] = [];
  for (const s of picked) {
    const rel = s.path.startsWith("/skills/") ? s.path.slice("/skills/".length) : "";
    const parts = rel.split("/");
    if (!rel || parts.length > 2 || parts.some((p) => !p || p.startsWith(".") || /[\\\0\n\r]/.test(p))) {
      throw new SkillsvcError(Code.DataLoss, `skill ${JSON.stringify(s.name)} has a path no set can hold: ${JSON.stringify(s.path)}`);
    }
    const folder = layout === "flat" ? parts[parts.length - 1] : rel;
    const other = by.get(folder);
    if (other) {
      problems.push(`${other.path} and ${s.path} would both be ${folder}/ (use layout "categories", or narrow the selection)`);
      continue;
    }
    by.set(folder, s);
  }
  for (const [folder, s] of by) {
    const parent = folder.includes("/") ? folder.slice(0, folder.lastIndexOf("/")) : "";
    const outer = parent ? by.get(parent) : undefined;
    if (outer) problems.push(`${s.path} would be inside ${outer.path}'s folder ${parent}/`);
  }
  if (problems.length) throw new FolderCollisionError(`no set was built: ${problems.sort().join("; ")}`);
  return by;
}

function manifestOf(s: SkillSummary): Map<string, { size: bigint; sha256: string; mode: number }> {
  const prefix = s.path.replace(/\/+$/, "") + "/";
  const files = s.manifest?.files ?? [];
  const out = new Map(files.filter((f) => f.path.startsWith(prefix)).map((f) => [f.path.slice(prefix.length), f]));
  if (out.size !== files.length) throw new ManifestMismatchError(`the manifest of ${JSON.stringify(s.name)} lists files outside its folder ${s.path}`);
  return out;
}

// materializeAll materializes each skill through the single-skill path,
// SET_PARALLELISM at a time; after the first failure nothing more starts,
// and it is thrown once the running ones end.
async function materializeAll(client: SkillsvcClient, folders: Map<string, SkillSummary>, opts: Call & { cacheDir: string }) {
  const out = new Map<string, MaterializedSkill>();
  const queue = [...folders];
  let failed: unknown;
  const worker = async () => {
    for (let next = queue.shift(); next && failed === undefined; next = queue.shift()) {
      const [folder, s] = next;
      try {
        const m = await materializeSkill(client, s.path, opts);
        if (m.digest !== s.manifestDigest) {
          throw new SkillsvcError(Code.Aborted, `skill ${JSON.stringify(s.name)} changed between the listing and its fetch; try again`);
        }
        out.set(folder, m);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SET_PARALLELISM, folders.size) }, worker));
  if (failed !== undefined) throw failed;
  return out;
}

async function linkOrCopy(src: string, dst: string) {
  try {
    await link(src, dst);
  } catch (err) {
    if (!NO_LINK.has((err as NodeJS.ErrnoException).code ?? "")) throw err;
    await copyFile(src, dst);
    await chmod(dst, (await stat(src)).mode & 0o555);
  }
}
