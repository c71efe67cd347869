package watch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Entry is what a state says of one served skill.
type Entry struct {
	Path     string `json:"p"` // the skill folder, e.g. "/skills/docs/pdf"
	Name     string `json:"n"`
	Layer    string `json:"l"`
	Digest   string `json:"d,omitempty"` // Skill.ManifestDigest
	Disabled bool   `json:"x,omitempty"`
	// ETag is SKILL.md's, kept only for a skill over the limits, which has
	// no manifest digest: a change to its SKILL.md still shows.
	ETag string `json:"e,omitempty"`
}

// State is a caller's catalog at one library digest: its served skills by
// path.
type State struct {
	Digest  string  `json:"digest"`
	Entries []Entry `json:"entries"` // sorted by path, paths unique
}

// StateOf is the state of the skills of a catalog's listing (sorted by
// path, as skills.Catalog.State gives them) at digest.
func StateOf(list []skillview.Skill, digest string) State {
	st := State{Digest: digest, Entries: make([]Entry, len(list))}
	for i, s := range list {
		e := Entry{Path: s.Path, Name: s.Name, Layer: s.Layer, Digest: s.ManifestDigest(), Disabled: s.Disabled}
		if e.Digest == "" {
			e.ETag = s.ETag
		}
		st.Entries[i] = e
	}
	slices.SortFunc(st.Entries, func(a, b Entry) int { return cmp.Compare(a.Path, b.Path) })
	return st
}

// ChangeKind is what happened to one skill between two states.
type ChangeKind uint8

// The kinds, as SkillChange.Kind.
const (
	Added ChangeKind = iota + 1
	Changed
	Removed
	Enabled
	Disabled
)

// Change is one skill's change: the entry after it (before it for Removed).
type Change struct {
	Kind ChangeKind
	Entry
}

// Diff lists what changed from one state to the next, in path order. A
// skill's content change (Added, Changed, Removed: its files, name or
// layer) comes before its enablement change (Enabled, Disabled), so a skill
// that appears disabled is Added then Disabled, and one removed is only
// Removed.
func Diff(from, to State) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(from.Entries) || j < len(to.Entries) {
		switch {
		case j == len(to.Entries) || (i < len(from.Entries) && from.Entries[i].Path < to.Entries[j].Path):
			out = append(out, Change{Kind: Removed, Entry: from.Entries[i]})
			i++
		case i == len(from.Entries) || to.Entries[j].Path < from.Entries[i].Path:
			e := to.Entries[j]
			out = append(out, Change{Kind: Added, Entry: e})
			if e.Disabled {
				out = append(out, Change{Kind: Disabled, Entry: e})
			}
			j++
		default:
			a, b := from.Entries[i], to.Entries[j]
			if a.Name != b.Name || a.Layer != b.Layer || a.Digest != b.Digest || a.ETag != b.ETag {
				out = append(out, Change{Kind: Changed, Entry: b})
			}
			switch {
			case a.Disabled && !b.Disabled:
				out = append(out, Change{Kind: Enabled, Entry: b})
			case !a.Disabled && b.Disabled:
				out = append(out, Change{Kind: Disabled, Entry: b})
			}
			i++
			j++
		}
	}
	return out
}

// encode is the state as kept in the cache.
func (s State) encode() ([]byte, error) { return json.Marshal(s) }

// decodeState reads what encode wrote, for digest: a value under another
// digest's key (a corrupted or foreign entry) is refused.
func decodeState(b []byte, digest string) (State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("watch: decoding a kept state: %w", err)
	}
	if s.Digest != digest {
		return State{}, fmt.Errorf("watch: kept state is of digest %q, not %q", s.Digest, digest)
	}
	if !slices.IsSortedFunc(s.Entries, func(a, b Entry) int { return cmp.Compare(a.Path, b.Path) }) {
		return State{}, fmt.Errorf("watch: kept state of %q is not sorted", digest)
	}
	return s, nil
}

// digestLen is the length of a library digest: "sha256:" and 64 hex digits.
const digestLen = len("sha256:") + 64

// CheckDigest checks a since_digest from a client: empty, or a library
// digest as the server writes them (which also bounds it).
func CheckDigest(d string) error {
	if d == "" {
		return nil
	}
	ok := len(d) == digestLen && d[:7] == "sha256:"
	for i := 7; ok && i < len(d); i++ {
		c := d[i]
		ok = '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
	}
	if !ok {
		return fmt.Errorf("%w: since_digest must be a library_digest (\"sha256:\" and 64 lowercase hex digits)", errkind.InvalidArgument)
	}
	return nil
}
