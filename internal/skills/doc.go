// Package skills is the skills catalog: it finds skill folders
// (<category>/<skill>/SKILL.md or <skill>/SKILL.md) in a user's library and
// the organization's shared one, parses and validates their frontmatter,
// merges them (the user's skill hides the shared one of the same frontmatter
// name, wherever each sits), and serves progressive disclosure:
// listings and a prompt block of names and descriptions, a skill's
// instructions on demand, then its files.
//
// Each library (a user's, the shared one) has an index: its listing and the
// frontmatter head of every SKILL.md. Calls are answered from the index in
// process memory; it is revalidated in the background (one paged LIST, then
// only the heads whose ETag changed) once older than the refresh interval,
// and before answering once older than the max staleness. Indexes are
// shared through the cache.Cache given to New (Redis, or in process) and
// persisted in the bucket, so a new replica starts without reading every
// SKILL.md. File contents are cached by key and ETag, so warm calls make no
// storage request; the cache failing never fails a call. Each library is
// decoded once into a layer (its skills, parsed frontmatter and manifests),
// and a user's view overlays their own layer on the shared one without
// copying it; indexes, layers and views share one byte budget
// (--skills.max-held-bytes). The merged view also backs the read-only
// skills mount of the VFS (internal/skilltree), so every path a listing
// returns can be read there.
//
// The SKILL.md rules (parsing, validation, the prompt block) are package
// skillmd's, the index, its caching and the file cache package libindex's,
// and each layer's search index package skillsearch's (handed the layers
// and, per search, what the view serves); the view model (pure data) and
// the catalog's value types are package skillview's, the caching builder of
// views package views'. This package is the catalog's queries built on them.
package skills
