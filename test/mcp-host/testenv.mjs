// Starts cmd/testenv — MinIO plus the real skillsvc binary with the example
// library uploaded for alice — and hands back what it prints.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// start runs testenv with extra skillsvc flags and resolves to its JSON line
// plus stop(); library, when set, is the folder uploaded instead of the
// example library. SKILLSVC_TESTENV is set by the Makefile; without it the
// command is built on the fly.
export async function start(skillsvcFlags = [], { timeoutMs = 120_000, library } = {}) {
  const bin = process.env.SKILLSVC_TESTENV;
  const [cmd, args] = bin ? [bin, []] : ['go', ['run', './cmd/testenv']];
  const own = library ? ['--library', library] : [];
  const child = spawn(cmd, [...args, ...own, '--', ...skillsvcFlags], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stderr = [];
  child.stderr.on('data', (b) => {
    stderr.push(b);
    if (stderr.length > 200) stderr.shift();
  });
  const tail = () => Buffer.concat(stderr).toString().split('\n').slice(-30).join('\n');

  const env = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`testenv did not start in ${timeoutMs} ms:\n${tail()}`)), timeoutMs);
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line));
      } catch (err) {
        reject(new Error(`testenv printed ${JSON.stringify(line)}: ${err.message}`));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`testenv exited with ${code}:\n${tail()}`));
    });
  });

  // Closing stdin is testenv's signal to stop both servers and clean up.
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.stdin.end();
    });
  return { ...env, stop, tail };
}
