// Package examples holds the example skill library (the skills folder next
// to this file), built into the binary: skillsvc serves it on a first run
// with no configuration, and cmd/testenv uploads it for the client suites,
// so neither needs a checkout of the repository at run time.
package examples

import (
	"embed"
	"io/fs"
)

//go:embed skills
var files embed.FS

// Skills is the example library: one folder per category, each holding
// skill folders (writing/release-notes/SKILL.md, …).
func Skills() fs.FS {
	sub, _ := fs.Sub(files, "skills") // fails only for an invalid path, which "skills" is not
	return sub
}
