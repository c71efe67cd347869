// Package doctest runs the code blocks of the project's Markdown pages
// (README.md and docs/**/*.md) against the real binaries, so an example that
// breaks fails `make test-docs`.
//
// Parse reads a page: its fenced code blocks with the attributes after the
// language (skip="reason", file=PATH, background, ready=HOST:PORT, fails) and
// its directive, an HTML comment before the first block naming the servers
// the page needs (<!-- doctest: server minio redis -->). Runner.Run runs a
// page in a fresh directory of symlinks to the repository's top-level
// entries: it starts the page's servers on their fixed ports, runs sh, python
// and ts blocks in order (each its own script, 3 minutes at most), writes
// file= blocks, and stops everything, background blocks included, when the
// page ends. The syntax is the shared contract every doc writer follows
// (docs/authors or the lead's notes); a block the harness cannot read is an
// error, never silently shown only.
package doctest
