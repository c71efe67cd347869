// Package snapshots keeps pinned threads' libraries: a thread's first
// pinned call freezes the indexes of every library of the caller's view
// (with the shared and team libraries' protected names and scopes) into a
// snapshot object named by its content, copying each file into its
// library's blob space, and records a pin for the thread (conditional
// create, replaced once it expires). It sweeps expired pins and the
// snapshots no pin refers to, and lists the blobs snapshots refer to for
// garbage collection. Building a view out of a snapshot is internal/skills'.
package snapshots
