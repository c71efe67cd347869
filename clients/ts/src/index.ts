// @skillsvc/client: skillsvc over gRPC for Node. See README.md.
export { DEFAULT_TARGET, MAX_QUERY_BYTES, SkillsvcClient, boundedQuery, trustLine, type Call, type ClientOptions, type Identity, type Provenance, type UploadOptions, type Version, type WatchOptions } from "./client.js";
export { SkillsvcError, codeName } from "./errors.js";
export {
  BadOutputError,
  BwrapSandbox,
  OutputTooLargeError,
  SandboxUnavailableError,
  ScriptNotFoundError,
  ScriptOutsideSkillError,
  ScriptRunError,
  ScriptTimeoutError,
  SubprocessSandbox,
  UnknownInterpreterError,
  WorkspaceTooLargeError,
  MAX_COMMAND_SKILLS,
  ManifestMismatchError,
  materializeSkill,
  probeBwrap,
  runCommand,
  runSkillScript,
  skillCacheDir,
  type CommandOptions,
  type CommandResult,
  type MaterializeOptions,
  type MaterializedSkill,
  type RunOptions,
  type RunResult,
  type Sandbox,
  type SandboxResult,
  type SandboxSpec,
} from "./runner.js";
export {
  DEFAULT_SET_MAX_BYTES,
  FolderCollisionError,
  SET_PARALLELISM,
  materializeSkills,
  setDigest,
  type MaterializeSkillsOptions,
  type MaterializedSet,
  type SetLayout,
  type SetMember,
} from "./skillset.js";
export { MAX_ARCHIVE_BYTES, MAX_ENTRIES, extractSkill, type ExtractOptions } from "./tar.js";
export { Code } from "@connectrpc/connect";
export * as fs from "./gen/skillsvc/v1/filesystem_pb.js";
export * as skills from "./gen/skillsvc/v1/skills_pb.js";
export * as admin from "./gen/skillsvc/v1/admin_pb.js";
export * as library from "./gen/skillsvc/v1/library_pb.js";
