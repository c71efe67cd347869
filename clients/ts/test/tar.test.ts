// extractSkill on hostile archives, built byte by byte (no server needed).
import assert from "node:assert/strict";
import { mkdir, readFile, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";
import { Worker } from "node:worker_threads";
import { gzipSync } from "node:zlib";

import { Code, MAX_ENTRIES, SkillsvcError, type ExtractOptions } from "@skillsvc/client";

import { tempDir } from "./testenv.js";

// header builds a ustar header; size is a number, or the raw 12-byte field.
function header(name: string, size: number | Uint8Array = 0, type = "0", f: { checksum?: string; mode?: string; prefix?: string } = {}): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100);
  h.write(f.mode ?? "0000644\0", 100, 8, "latin1");
  h.write("0000000\0", 108);
  h.write("0000000\0", 116);
  if (typeof size === "number") h.write(size.toString(8).padStart(11, "0") + "\0", 124);
  else Buffer.from(size).copy(h, 124);
  h.write("14712345670\0", 136);
  h.write(type, 156, 1, "latin1");
  h.write("ustar\x0000", 257, "latin1");
  if (f.prefix) h.write(f.prefix, 345, 155);
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(f.checksum ?? sum.toString(8).padStart(6, "0") + "\0 ", 148, 8, "latin1");
  return h;
}

const padded = (b: Buffer) => Buffer.concat([b, Buffer.alloc(-b.length & 511)]);
const file = (name: string, data = "x") => Buffer.concat([header(name, Buffer.byteLength(data)), padded(Buffer.from(data))]);

// pax builds an extended header ("x") of "<len> key=value\n" records.
function pax(records: Record<string, string | Buffer>, size?: number | Uint8Array): Buffer {
  const body = Buffer.concat(
    Object.entries(records).map(([key, value]) => {
      const rec = Buffer.concat([Buffer.from(` ${key}=`), Buffer.from(value), Buffer.from("\n")]);
      const n = rec.length + String(rec.length + String(rec.length).length).length; // the length counts its own digits
      return Buffer.concat([Buffer.from(String(n)), rec]);
    }),
  );
  return Buffer.concat([header("././@PaxHeader", size ?? body.length, "x"), padded(body)]);
}

const tgz = (parts: Buffer[], end = true) => gzipSync(Buffer.concat([...parts, Buffer.alloc(end ? 1024 : 0)]));
const raw = (...parts: Buffer[]) => Buffer.concat(parts);

// extract runs extractSkill on a worker that is terminated after 10 s, so a
// reader that loops fails the test instead of hanging the suite.
function extract(archive: Uint8Array, dir: string, opts?: ExtractOptions): Promise<string> {
  const worker = new Worker(new URL("./extract-worker.js", import.meta.url), { workerData: { archive, dir, opts }, resourceLimits: { maxOldGenerationSizeMb: 256 } });
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("extractSkill did not finish within 10 s")), 10_000);
    worker.once("message", (m: { folder?: string; code?: Code; message?: string; other?: string }) => {
      if (m.folder !== undefined) resolve(m.folder);
      else if (m.code !== undefined) reject(new SkillsvcError(m.code, m.message ?? ""));
      else reject(new Error(m.other));
    });
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`worker exited with ${code} before answering`)));
  }).finally(() => worker.terminate());
}

async function refuses(archive: Uint8Array, code: Code, message: RegExp, opts?: ExtractOptions) {
  const base = await tempDir("skillsvc-ts-hostile-");
  const dest = path.join(base, "dest");
  await mkdir(dest);
  await assert.rejects(extract(archive, dest, opts), (err: unknown) => {
    assert.ok(err instanceof SkillsvcError, String(err));
    assert.equal(err.code, code, err.message);
    assert.match(err.rawMessage, message);
    return true;
  });
  assert.deepEqual(await readdir(dest), [], "nothing is written when an entry is refused");
  assert.deepEqual(await readdir(base), ["dest"]);
}

const GOOD = file("skill/SKILL.md", "hello");
const HUGE = Buffer.from([0x80, ...Array(11).fill(0xff)]); // base-256: 2^88 - 1
const field = (s: string) => Buffer.from(s, "latin1");

const hostile: Record<string, [Uint8Array, RegExp]> = {
  // Sizes the old reader trusted: a negative one kept it on the same header,
  // collecting entries until the heap ran out.
  "negative size": [tgz([GOOD, header("skill/b", field("-0000001000\0"))]), /size field that is negative/],
  "negative base-256 size": [tgz([GOOD, header("skill/b", Buffer.from([...Array(10).fill(0xff), 0xfe, 0]))]), /negative size/],
  "non-numeric size": [tgz([GOOD, header("skill/b", field("0000000001x\0"))]), /size field that is not a number/],
  "size parseInt would take": [tgz([GOOD, header("skill/b", field("1z\0\0\0\0\0\0\0\0\0\0"))]), /size field that is not a number/],
  "base-256 size overflowing": [tgz([GOOD, header("skill/b", HUGE)]), /past the end/],
  "size past the end": [tgz([GOOD, header("skill/b", 10_000), padded(Buffer.from("x"))]), /past the end/],
  "non-numeric mode": [tgz([GOOD, header("skill/b", 0, "0", { mode: "rwxr-xr-" })]), /mode field that is not a number/],
  "bad checksum": [tgz([GOOD, header("skill/b", 0, "0", { checksum: "0000001\0" })]), /bad checksum/],
  "no end-of-archive block": [tgz([GOOD], false), /truncated/],
  "cut inside a file": [gzipSync(raw(header("skill/SKILL.md", 1000), Buffer.alloc(1000, "x"))), /truncated/],
  "cut inside a header": [gzipSync(raw(GOOD, header("skill/b").subarray(0, 300))), /truncated/],
  "not gzip": [Buffer.from("PK\x03\x04 a zip"), /gzip/],
  "cut gzip": [tgz([GOOD]).subarray(0, -20), /gzip/],
  "empty archive": [tgz([]), /no entries/],
  // pax extended headers: their own size, and the size they set.
  "pax size negative": [tgz([GOOD, pax({ size: "-1" }), file("skill/b")]), /pax size that is not a non-negative number/],
  "pax size not a number": [tgz([GOOD, pax({ size: "0x10" }), file("skill/b")]), /pax size that is not a non-negative number/],
  "pax size huge": [tgz([GOOD, pax({ size: "99999999999999999999" }), file("skill/b")]), /past the end/],
  "pax header size negative": [tgz([GOOD, pax({ path: "skill/b" }, Buffer.alloc(12, 0xff)), file("skill/b")]), /negative size/],
  "pax header size huge": [tgz([GOOD, pax({ path: "skill/b" }, HUGE), file("skill/b")]), /past the end/],
  "pax header too large": [tgz([GOOD, pax({ comment: "x".repeat(2 ** 20) }), file("skill/b")]), /pax header of/],
  "pax record length wrong": [tgz([GOOD, header("p", 13, "x"), padded(field("99 path=a/b\n\0")), file("skill/b")]), /malformed pax record/],
  "pax record length zero": [tgz([GOOD, header("p", 12, "x"), padded(field("0 path=a/b\n\0")), file("skill/b")]), /malformed pax record/],
  "pax record without =": [tgz([GOOD, header("p", 10, "x"), padded(field("10 pathab\n")), file("skill/b")]), /malformed pax record/],
  "pax path with NUL": [tgz([GOOD, pax({ path: "skill/b\0../x" }), file("skill/b")]), /NUL/],
  "pax not UTF-8": [tgz([GOOD, pax({ path: Buffer.from([0x73, 0xff]) }), file("skill/b")]), /not UTF-8/],
  "pax sparse": [tgz([GOOD, pax({ "GNU.sparse.major": "1" }), file("skill/b")]), /sparse/],
  "pax header for a pax header": [tgz([GOOD, pax({ path: "a" }), pax({ path: "b" }), file("skill/b")]), /pax header for a pax header/],
  "pax header at the end": [tgz([GOOD, pax({ path: "skill/b" })]), /without its entry/],
  "directory with a size": [tgz([GOOD, header("skill/d/", 512, "5"), padded(Buffer.from("x"))]), /directory with a size/],
  // Entries that are not files or directories.
  symlink: [tgz([GOOD, header("skill/link", 0, "2")]), /is a symlink/],
  "hard link": [tgz([GOOD, header("skill/hard", 0, "1")]), /is a hard link/],
  "character device": [tgz([GOOD, header("skill/dev", 0, "3")]), /is a character device/],
  FIFO: [tgz([GOOD, header("skill/fifo", 0, "6")]), /is a FIFO/],
  "GNU long name": [tgz([GOOD, header("././@LongLink", 12, "L"), padded(field("../../evil\0\0")), file("skill/b")]), /GNU long name/],
  "global pax header": [tgz([GOOD, header("g", 12, "g"), padded(field("12 path=../\n")), file("skill/b")]), /global pax header/],
  "old-style file": [tgz([GOOD, header("skill/b", 0, "\0")]), /of type/],
  // Names that leave the destination.
  "dot-dot": [tgz([GOOD, file("skill/../../evil")]), /leaves the destination/],
  absolute: [tgz([GOOD, file("/tmp/evil")]), /leaves the destination/],
  "dot-dot in the ustar prefix": [tgz([GOOD, header("evil", 0, "0", { prefix: "skill/../.." })]), /leaves the destination/],
  "dot-dot in a pax path": [tgz([GOOD, pax({ path: "skill/../../evil" }), file("skill/b")]), /leaves the destination/],
  "two folders": [tgz([GOOD, file("other/SKILL.md")]), /2 top-level folders/],
};

for (const [name, [archive, message]] of Object.entries(hostile)) {
  test(`extractSkill refuses: ${name}`, { timeout: 15_000 }, () => refuses(archive, Code.InvalidArgument, message));
}

test("extractSkill refuses a gzip bomb past maxBytes", { timeout: 15_000 }, async () => {
  // 64 MiB of zeros in about 64 KiB of gzip: refused once 1 MiB is unpacked.
  const bomb = gzipSync(raw(header("skill/SKILL.md", 64 * 2 ** 20), Buffer.alloc(64 * 2 ** 20)));
  assert.ok(bomb.length < 128 * 1024, String(bomb.length));
  await refuses(bomb, Code.ResourceExhausted, /maxBytes/, { maxBytes: 2 ** 20 });
});

test("extractSkill refuses more than MAX_ENTRIES entries", { timeout: 15_000 }, async () => {
  const dir = header("skill/d/", 0, "5");
  await refuses(tgz(Array(MAX_ENTRIES + 1).fill(dir)), Code.ResourceExhausted, /more than 100000 entries/);
});

test("extractSkill reads pax and ustar names", { timeout: 15_000 }, async () => {
  // Go's writer (the server) puts long names in pax records; the pax size
  // overrides the header's.
  const long = `skill/${"d".repeat(120)}/file.md`;
  const dir = await tempDir("skillsvc-ts-good-");
  const archive = tgz([
    header("skill/", 0, "5"),
    file("skill/SKILL.md", "hello"),
    pax({ path: long, size: "3", mtime: "1700000000.5" }),
    header("ignored", 0),
    padded(Buffer.from("abc")),
    header("file.md", 2, "0", { prefix: "skill/refs" }),
    padded(Buffer.from("ok")),
  ]);
  const folder = await extract(archive, dir);
  assert.equal(folder, path.join(dir, "skill"));
  assert.equal(await readFile(path.join(folder, "SKILL.md"), "utf8"), "hello");
  assert.equal(await readFile(path.join(dir, long), "utf8"), "abc");
  assert.equal(await readFile(path.join(folder, "refs/file.md"), "utf8"), "ok");
  assert.ok((await stat(path.join(folder, "refs"))).isDirectory());
});
