// Package libindex keeps the index of each skill library (a user's, the
// shared one): every object, the frontmatter head of every SKILL.md and the
// sha256 of every file of a skill within the MCP extension's limits, with a
// generation that changes only with the content. It owns the index codec,
// the reads of SKILL.md heads, the hashing of skill files, the
// content-addressed file cache and the coordination of replicas through the
// shared cache (stamps, a revalidation lock, the persisted index object:
// a stamp gone from a full cache is told from a drop by the persisted
// index's head, drops.go), and its metrics; libindex/loads runs the loads. It knows nothing of views, names or settings: the skills
// package, the catalog, builds those on top of it and gives it the one rule
// it needs (which folders are skills, and which files each one serves).
package libindex
