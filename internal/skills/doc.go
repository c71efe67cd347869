// Package skills is the skills catalog: it finds skill folders
// (<category>/<skill>/SKILL.md or <skill>/SKILL.md) in a user's library and
// the organization's shared one, parses and validates their frontmatter,
// merges them (the user's skill hides the shared one of the same frontmatter
// name, wherever each sits), and serves progressive disclosure:
// listings and a prompt block of names and descriptions, a skill's
// instructions on demand, then its files.
//
// Listing reads each library with one paged LIST and then only the head of
// each SKILL.md, in parallel. Both go to the cache.Cache given to New (Redis
// shared by the replicas, or in process): a listing for the index TTL, the
// head bytes by key and ETag (content-addressed, never invalidated), and
// parsed frontmatter stays in process, so an unchanged library costs one
// LIST per index TTL across all replicas. The cache failing never fails a
// call: storage answers instead. The merged view also backs the
// read-only skills mount of the VFS (Library implements vfs.Tree), so every
// path a listing returns can be read there.
package skills
