// extractSkill unpacks an ExportSkill archive (tar.gz of "<skill>/<file>").
// The archive is untrusted input: every entry is checked before anything is
// written — only files and directories, relative names without "..", one
// top-level folder — and every path is resolved inside the destination.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";

import { SkillsvcError } from "./client.js";
import { Code } from "@connectrpc/connect";

interface Entry {
  name: string;
  dir: boolean;
  data: Uint8Array;
}

function refuse(msg: string): never {
  throw new SkillsvcError(Code.InvalidArgument, msg);
}

function field(block: Uint8Array, start: number, len: number): string {
  const raw = block.subarray(start, start + len);
  const end = raw.indexOf(0);
  return Buffer.from(end < 0 ? raw : raw.subarray(0, end)).toString("utf8");
}

function octal(block: Uint8Array, start: number, len: number): number {
  const s = field(block, start, len).trim();
  return s ? parseInt(s, 8) : 0;
}

// parse reads ustar and PAX (path) headers; any other entry type is refused.
export function parseTar(tar: Uint8Array): Entry[] {
  const entries: Entry[] = [];
  let pax: Record<string, string> = {};
  for (let off = 0; off + 512 <= tar.length; ) {
    const h = tar.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const size = octal(h, 124, 12);
    const type = String.fromCharCode(h[156] || 48);
    const prefix = field(h, 345, 155);
    let name = prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100);
    const data = tar.subarray(off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
    if (type === "x") {
      pax = {};
      for (const rec of Buffer.from(data).toString("utf8").split("\n")) {
        const m = /^\d+ ([^=]+)=(.*)$/.exec(rec);
        if (m) pax[m[1]] = m[2];
      }
      continue;
    }
    if (type === "g") continue;
    if (pax.path) name = pax.path;
    pax = {};
    if (type !== "0" && type !== "5") refuse(`archive entry ${JSON.stringify(name)} is not a file or directory`);
    entries.push({ name, dir: type === "5", data });
  }
  return entries;
}

export async function extractSkill(archive: Uint8Array, dir: string): Promise<string> {
  const entries = parseTar(gunzipSync(archive));
  const dest = path.resolve(dir);
  const tops = new Set<string>();
  const targets = entries.map((e) => {
    const parts = e.name.split("/").filter((p) => p !== "" && p !== ".");
    if (e.name.startsWith("/") || parts.includes("..") || parts.length === 0) {
      refuse(`archive entry ${JSON.stringify(e.name)} leaves the destination`);
    }
    const target = path.resolve(dest, ...parts);
    if (!target.startsWith(dest + path.sep)) refuse(`archive entry ${JSON.stringify(e.name)} leaves the destination`);
    tops.add(parts[0]);
    return target;
  });
  if (tops.size !== 1) refuse(`archive holds ${tops.size} top-level folders, want one skill folder`);
  for (const [i, e] of entries.entries()) {
    if (e.dir) {
      await mkdir(targets[i], { recursive: true });
    } else {
      await mkdir(path.dirname(targets[i]), { recursive: true });
      await writeFile(targets[i], e.data, { mode: 0o644 });
    }
  }
  return path.join(dest, [...tops][0]);
}
