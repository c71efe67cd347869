// extractSkill unpacks an ExportSkill archive (tar.gz of "<skill>/<file>").
// The archive is untrusted input. It is unpacked within maxBytes, then every
// header is checked before anything is written — checksums, numeric fields,
// sizes within the archive, well-formed pax records, only files and
// directories, relative names without "..", one top-level folder — and every
// path is resolved inside the destination.
import { constants } from "node:buffer";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";

import { SkillsvcError } from "./errors.js";
import { Code } from "@connectrpc/connect";

/** The server's default --skills.max-export-bytes, which counts the tar as extractSkill does: headers, content and padding. */
export const MAX_ARCHIVE_BYTES = 256 * 2 ** 20;
/** The server's default --skills.max-objects: a skill holds no more files than its library lists. */
export const MAX_ENTRIES = 100_000;

export interface ExtractOptions {
  /** Largest unpacked archive (the tar), in bytes; MAX_ARCHIVE_BYTES by default. Larger ones are RESOURCE_EXHAUSTED. */
  maxBytes?: number;
}

const BLOCK = 512;
// Go's archive/tar refuses larger pax headers too; an export has one path.
const MAX_PAX = 2 ** 20;

// Every numeric header field, with its offset and length.
const NUMBERS = [
  ["mode", 100, 8],
  ["uid", 108, 8],
  ["gid", 116, 8],
  ["size", 124, 12],
  ["mtime", 136, 12],
  ["checksum", 148, 8],
  ["devmajor", 329, 8],
  ["devminor", 337, 8],
] as const;

const TYPES: Record<string, string> = {
  "1": "a hard link",
  "2": "a symlink",
  "3": "a character device",
  "4": "a block device",
  "6": "a FIFO",
  g: "a global pax header",
  K: "a GNU long link name",
  L: "a GNU long name",
  S: "a GNU sparse file",
};

interface Entry {
  name: string;
  dir: boolean;
  data: Uint8Array;
  mode: number;
}

function refuse(msg: string): never {
  throw new SkillsvcError(Code.InvalidArgument, msg);
}

const quote = (s: string) => JSON.stringify(s);

function text(b: Uint8Array): string {
  const end = b.indexOf(0);
  return Buffer.from(end < 0 ? b : b.subarray(0, end)).toString("utf8");
}

// number reads a numeric field: octal digits between spaces, ended by NUL or
// the field's end, or base-256 (a first byte of 0x80, or 0xff when negative),
// which may exceed 2^53: it is then only compared.
function number(h: Uint8Array, field: string, start: number, len: number, name: string): number {
  const raw = h.subarray(start, start + len);
  if (raw[0] === 0x80 || raw[0] === 0xff) {
    let n = 0n;
    for (const b of raw.subarray(1)) n = (n << 8n) | BigInt(b);
    return Number(raw[0] === 0xff ? n - (1n << BigInt(8 * (len - 1))) : n);
  }
  const s = Buffer.from(raw).toString("latin1").split("\0")[0];
  const m = /^ *([0-7]*) *$/.exec(s);
  if (!m) refuse(`archive entry ${quote(name)} has a ${field} field that is ${/^ *-/.test(s) ? "negative" : "not a number"}: ${quote(s)}`);
  return m[1] ? parseInt(m[1], 8) : 0;
}

// checksums sums the header unsigned and, as some old tars did, signed; the
// checksum field counts as spaces.
function checksums(h: Uint8Array): number[] {
  let unsigned = 8 * 0x20;
  let signed = 8 * 0x20;
  for (let i = 0; i < BLOCK; i++) {
    if (i >= 148 && i < 156) continue;
    unsigned += h[i];
    signed += h[i] > 127 ? h[i] - 256 : h[i];
  }
  return [unsigned, signed];
}

// paxRecords parses "<length> <key>=<value>\n" records, which must fill data
// exactly; lengths count bytes, so records are cut from the bytes.
function paxRecords(data: Uint8Array, name: string): Map<string, string> {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch {
    refuse(`archive has a pax header for ${quote(name)} that is not UTF-8`);
  }
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const records = new Map<string, string>();
  for (let pos = 0; pos < buf.length; ) {
    const m = /^([0-9]{1,7}) /.exec(buf.toString("latin1", pos, pos + 8));
    const n = m ? Number(m[1]) : 0;
    const ok = m !== null && n >= 5 && pos + n <= buf.length && buf[pos + n - 1] === 0x0a;
    const body = ok ? buf.subarray(pos + m[0].length, pos + n - 1) : Buffer.alloc(0);
    const eq = body.indexOf(0x3d); // "="
    if (eq < 1) refuse(`archive has a malformed pax record at byte ${pos} of the header for ${quote(name)}`);
    records.set(body.toString("utf8", 0, eq), body.toString("utf8", eq + 1));
    pos += n;
  }
  if ([...records.keys()].some((k) => k.startsWith("GNU.sparse."))) refuse(`archive entry ${quote(name)} is a GNU sparse file, not a file or directory`);
  const size = records.get("size");
  if (size !== undefined && !/^[0-9]{1,20}$/.test(size)) refuse(`archive has a pax size that is not a non-negative number: ${quote(size)}`);
  if (records.get("path")?.includes("\0")) refuse(`archive has a pax path with a NUL byte: ${quote(records.get("path")!)}`);
  return records;
}

// parseTar reads ustar headers and the pax records that extend them; it
// refuses any other entry type and any header that is corrupt or impossible.
// Every header moves on by at least one block, so the work is bounded by the
// archive's length.
export function parseTar(tar: Uint8Array): Entry[] {
  const entries: Entry[] = [];
  let pax: Map<string, string> | undefined; // records for the next entry
  for (let pos = 0; ; ) {
    if (tar.length - pos < BLOCK) refuse("archive is truncated: it ends without an end-of-archive block");
    const h = tar.subarray(pos, pos + BLOCK);
    if (h.every((b) => b === 0)) {
      if (pax) refuse("archive ends after a pax header, without its entry");
      if (entries.length === 0) refuse("archive holds no entries");
      return entries;
    }
    const prefix = text(h.subarray(345, 500));
    const name = pax?.get("path") ?? (prefix ? `${prefix}/${text(h.subarray(0, 100))}` : text(h.subarray(0, 100)));
    const n: Record<string, number> = {};
    for (const [field, start, len] of NUMBERS) n[field] = number(h, field, start, len, name);
    if (!checksums(h).includes(n.checksum)) refuse(`archive header of ${quote(name)} has a bad checksum`);
    const type = String.fromCharCode(h[156]);
    const paxSize = type === "x" ? undefined : pax?.get("size");
    const size = paxSize === undefined ? n.size : Number(paxSize);
    if (size < 0) refuse(`archive entry ${quote(name)} has a negative size`);
    const data = pos + BLOCK;
    if (size > tar.length - data) refuse(`archive entry ${quote(name)} has a size (${size}) past the end of the archive`);
    const body = tar.subarray(data, data + size);
    if (type === "x") {
      if (pax) refuse("archive has a pax header for a pax header");
      if (size > MAX_PAX) refuse(`archive has a pax header of ${size} bytes, more than ${MAX_PAX}`);
      pax = paxRecords(body, name);
    } else if (type === "0" || type === "5") {
      if (type === "5" && size > 0) refuse(`archive entry ${quote(name)} is a directory with a size`);
      if (entries.length === MAX_ENTRIES) throw new SkillsvcError(Code.ResourceExhausted, `archive holds more than ${MAX_ENTRIES} entries`);
      entries.push({ name, dir: type === "5", data: body, mode: n.mode });
      pax = undefined;
    } else {
      refuse(`archive entry ${quote(name)} is ${TYPES[type] ?? `of type ${quote(type)}`}, not a file or directory`);
    }
    pos = data + Math.ceil(size / BLOCK) * BLOCK;
  }
}

/** The most compressed bytes an archive of maxBytes can take: gzip stores what it cannot shrink with 5 bytes per 64 KiB block, plus a header and trailer. */
export function downloadLimit(maxBytes: number): number {
  return maxBytes + Math.floor(maxBytes / 4096) + 4096;
}

function gunzip(archive: Uint8Array, maxBytes: number): Buffer {
  try {
    return gunzipSync(archive, { maxOutputLength: Math.min(maxBytes, constants.MAX_LENGTH) });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
      throw new SkillsvcError(Code.ResourceExhausted, `archive unpacks to more than maxBytes (${maxBytes} bytes)`);
    }
    refuse(`archive is not a complete gzip stream: ${(err as Error).message}`);
  }
}

export async function extractSkill(archive: Uint8Array, dir: string, opts: ExtractOptions = {}): Promise<string> {
  const entries = parseTar(gunzip(archive, opts.maxBytes ?? MAX_ARCHIVE_BYTES));
  const dest = path.resolve(dir);
  const tops = new Set<string>();
  const targets = entries.map((e) => {
    const parts = e.name.split("/").filter((p) => p !== "" && p !== ".");
    if (e.name.startsWith("/") || parts.includes("..") || parts.length === 0) {
      refuse(`archive entry ${quote(e.name)} leaves the destination`);
    }
    const target = path.resolve(dest, ...parts);
    if (!target.startsWith(dest + path.sep)) refuse(`archive entry ${quote(e.name)} leaves the destination`);
    tops.add(parts[0]);
    return target;
  });
  if (tops.size !== 1) refuse(`archive holds ${tops.size} top-level folders, want one skill folder`);
  for (const [i, e] of entries.entries()) {
    if (e.dir) {
      await mkdir(targets[i], { recursive: true });
    } else {
      await mkdir(path.dirname(targets[i]), { recursive: true });
      // The export's executable bit is kept (a script runs as it was published); nothing else of its mode.
      await writeFile(targets[i], e.data, { mode: e.mode & 0o111 ? 0o755 : 0o644 });
    }
  }
  return path.join(dest, [...tops][0]);
}
