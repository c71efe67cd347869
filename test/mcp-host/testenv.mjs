// Starts cmd/testenv — MinIO plus the real skillsvc binary with the example
// library uploaded for alice — and hands back what it prints. A testenv that
// cannot start is reported at once, with its exit code and the last lines it
// wrote.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

// Directories tempDir made, removed when the test process exits (each test
// file runs in its own process), whatever the tests did with them.
const tempDirs = [];
process.once('exit', () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** A new directory under the system's temp directory, removed when the test process exits. */
export function tempDir(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// How to point the suite at testenv, for the errors that need it.
export const how =
  'set SKILLSVC_TESTENV to a testenv binary (`go build -o testenv ./cmd/testenv` in a skillsvc checkout; it also needs ' +
  'SKILLSVC_BIN, a skillsvc binary from `go build -o skillsvc ./cmd/skillsvc`, and MinIO as SKILLSVC_MINIO_BIN or ' +
  'minio on the PATH), or run the suite in a skillsvc checkout';

const checkout = existsSync(path.join(repoRoot, 'cmd/testenv'));

// $SKILLSVC_TESTENV (set by the Makefile), else `go run ./cmd/testenv` in
// the checkout this file is in.
function command() {
  const bin = process.env.SKILLSVC_TESTENV;
  if (bin) return [bin, []];
  if (!checkout) throw new Error(`${repoRoot} is not a skillsvc checkout (no cmd/testenv): ${how}`);
  return ['go', ['run', './cmd/testenv']];
}

// start runs testenv with extra skillsvc flags and resolves to its JSON line
// plus stop() and tail() (skillsvc's last log lines); library, when set, is
// the folder uploaded instead of the example library; testenvFlags go to
// testenv itself.
export async function start(skillsvcFlags = [], { timeoutMs = 120_000, library, testenvFlags = [] } = {}) {
  const [cmd, args] = command();
  const own = library ? ['--library', library] : [];
  // In the checkout, so a testenv without SKILLSVC_BIN can build skillsvc.
  const child = spawn(cmd, [...args, ...own, ...testenvFlags, '--', ...skillsvcFlags], {
    cwd: checkout ? repoRoot : process.cwd(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.on('error', () => {}); // EPIPE once testenv is gone: its exit is what is reported
  // skillsvc's log: its last 64 KiB kept.
  const stderr = [];
  let stderrBytes = 0;
  child.stderr.on('data', (b) => {
    stderr.push(b);
    for (stderrBytes += b.length; stderrBytes > 64 << 10 && stderr.length > 1; ) stderrBytes -= stderr.shift().length;
  });
  const tail = () => Buffer.concat(stderr).toString().trimEnd().split('\n').slice(-30).join('\n') || '(nothing)';

  const env = await new Promise((resolve, reject) => {
    let settled = false;
    const fail = (why) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdin.end(); // testenv's signal to stop, also under go run
      reject(new Error(`${why}; testenv (${cmd}) wrote last:\n${tail()}`));
    };
    const timer = setTimeout(() => {
      fail(`testenv did not start in ${timeoutMs} ms`);
      child.kill();
    }, timeoutMs);
    child.once('error', (err) => fail(`cannot run testenv (${cmd}): ${err.message}; ${how}`));
    createInterface({ input: child.stdout }).once('line', (line) => {
      if (settled) return;
      try {
        const env = JSON.parse(line);
        settled = true;
        clearTimeout(timer);
        resolve(env);
      } catch (err) {
        fail(`testenv printed ${JSON.stringify(line)}, not its JSON line: ${err.message}`);
      }
    });
    // "close" comes once stderr is read to its end; a child of testenv
    // still holding it open must not delay the report for long.
    child.once('exit', (code, signal) => {
      const why = `testenv exited with ${signal ?? `code ${code}`} before serving`;
      child.once('close', () => fail(why));
      setTimeout(() => fail(why), 2000).unref();
    });
  });

  // Closing stdin is testenv's signal to stop both servers and clean up.
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.stdin.end();
    });
  return { ...env, stop, tail };
}
