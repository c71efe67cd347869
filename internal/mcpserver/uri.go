package mcpserver

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// A skill:// URI names one file of the skills mount, and one URI names it:
// each path segment percent-encoded as url.PathEscape does. A URI in any
// other form is refused, never resolved: dot segments and empty segments
// would reach other skills or the caller's other mounts through path
// cleaning, and an encoded separator would smuggle one into a segment.

// skillURI is the URI of the file at virtual path p under mount.
func skillURI(mount, p string) string {
	segs := strings.Split(strings.TrimPrefix(p, mount+"/"), "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return skillScheme + strings.Join(segs, "/")
}

// errURI says why a URI is refused; it is the message the caller gets.
type errURI string

func (e errURI) Error() string { return string(e) }

// parseSkillURI returns the virtual path under mount that uri names.
func parseSkillURI(mount, uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, skillScheme)
	if !ok || rest == "" {
		return "", errURI("not a skill file URI: a skill URI is skill://<category>/<skill>/<file>")
	}
	if strings.ContainsAny(rest, "?#") {
		return "", errURI("a skill URI has no query or fragment")
	}
	segs := strings.Split(rest, "/")
	for i, seg := range segs {
		name, err := url.PathUnescape(seg)
		switch {
		case err != nil:
			return "", errURI("a skill URI's segments are percent-encoded UTF-8")
		case name == "":
			return "", errURI("a skill URI has no empty segments")
		case name == "." || name == "..":
			return "", errURI("a skill URI has no . or .. segments")
		case strings.ContainsAny(name, "/\\\x00") || !utf8.ValidString(name):
			return "", errURI("a skill URI's segments name files: no encoded separators or invalid UTF-8")
		case url.PathEscape(name) != seg:
			return "", errURI("not the canonical form of this skill URI: use the URI as listed, each segment percent-encoded as skills/list does (e.g. a space as %20)")
		}
		segs[i] = name
	}
	return mount + "/" + strings.Join(segs, "/"), nil
}
