// Runs extractSkill for tar.test.ts on a worker thread, which the test can
// terminate: a synchronous loop in the reader would block the event loop,
// and with it node:test's own timeout.
import { parentPort, workerData } from "node:worker_threads";

import { SkillsvcError, extractSkill, type ExtractOptions } from "@skillsvc/client";

const { archive, dir, opts } = workerData as { archive: Uint8Array; dir: string; opts?: ExtractOptions };
try {
  parentPort?.postMessage({ folder: await extractSkill(archive, dir, opts) });
} catch (err) {
  parentPort?.postMessage(err instanceof SkillsvcError ? { code: err.code, message: err.rawMessage } : { other: String(err) });
}
