// Package skillres holds the pure parts of the MCP skills extension's
// skill:// resources: their URIs, a skill folder's children and the
// cursors of a directory read, and resources/read results hosts accept.
package skillres

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Scheme is the scheme of a skill file's URI.
const Scheme = "skill://"

// A skill:// URI names one file of the skills mount, and one URI names it:
// each path segment percent-encoded as url.PathEscape does. A URI in any
// other form is refused, never resolved: dot segments and empty segments
// would reach other skills or the caller's other mounts through path
// cleaning, and an encoded separator would smuggle one into a segment.

// URI is the URI of the file at virtual path p under mount.
func URI(mount, p string) string {
	segs := strings.Split(strings.TrimPrefix(p, mount+"/"), "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return Scheme + strings.Join(segs, "/")
}

// Error says why a URI is refused; it is the message the caller gets.
type Error string

func (e Error) Error() string { return string(e) }

// Parse returns the virtual path under mount that uri names.
func Parse(mount, uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, Scheme)
	if !ok || rest == "" {
		return "", Error("not a skill file URI: a skill URI is skill://<category>/<skill>/<file>")
	}
	if strings.ContainsAny(rest, "?#") {
		return "", Error("a skill URI has no query or fragment")
	}
	segs := strings.Split(rest, "/")
	for i, seg := range segs {
		name, err := url.PathUnescape(seg)
		switch {
		case err != nil:
			return "", Error("a skill URI's segments are percent-encoded UTF-8")
		case name == "":
			return "", Error("a skill URI has no empty segments")
		case name == "." || name == "..":
			return "", Error("a skill URI has no . or .. segments")
		case strings.ContainsAny(name, "/\\\x00") || !utf8.ValidString(name):
			return "", Error("a skill URI's segments name files: no encoded separators or invalid UTF-8")
		case url.PathEscape(name) != seg:
			return "", Error("not the canonical form of this skill URI: use the URI as listed, each segment percent-encoded as skills/list does (e.g. a space as %20)")
		}
		segs[i] = name
	}
	return mount + "/" + strings.Join(segs, "/"), nil
}

// Child is an entry of a folder.
type Child struct {
	Name string
	Dir  bool
	Size int64
}

// Children returns dir's children in name order, from the files below
// it (a folder exists while it holds a file), and whether dir is a folder.
func Children(dir string, files []skillview.ManifestFile) ([]Child, bool) {
	prefix := dir + "/"
	var children []Child
	seen := map[string]bool{}
	for _, f := range files {
		rest, ok := strings.CutPrefix(f.Path, prefix)
		if !ok {
			continue
		}
		name, _, nested := strings.Cut(rest, "/")
		if seen[name] {
			continue
		}
		seen[name] = true
		c := Child{Name: name, Dir: nested}
		if !nested {
			c.Size = int64(f.Size)
		}
		children = append(children, c)
	}
	slices.SortFunc(children, func(a, b Child) int { return strings.Compare(a.Name, b.Name) })
	return children, len(children) > 0
}

// maxCursorBytes bounds a directory read's cursor: a path and a name.
const maxCursorBytes = 4096

// EncodeCursor is a directory read's cursor: the last name of the page
// before it, bound to the folder it lists.
func EncodeCursor(dir, last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(dir + "\x00" + last))
}

// DecodeCursor returns the last name a cursor of dir names.
func DecodeCursor(dir, cursor string) (string, error) {
	errCursor := Error("the cursor is not one this directory's listing returned")
	if len(cursor) > maxCursorBytes {
		return "", errCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", errCursor
	}
	d, last, ok := strings.Cut(string(b), "\x00")
	if !ok || d != dir {
		return "", errCursor
	}
	return last, nil
}

// HasEmptyText reports whether a content of r has neither text nor blob: an
// empty file, whose empty text the SDK's ResourceContents omits.
func HasEmptyText(r *mcp.ReadResourceResult) bool {
	return slices.ContainsFunc(r.Contents, func(c *mcp.ResourceContents) bool { return c.Text == "" && c.Blob == nil })
}

// EmptyTextResult sends a resources/read result with "text": "" for its
// empty contents: a content with neither text nor blob is in neither form
// of the schema's union, and hosts refuse the whole result (an empty
// __init__.py of a skill).
type EmptyTextResult struct{ *mcp.ReadResourceResult }

func (r EmptyTextResult) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(r.ReadResourceResult)
	if err != nil {
		return nil, err
	}
	var wire map[string]json.RawMessage
	if err := json.Unmarshal(data, &wire); err != nil {
		return nil, err
	}
	var contents []map[string]json.RawMessage
	if err := json.Unmarshal(wire["contents"], &contents); err != nil {
		return nil, err
	}
	for _, c := range contents {
		_, text := c["text"]
		_, blob := c["blob"]
		if !text && !blob {
			c["text"] = json.RawMessage(`""`)
		}
	}
	if wire["contents"], err = json.Marshal(contents); err != nil {
		return nil, err
	}
	return json.Marshal(wire)
}
