// Package doctest runs the code blocks of the project's Markdown pages
// (README.md, docs/**/*.md and the clients' READMEs) against the real
// binaries, so an example that breaks fails `make test-docs` (one page: make
// test-docs DOCS=docs/x.md).
//
// The syntax, which every page follows:
//
//   - A fenced block's info string is its language, then attributes separated
//     by spaces (GitHub shows only the language). sh, bash and shell blocks
//     run as one script under bash -euo pipefail; python blocks under the
//     project's .venv/bin/python (the skillsvc client installed); ts and
//     typescript blocks are type-checked (strict) and compiled with
//     clients/ts's tsc, then run with node, importing "@skillsvc/client" from
//     clients/ts/dist. Every other language (text, json, yaml, console, none)
//     is shown only. py, python3 and zsh are refused, so a block meant to run
//     is never shown only by a typo.
//   - skip="reason": never runs; the reason is required. file=PATH: not run,
//     its content written to PATH in the page's directory when reached (not
//     through a link into the repository). background (sh): started and left
//     running until the page ends; ready=HOST:PORT waits until that address
//     accepts TCP. fails: must exit non-zero (a ts block must still compile).
//     An unknown attribute, a value where none is taken, or attributes that
//     cannot apply together are errors naming page and line.
//   - A page directive, an HTML comment line before the first block:
//     <!-- doctest: server minio redis --> with any of: server (bin/skillsvc
//     with its defaults, in the page's directory, waited for until its health
//     is SERVING), minio (127.0.0.1:9000, minioadmin/minioadmin, bucket
//     skillsvc; AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION
//     exported to the blocks), redis (redis-server on 127.0.0.1:6379).
//
// Runner.Run runs a page in a fresh directory of symlinks to the repository's
// top-level entries (but data/, which is the page server's, and .git), with
// the repository's bin/ and .tools/bin first on PATH and no SKILLSVC_ or AWS_
// variables but the ones above. Blocks run in order, each in its own process
// group with 3 minutes at most, and the group is killed when the block ends;
// servers and background blocks are killed when the page ends. The first
// block that fails stops the page with its page:line, the block, its output
// and the tails of the page's servers and background blocks.
package doctest
