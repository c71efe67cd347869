// Package mounts maps the virtual paths that agent workers see ("/workspace/a.md")
// to per-caller object-store keys ("alice/threads/t1/a.md") through a small,
// immutable mount table. Every call carries an Identity (user, thread, optional
// ticket), which Table.Identify validates once, at the edge, into a Caller; a
// mount's Template ("{user}/threads/{thread}/") is rendered with the Caller to
// get the mount's key prefix. Virtual paths and IDs are untrusted, so they are
// accepted only in one canonical spelling (CleanPath, ValidateID) and IDs can
// never be "." or "..": a rendered key always stays under its mount's prefix.
//
// New refuses a table in which two mounts could render, for any callers, to
// prefixes where one is a prefix of (or equal to) the other, because then a
// read-write mount could write into another mount's keys. Templates are compared
// segment by segment, which is why a placeholder must fill a whole segment.
// When such an overlap can only happen if a placeholder renders to one specific
// literal (with "threads/{thread}/" and "{user}/skills/", the user "threads"
// with the thread "skills"), the table is accepted and that ID is reserved
// instead: New records the first (placeholder, literal) pair the overlap needs,
// and Table.Identify rejects a caller whose ID equals
// it ("user id \"threads\" is reserved"). One pair suffices, since the overlap
// needs all of them to hold. Overlaps that need no literal at all
// ("{user}/{thread}/" and "{user}/{ticket}/") are rejected by New.
package mounts
