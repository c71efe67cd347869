// Package skillmd parses, validates and formats SKILL.md files: the
// frontmatter rules of the Agent Skills specification (and our parse
// bounds), and the prompt block that lists skills within a character
// budget. It is pure code: no storage, cache or I/O, so the rules can be
// read and changed without the catalog around them.
package skillmd
