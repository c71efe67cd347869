package mounts

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// Sentinel errors. Returned errors wrap one of them and quote the offending
// input, never a rendered key or prefix, so they are safe to show to the caller.
var (
	// ErrInvalidPath: the virtual path is not in canonical form or too long.
	ErrInvalidPath = errkind.New(errkind.InvalidArgument, "invalid path")
	// ErrInvalidID: a user, thread or ticket ID is malformed or reserved.
	ErrInvalidID = errkind.New(errkind.InvalidArgument, "invalid id")
	// ErrNoMount: the path is not inside a mount available to the caller.
	ErrNoMount = errkind.New(errkind.NotFound, "no mount")
	// ErrInvalidTable: New or Parse was given a bad mount table.
	ErrInvalidTable = errors.New("invalid mount table")
)

// Limits. S3 caps keys at 1024 bytes; 255 bytes per segment is what most
// filesystems allow, so trees stay portable to the local backend.
const (
	maxIDLen      = 128
	maxPathLen    = 1024
	maxSegmentLen = 255
	maxKeyLen     = 1024
)

// Mode says whether a mount may be written through.
type Mode int

// ReadOnly is the zero value so that a Mount written without a Mode fails safe.
const (
	ReadOnly Mode = iota
	ReadWrite
)

// String returns "ro" or "rw", the spelling used by Parse.
func (m Mode) String() string {
	switch m {
	case ReadOnly:
		return "ro"
	case ReadWrite:
		return "rw"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Identity is who a call says is calling, as its headers or token claim it:
// every call has a user and a thread, and may work on a ticket. It is not
// checked; Table.Identify turns it into a Caller.
type Identity struct {
	User, Thread, Ticket string // Ticket may be ""
	// Teams are the team IDs whose libraries the caller reads, comma
	// separated as the x-skillsvc-teams header carries them ("" for none).
	// A string keeps Identity and Caller comparable; Caller.Teams splits
	// the validated list.
	Teams string
	// Scope names the skill set the caller's listings show (a scope defined
	// in its own, a team's or the organization's library; "" for all), and
	// Harness the agent harness it declares, which a scope may match
	// against skills' compatibility. Both are spelled like IDs.
	Scope, Harness string
}

// MaxTeams bounds the teams one caller may belong to: each is a library
// layer every call of theirs reads.
const MaxTeams = 32

// ParseTeams validates a comma-separated list of team IDs, each spelled
// like a user ID, at most MaxTeams of them, and returns them sorted without
// duplicates (the order layers are stacked in and named by).
func ParseTeams(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	parts := strings.Split(list, ",")
	if len(parts) > MaxTeams {
		return nil, fmt.Errorf("%w: more than %d teams", ErrInvalidID, MaxTeams)
	}
	teams := make([]string, 0, len(parts))
	for _, t := range parts {
		t = strings.TrimSpace(t)
		if err := ValidateID("team", t); err != nil {
			return nil, err
		}
		teams = append(teams, t)
	}
	slices.Sort(teams)
	return slices.Compact(teams), nil
}

var literalRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// idChars reports whether s matches ^[A-Za-z0-9][A-Za-z0-9._-]*$: a loop,
// not a regexp, as every call checks its IDs (and usage events their
// user's) on the hot path.
func idChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return len(s) > 0
}

// isID reports whether s is a well-formed ID. The leading letter or digit
// rules out ".", ".." and hidden or "_"-prefixed names.
func isID(s string) bool {
	return len(s) >= 1 && len(s) <= maxIDLen && idChars(s)
}

// ValidateID checks one ID: 1 to 128 bytes matching ^[A-Za-z0-9][A-Za-z0-9._-]*$.
// kind names the ID in the error ("user", "thread", "ticket").
func ValidateID(kind, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: %s id is empty", ErrInvalidID, kind)
	case len(id) > maxIDLen:
		return fmt.Errorf("%w: %s id %s is longer than %d bytes", ErrInvalidID, kind, quote(id), maxIDLen)
	case !idChars(id):
		return fmt.Errorf("%w: %s id %s must start with a letter or digit and contain only letters, digits, '.', '_' and '-'",
			ErrInvalidID, kind, quote(id))
	}
	return nil
}

// Addressable reports whether rel, a key relative to a mount's or library's
// prefix, can be named by a virtual path. Keys written by other S3 tools may
// not be ("a//b", "x/../y", "dir/"); listings skip them.
func Addressable(rel string) bool {
	return rel != "" && CleanPath("/"+rel) == nil
}

// CleanPath reports whether vpath is a virtual path in its one canonical
// spelling. Anything that a client, a proxy or S3 tooling might read as a
// different path (or that two clients might spell differently for one key) is
// refused rather than repaired, so each accepted path names exactly one key.
// "/" is valid; it is the root above the mounts.
func CleanPath(vpath string) error {
	if len(vpath) > maxPathLen {
		return pathErr(vpath, fmt.Sprintf("is longer than %d bytes", maxPathLen))
	}
	if !utf8.ValidString(vpath) {
		return pathErr(vpath, "is not valid UTF-8")
	}
	if !strings.HasPrefix(vpath, "/") {
		return pathErr(vpath, `must start with "/"`)
	}
	for _, r := range vpath {
		switch {
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return pathErr(vpath, "contains a control character")
		case r == '\\':
			// Windows clients and some S3 tools treat it as a separator.
			return pathErr(vpath, "contains a backslash")
		}
	}
	if path.Clean(vpath) != vpath {
		return pathErr(vpath, `is not canonical (empty, "." or ".." segment, or trailing "/")`)
	}
	if !norm.NFC.IsNormalString(vpath) {
		// "é" and "e\u0301" look the same but would be two different keys.
		return pathErr(vpath, "is not NFC-normalized")
	}
	if vpath == "/" {
		return nil
	}
	for seg := range strings.SplitSeq(vpath[1:], "/") {
		if len(seg) > maxSegmentLen {
			return pathErr(vpath, fmt.Sprintf("has a segment longer than %d bytes", maxSegmentLen))
		}
		// path.Clean has removed these already; checked again so that the
		// guarantee does not rest on its rooted-path semantics alone.
		if seg == "." || seg == ".." {
			return pathErr(vpath, `has a "." or ".." segment`)
		}
	}
	return nil
}

func pathErr(vpath, why string) error {
	return fmt.Errorf("%w %s: %s", ErrInvalidPath, quote(vpath), why)
}

// quote quotes untrusted input for an error message, cut short so that a huge
// input cannot blow up logs.
func quote(s string) string {
	const limit = 128
	if len(s) <= limit {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:limit]) + "..."
}
