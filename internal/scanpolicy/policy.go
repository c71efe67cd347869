package scanpolicy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skillsvc/skillsvc/internal/layout"
)

// Mode is what a library does with a skill's findings.
type Mode string

const (
	// Off scans nothing.
	Off Mode = "off"
	// Warn serves every skill and shows its findings as warnings: in the
	// publish reply, to reviewers, in ListSkills and GetSkill.
	Warn Mode = "warn"
	// Block refuses a publish with a high finding and withholds an
	// uploaded skill with one (or not yet scanned) from everyone but the
	// library's owner and admins, who see it listed as invalid with why.
	Block Mode = "block"
)

// DefaultMode is --library.scan's default: findings are shown, nothing
// is refused. A false positive under block would withhold a skill nobody
// can see the reason for without an admin; under warn it costs a line in
// a listing, while every agent and reviewer still sees what was found.
const DefaultMode = Warn

func parseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case Off, Warn, Block:
		return m, nil
	}
	return "", fmt.Errorf("scan mode %q: want off, warn or block", s)
}

// Policy is each library's mode: a default, and overrides for the
// organization's library (shared), every team's (teams), every user's
// (users) and one team's (team:ID). Its text form, the flag's value, is
// "MODE[,KIND=MODE...]", e.g. "warn,shared=block,team:security=block".
type Policy struct {
	Default, Shared, Teams, Users Mode
	Team                          map[string]Mode
}

// DefaultPolicy is every library at DefaultMode.
func DefaultPolicy() Policy { return Policy{Default: DefaultMode} }

// For is the mode of library l.
func (p Policy) For(l layout.LibraryRef) Mode {
	var m Mode
	switch {
	case l.Shared:
		m = p.Shared
	case l.Team != "":
		if m = p.Team[l.Team]; m == "" {
			m = p.Teams
		}
	default:
		m = p.Users
	}
	if m == "" {
		m = p.Default
	}
	if m == "" {
		m = DefaultMode
	}
	return m
}

// Any reports whether some library scans.
func (p Policy) Any() bool {
	ms := []Mode{p.For(layout.LibraryRef{Shared: true}), p.For(layout.LibraryRef{Team: "\x00"}), p.For(layout.LibraryRef{User: "u"})}
	ms = slices.AppendSeq(ms, maps.Values(p.Team))
	return slices.ContainsFunc(ms, func(m Mode) bool { return m != Off })
}

// String is the flag's value.
func (p *Policy) String() string {
	if p == nil {
		return string(DefaultMode)
	}
	parts := []string{string(p.Default)}
	if p.Default == "" {
		parts[0] = string(DefaultMode)
	}
	for _, kv := range [][2]string{{"shared", string(p.Shared)}, {"teams", string(p.Teams)}, {"users", string(p.Users)}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	for _, t := range slices.Sorted(maps.Keys(p.Team)) {
		parts = append(parts, "team:"+t+"="+string(p.Team[t]))
	}
	return strings.Join(parts, ",")
}

// Set parses the flag's value; it replaces the whole policy.
func (p *Policy) Set(s string) error {
	var out Policy
	for i, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			if i != 0 {
				return fmt.Errorf("scan policy %q: only the first item is a bare mode; the others are KIND=MODE", s)
			}
			m, err := parseMode(k)
			if err != nil {
				return err
			}
			out.Default = m
			continue
		}
		m, err := parseMode(v)
		if err != nil {
			return err
		}
		switch k = strings.TrimSpace(k); {
		case k == "shared" || k == "organization":
			out.Shared = m
		case k == "teams":
			out.Teams = m
		case k == "users":
			out.Users = m
		case strings.HasPrefix(k, "team:"):
			id := strings.TrimPrefix(k, "team:")
			if err := (layout.LibraryRef{Team: id}).Validate(); err != nil {
				return fmt.Errorf("scan policy %q: %w", s, err)
			}
			if out.Team == nil {
				out.Team = map[string]Mode{}
			}
			out.Team[id] = m
		default:
			return fmt.Errorf("scan policy %q: unknown library kind %q: want shared, teams, users or team:ID", s, k)
		}
	}
	if out.Default == "" {
		out.Default = DefaultMode
	}
	*p = out
	return nil
}
