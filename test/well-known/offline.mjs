// Preloaded into the skills CLI by the test (node --import): its fetch may
// reach loopback addresses only. The CLI asks GitHub's API whether a
// well-known source is a private repository (for its telemetry) even with
// telemetry off; that request must not leave the machine. Each URL asked
// for is logged to $WELL_KNOWN_FETCH_LOG, so the test sees what the CLI
// fetched.
import { appendFileSync } from 'node:fs';

const log = process.env.WELL_KNOWN_FETCH_LOG;
const real = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  const local = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
  if (log) appendFileSync(log, `${local ? 'GET' : 'BLOCKED'} ${url}\n`);
  if (!local) throw new TypeError(`fetch ${url}: only loopback addresses are reachable in this test`);
  return real(input, init);
};
