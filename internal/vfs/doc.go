// Package vfs is the virtual filesystem an agent thread sees: absolute paths
// under the caller's mounts (/workspace, /ticket, /skills), resolved through
// a mounts.Table to keys of one objstore.Bucket. A read-only mount may be
// served by a Tree instead (the skills library's merged view), which then
// answers every operation on it.
//
// Every operation is bounded by Config limits. Text operations (Read, Write,
// Edit, Grep) refuse binary files; Download and Upload move any bytes. Writes
// are single atomic object puts; Edit is a read followed by a put conditional
// on the ETag it read, retried on conflict, so concurrent edits never lose an
// update. Errors wrap an errkind.Kind (or a sentinel of errors.go) and name
// virtual paths only.
package vfs
