// Package skillrun runs a skill's scripts where the agent runs, never on the
// skills server: it materializes a skill into a local cache verified file by
// file against the catalog's manifest, copies the thread's /workspace into a
// scratch directory, runs the script under a Sandbox (bubblewrap when the
// machine has it, else a plain subprocess) with a timeout and caps on output
// and memory, and writes what the script created or changed back to the
// thread's /workspace. It is the Go side of the one runner contract the
// Python and TypeScript clients implement too (docs/agents/running-scripts.md).
//
// The server never imports this package: it talks to skillsvc only through
// the generated gRPC clients.
package skillrun
