// Package versions keeps a library's skill versions as records in the
// bucket: one immutable record per version (its files by digest), the
// skill's labels, pending proposals kept apart, the newest-first order
// ListSkillVersions pages through, and the memory budget reads of them
// draw on. It knows keys below a library's versions root; who may do
// what, and the live copy, are the library package's.
package versions
