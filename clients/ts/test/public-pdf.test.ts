// A public document skill's script through the client: the pdf skill of
// anthropics/skills, from the PyPI package test/selection/registry.json pins
// (downloaded here and cached where the Go and Python tests and the
// selection benchmark cache it: its licence forbids committing it), uploaded
// to a user's library, runs its form-field extractor with runSkillScript on
// a fillable PDF the test makes, with the checkout's venv python (it has
// pypdf: make pyenv). fields.json appears in the thread's /workspace with
// the form's fields.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { gunzipSync } from "node:zlib";

import { SkillsvcClient, probeBwrap } from "@skillsvc/client";
import { repoRoot, tempDir, testenv, type Env } from "./testenv.js";

const required = process.env.SKILLSVC_REQUIRE_SERVERS === "1";

interface Source {
  id: string;
  url: string;
  sha256: string;
  size: number;
}

/** Where internal/selection/corpus keeps archives: $SKILLSVC_SELECTION_CACHE, else skillsvc/selection-corpus in the user's cache directory. */
function cacheDir(): string {
  if (process.env.SKILLSVC_SELECTION_CACHE) return process.env.SKILLSVC_SELECTION_CACHE;
  return path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), ".cache"), "skillsvc", "selection-corpus");
}

function pinned(data: Uint8Array, s: Source): boolean {
  return data.length === s.size && createHash("sha256").update(data).digest("hex") === s.sha256;
}

/** The source's archive from the cache, downloaded and verified against its pinned sha256 and size when it is not there. */
async function fetchSource(s: Source): Promise<Uint8Array> {
  const dir = cacheDir();
  const file = path.join(dir, `${s.sha256}.tgz`);
  try {
    const data = await readFile(file);
    if (pinned(data, s)) return data;
  } catch {
    // not cached yet
  }
  const resp = await fetch(s.url, { signal: AbortSignal.timeout(600_000) });
  if (!resp.ok) throw new Error(`${s.url}: HTTP ${resp.status}`);
  const data = new Uint8Array(await resp.arrayBuffer());
  if (!pinned(data, s)) throw new Error(`${s.url} does not match its pinned sha256 ${s.sha256} and size ${s.size}`);
  await mkdir(dir, { recursive: true });
  const tmp = await mkdtemp(path.join(dir, ".download-"));
  await writeFile(path.join(tmp, "archive"), data);
  await rename(path.join(tmp, "archive"), file);
  await rm(tmp, { recursive: true, force: true });
  return data;
}

/** The regular files of a tar (ustar names, pax "path" records), by name, with their modes. */
function tarFiles(tar: Uint8Array): Map<string, { data: Uint8Array; mode: number }> {
  const files = new Map<string, { data: Uint8Array; mode: number }>();
  const field = (h: Uint8Array, start: number, len: number) => Buffer.from(h.subarray(start, start + len)).toString("utf8").replace(/\0.*$/s, "");
  let paxPath: string | undefined;
  for (let pos = 0; pos + 512 <= tar.length; ) {
    const h = tar.subarray(pos, pos + 512);
    if (h.every((b) => b === 0)) break;
    const size = parseInt(field(h, 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(h[156]);
    const body = tar.subarray(pos + 512, pos + 512 + size);
    const prefix = field(h, 345, 155);
    const name = paxPath ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
    if (type === "x") {
      paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(Buffer.from(body).toString("utf8"))?.[1];
    } else {
      if (type === "0" || type === "\0") files.set(name, { data: body, mode: parseInt(field(h, 100, 8).trim() || "0", 8) });
      paxPath = undefined;
    }
    pos += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** Extracts the target name's whole folder from its pinned package into dest/<folder>: regular files only, none outside the folder. */
async function publicSkill(name: string, dest: string): Promise<Map<string, Uint8Array>> {
  const list = JSON.parse(readFileSync(path.join(repoRoot, "test/selection/registry.json"), "utf8"));
  const target = list.targets.find((t: { name: string }) => t.name === name);
  const source: Source = [...(list.target_sources ?? []), ...list.sources].find((s: Source) => s.id === target.source);
  assert.match(source.url, /\.(tgz|tar\.gz)$/);
  const folder = path.posix.dirname(target.path) + "/";
  const out = new Map<string, Uint8Array>();
  for (const [entry, f] of tarFiles(gunzipSync(await fetchSource(source)))) {
    const rel = entry.replace(/^\.\//, "");
    if (!rel.startsWith(folder)) continue;
    const sub = rel.slice(folder.length);
    if (!sub || sub.split("/").includes("..")) continue;
    const p = path.join(dest, path.posix.basename(folder), sub);
    await mkdir(path.dirname(p), { recursive: true });
    await writeFile(p, f.data);
    await chmod(p, f.mode & 0o111 ? 0o755 : 0o644);
    out.set(sub, f.data);
  }
  assert.ok(out.has("SKILL.md"), `no ${folder}SKILL.md in ${source.url}`);
  return out;
}

/**
 * A one-page PDF with an AcroForm of two fields, a text field "full_name"
 * and a checkbox "agree" (states /Yes and /Off), written object by object
 * with the cross-reference table its offsets need (the Go and Python tests
 * make the same file).
 */
function fillablePDF(): Uint8Array {
  const objs = [
    "<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R 5 0 R] >> >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Annots [4 0 R 5 0 R] >>",
    "<< /Type /Annot /Subtype /Widget /FT /Tx /T (full_name) /Rect [50 120 250 140] /P 3 0 R >>",
    "<< /Type /Annot /Subtype /Widget /FT /Btn /T (agree) /Rect [50 60 70 80] /P 3 0 R /V /Off /AS /Off /AP << /N << /Yes 6 0 R /Off 6 0 R >> >> >>",
    "<< /Type /XObject /Subtype /Form /BBox [0 0 20 20] /Length 0 >>\nstream\n\nendstream",
  ];
  const parts: Buffer[] = [Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "latin1")];
  let len = parts[0].length;
  const offsets: number[] = [];
  const add = (s: string) => {
    const b = Buffer.from(s, "latin1");
    parts.push(b);
    len += b.length;
  };
  objs.forEach((o, i) => {
    offsets.push(len);
    add(`${i + 1} 0 obj\n${o}\nendobj\n`);
  });
  const xref = len;
  add(`xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`);
  for (const off of offsets) add(`${String(off).padStart(10, "0")} 00000 n \n`);
  add(`trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}

// What the extractor finds in fillablePDF().
const FIELDS = [
  { field_id: "full_name", type: "text", page: 1, rect: [50, 120, 250, 140] },
  { field_id: "agree", type: "checkbox", checked_value: "/Yes", unchecked_value: "/Off", page: 1, rect: [50, 60, 70, 80] },
];

/** A python that has pypdf: $VIRTUAL_ENV's, else the checkout's .venv (make pyenv). */
function pypdfPython(): string | undefined {
  const venvs = [process.env.VIRTUAL_ENV, path.join(repoRoot, ".venv")].filter((v): v is string => !!v);
  for (const v of venvs) {
    const py = path.join(v, "bin/python");
    try {
      if (existsSync(py)) {
        execFileSync(py, ["-c", "import pypdf"], { stdio: "ignore" });
        return py;
      }
    } catch {
      // no pypdf there
    }
  }
  return undefined;
}

let env: Env;
let user: string;
let python: string | undefined;
let unavailable: string | undefined;

before(async () => {
  python = pypdfPython();
  if (!python) {
    unavailable = `no python with pypdf in $VIRTUAL_ENV or ${repoRoot}/.venv: run make pyenv`;
    return;
  }
  let files: Map<string, Uint8Array>;
  try {
    files = await publicSkill("pdf", await tempDir("public-skill-"));
  } catch (err) {
    unavailable = `the public pdf skill cannot be fetched: ${String(err)}`;
    return;
  }
  env = await testenv();
  const admin = new SkillsvcClient({ target: env.target });
  user = `ts-pdf-${randomUUID().slice(0, 8)}`;
  for (const [rel, data] of files) await admin.putLibraryFile({ path: `docs/pdf/${rel}`, data, user });
  await admin.dropSkillIndex({ user });
});
after(async () => env?.stop());

for (const sandbox of ["none", "bwrap"] as const) {
  test(`the pdf skill's form-field extractor (${sandbox})`, async (t) => {
    if (unavailable) {
      if (required) assert.fail(`${unavailable} (SKILLSVC_REQUIRE_SERVERS=1)`);
      return t.skip(unavailable);
    }
    if (sandbox === "bwrap" && !probeBwrap()) {
      if (required) assert.fail("bubblewrap is not available (apt-get install -y bubblewrap) and SKILLSVC_REQUIRE_SERVERS=1");
      return t.skip("bubblewrap not available");
    }
    const c = new SkillsvcClient({ target: env.target }).withIdentity({ user, thread: `ts-pdf-${randomUUID().slice(0, 12)}` });
    await c.upload("/workspace/form.pdf", fillablePDF());
    const r = await c.runSkillScript("pdf", "extract_form_field_info.py", {
      args: ["form.pdf", "fields.json"],
      sandbox,
      interpreters: { ".py": python! },
      cacheDir: await tempDir("skillsvc-cache-"),
    });
    assert.deepEqual([r.exitCode, r.sandbox, r.stdout, r.written], [0, sandbox, "Wrote 2 fields to fields.json\n", ["/workspace/fields.json"]], r.stderr);
    assert.deepEqual(JSON.parse(Buffer.from(await c.download("/workspace/fields.json")).toString()), FIELDS);
  });
}
