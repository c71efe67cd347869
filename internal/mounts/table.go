package mounts

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Mount attaches a key prefix, rendered per caller from Template, at a
// top-level virtual directory.
type Mount struct {
	Path     string // "/workspace": one segment, spelled like an ID
	Template string // "{user}/threads/{thread}/": see New for the rules
	Mode     Mode
}

// Resolved is where a virtual path lives in the object store.
type Resolved struct {
	Mount  Mount
	Prefix string // the rendered Template, e.g. "alice/threads/t1/"
	Rel    string // path inside the mount: "" for its root, else "a/b.md"
	Key    string // Prefix + Rel
}

// Table is an immutable mount table, safe for concurrent use.
type Table struct {
	entries  []entry         // sorted by Path
	byName   map[string]int  // Path without its "/" -> index in entries
	reserved [numKinds]idSet // IDs that would make two mounts overlap
}

type entry struct {
	Mount
	segs        []segment
	needsTicket bool
}

type idSet map[string]bool

// kind is what a template segment is: a literal or one of the placeholders.
type kind uint8

const (
	literal kind = iota
	user
	thread
	ticket
	numKinds
)

var kindNames = [numKinds]string{user: "user", thread: "thread", ticket: "ticket"}

type segment struct {
	kind kind
	lit  string // when kind == literal
}

func (id Identity) field(k kind) string {
	switch k {
	case user:
		return id.User
	case thread:
		return id.Thread
	case ticket:
		return id.Ticket
	}
	return ""
}

var defaultTable = mustNew([]Mount{
	{Path: "/workspace", Template: "{user}/threads/{thread}/", Mode: ReadWrite},
	{Path: "/ticket", Template: "{user}/tickets/{ticket}/", Mode: ReadWrite},
	{Path: "/skills", Template: "{user}/skills/", Mode: ReadOnly},
})

// Default returns the standard table: /workspace and /ticket are read-write
// per thread and per ticket, /skills is the user's read-only skill library.
func Default() *Table { return defaultTable }

func mustNew(ms []Mount) *Table {
	t, err := New(ms)
	if err != nil {
		panic(err)
	}
	return t
}

// New validates ms and builds a table from it.
//
// A Path is "/" plus one segment spelled like an ID. A Template is a sequence
// of segments, each followed by "/" (so it ends in "/" and has no leading "/"),
// where each segment is either exactly one of {user}, {thread}, {ticket}, or a
// literal of letters, digits, '.', '_' and '-' other than "." and "..". No two
// mounts may overlap; see the package documentation.
func New(ms []Mount) (*Table, error) {
	if len(ms) == 0 {
		return nil, fmt.Errorf("%w: no mounts", ErrInvalidTable)
	}
	t := &Table{byName: make(map[string]int, len(ms))}
	for _, m := range ms {
		if !strings.HasPrefix(m.Path, "/") || !isID(m.Path[1:]) {
			return nil, fmt.Errorf("%w: mount path %s must be \"/\" and one segment that is a valid id", ErrInvalidTable, quote(m.Path))
		}
		if m.Mode != ReadOnly && m.Mode != ReadWrite {
			return nil, fmt.Errorf("%w: mount %s has unknown mode %v", ErrInvalidTable, quote(m.Path), m.Mode)
		}
		segs, err := parseTemplate(m.Template)
		if err != nil {
			return nil, fmt.Errorf("%w: mount %s: template %s %v", ErrInvalidTable, quote(m.Path), quote(m.Template), err)
		}
		if _, dup := t.byName[m.Path[1:]]; dup {
			return nil, fmt.Errorf("%w: mount %s appears twice", ErrInvalidTable, quote(m.Path))
		}
		t.byName[m.Path[1:]] = -1
		e := entry{Mount: m, segs: segs}
		for _, s := range segs {
			e.needsTicket = e.needsTicket || s.kind == ticket
		}
		t.entries = append(t.entries, e)
	}
	slices.SortFunc(t.entries, func(a, b entry) int { return cmp.Compare(a.Path, b.Path) })
	for i, e := range t.entries {
		t.byName[e.Path[1:]] = i
	}
	for i, a := range t.entries {
		for _, b := range t.entries[i+1:] {
			could, needs := overlap(a.segs, b.segs)
			if !could {
				continue
			}
			if len(needs) == 0 {
				return nil, fmt.Errorf("%w: mounts %q and %q overlap: templates %q and %q can render to the same or nested prefixes",
					ErrInvalidTable, a.Path, b.Path, a.Template, b.Template)
			}
			// The overlap needs every pair in needs to hold; forbidding the
			// first one is enough to rule it out for all callers.
			k, lit := needs[0].kind, needs[0].lit
			if t.reserved[k] == nil {
				t.reserved[k] = idSet{}
			}
			t.reserved[k][lit] = true
		}
	}
	return t, nil
}

// parseTemplate splits a template into segments. A placeholder must fill its
// whole segment: with "t-{thread}" the overlap check would have to reason
// about substrings, and one ID could then render into another mount's space.
func parseTemplate(tmpl string) ([]segment, error) {
	switch {
	case tmpl == "":
		return nil, fmt.Errorf("is empty")
	case len(tmpl) > maxKeyLen:
		return nil, fmt.Errorf("is longer than %d bytes", maxKeyLen)
	case !strings.HasSuffix(tmpl, "/"):
		return nil, fmt.Errorf(`must end with "/"`)
	case strings.HasPrefix(tmpl, "/"):
		return nil, fmt.Errorf(`must not start with "/"`)
	}
	var segs []segment
	for s := range strings.SplitSeq(strings.TrimSuffix(tmpl, "/"), "/") {
		switch {
		case s == "":
			return nil, fmt.Errorf("has an empty segment")
		case len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' && !strings.ContainsAny(s[1:len(s)-1], "{}"):
			k := slices.Index(kindNames[:], s[1:len(s)-1])
			if k <= int(literal) {
				return nil, fmt.Errorf("has unknown placeholder %s", quote(s))
			}
			segs = append(segs, segment{kind: kind(k)})
		case strings.ContainsAny(s, "{}"):
			return nil, fmt.Errorf("has segment %s: a placeholder must be a whole segment, so that mounts can be checked for overlap segment by segment", quote(s))
		case s == "." || s == "..":
			return nil, fmt.Errorf("has a %q segment", s)
		case !literalRE.MatchString(s):
			return nil, fmt.Errorf("has segment %s: literals may contain only letters, digits, '.', '_' and '-'", quote(s))
		default:
			segs = append(segs, segment{kind: literal, lit: s})
		}
	}
	return segs, nil
}

// overlap reports whether templates a and b could render, for some callers,
// to prefixes where one is a prefix of the other. Placeholders are treated as
// independent (the callers may differ), so the answer is conservative. needs
// lists, in segment order, the placeholders that would have to equal a
// literal for the overlap to happen.
func overlap(a, b []segment) (could bool, needs []segment) {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		if x.kind != literal && y.kind == literal {
			x, y = y, x
		}
		switch {
		case x.kind == literal && y.kind == literal:
			if x.lit != y.lit {
				return false, nil
			}
		case x.kind == literal:
			// A placeholder renders to an ID, so it can never equal
			// "_shared" or any other literal that is not one.
			if !isID(x.lit) {
				return false, nil
			}
			needs = append(needs, segment{kind: y.kind, lit: x.lit})
		}
	}
	return true, needs
}

// Parse builds a table from a comma-separated spec of path=template[:mode]
// entries, as in "/workspace={user}/threads/{thread}/:rw,/skills={user}/skills/:ro".
// The mode is "ro" or "rw"; when omitted it is "rw".
func Parse(spec string) (*Table, error) {
	var ms []Mount
	for ent := range strings.SplitSeq(spec, ",") {
		ent = strings.TrimSpace(ent)
		p, rest, ok := strings.Cut(ent, "=")
		if !ok {
			return nil, fmt.Errorf("%w: entry %s is not path=template[:mode]", ErrInvalidTable, quote(ent))
		}
		m := Mount{Path: p, Template: rest, Mode: ReadWrite}
		// Templates cannot contain ':', so the last one starts the mode.
		if i := strings.LastIndexByte(rest, ':'); i >= 0 {
			m.Template = rest[:i]
			switch mode := rest[i+1:]; mode {
			case "ro":
				m.Mode = ReadOnly
			case "rw":
				m.Mode = ReadWrite
			default:
				return nil, fmt.Errorf("%w: entry %s has mode %s, want \"ro\" or \"rw\"", ErrInvalidTable, quote(ent), quote(mode))
			}
		}
		ms = append(ms, m)
	}
	return New(ms)
}

// String returns the table in the spec format that Parse reads, sorted by
// Path and with every mode spelled out.
func (t *Table) String() string {
	var b strings.Builder
	for i, e := range t.entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e.Path + "=" + e.Template + ":" + e.Mode.String())
	}
	return b.String()
}

// Caller is an Identity that a Table has validated. Only Table.Identify
// makes one (parse, don't re-validate), so the layers below the edge take a
// Caller and never check it again. The zero Caller is no one: Resolve
// refuses it and Mounts lists nothing for it, as for a Caller another
// table made (the reserved IDs are the table's).
type Caller struct {
	id    Identity
	table *Table
}

// User, Thread and Ticket are the caller's IDs; Ticket may be "".
func (c Caller) User() string   { return c.id.User }
func (c Caller) Thread() string { return c.id.Thread }
func (c Caller) Ticket() string { return c.id.Ticket }

// Teams returns the caller's team IDs, sorted, without duplicates.
func (c Caller) Teams() []string {
	if c.id.Teams == "" {
		return nil
	}
	return strings.Split(c.id.Teams, ",")
}

// Identity returns the validated IDs.
func (c Caller) Identity() Identity { return c.id }

// Scope and Harness are the caller's chosen scope and declared harness
// ("" for none).
func (c Caller) Scope() string   { return c.id.Scope }
func (c Caller) Harness() string { return c.id.Harness }

// WithScope returns the caller viewing the scope named (all skills for
// ""), validated as Identify validates it.
func (c Caller) WithScope(scope string) (Caller, error) {
	if scope != "" {
		if err := ValidateID("scope", scope); err != nil {
			return Caller{}, err
		}
	}
	c.id.Scope = scope
	return c, nil
}

// Identify validates id for this table and returns it as a Caller: User and
// Thread are required, Ticket is optional, and none may be an ID the table
// reserves; Teams (optional) is ParseTeams' list, kept in its canonical
// spelling.
func (t *Table) Identify(id Identity) (Caller, error) {
	if err := ValidateID("user", id.User); err != nil {
		return Caller{}, err
	}
	if err := ValidateID("thread", id.Thread); err != nil {
		return Caller{}, err
	}
	if id.Ticket != "" {
		if err := ValidateID("ticket", id.Ticket); err != nil {
			return Caller{}, err
		}
	}
	for k := user; k < numKinds; k++ {
		if v := id.field(k); v != "" && t.reserved[k][v] {
			return Caller{}, fmt.Errorf("%w: %s id %s is reserved by the mount table", ErrInvalidID, kindNames[k], quote(v))
		}
	}
	teams, err := ParseTeams(id.Teams)
	if err != nil {
		return Caller{}, err
	}
	id.Teams = strings.Join(teams, ",")
	if id.Scope != "" {
		if err := ValidateID("scope", id.Scope); err != nil {
			return Caller{}, err
		}
	}
	if id.Harness != "" {
		if err := ValidateID("harness", id.Harness); err != nil {
			return Caller{}, err
		}
	}
	return Caller{id: id, table: t}, nil
}

// MustIdentify is Identify for an identity known to be valid (tests, fixed
// identities); it panics otherwise.
func (t *Table) MustIdentify(id Identity) Caller {
	c, err := t.Identify(id)
	if err != nil {
		panic(err)
	}
	return c
}

// Identified reports whether this table's Identify made c: a comparison,
// not a second validation. It refuses the zero Caller.
func (t *Table) Identified(c Caller) error {
	if c.table != t {
		return fmt.Errorf("%w: the caller was not identified by this mount table", ErrInvalidID)
	}
	return nil
}

// Mounts lists the mounts available to c, sorted by Path. Mounts that need
// a ticket are left out when c has none. It returns nil for a Caller this
// table did not identify, so such a caller sees nothing.
func (t *Table) Mounts(c Caller) []Mount {
	if t.Identified(c) != nil {
		return nil
	}
	var out []Mount
	for _, e := range t.entries {
		if e.needsTicket && c.id.Ticket == "" {
			continue
		}
		out = append(out, e.Mount)
	}
	return out
}

// Resolve maps the virtual path vpath, for the caller c, to its object key.
// vpath must pass CleanPath and lie in one of Mounts(c); the mount root
// itself resolves with Rel "" and Key == Prefix. "/" is above every mount and
// resolves to an error wrapping ErrNoMount; callers list Mounts for it.
func (t *Table) Resolve(c Caller, vpath string) (Resolved, error) {
	if err := t.Identified(c); err != nil {
		return Resolved{}, err
	}
	if err := CleanPath(vpath); err != nil {
		return Resolved{}, err
	}
	name, rel, _ := strings.Cut(vpath[1:], "/")
	i, ok := t.byName[name]
	if !ok {
		return Resolved{}, fmt.Errorf("%w at %s", ErrNoMount, quote(vpath))
	}
	e := t.entries[i]
	if e.needsTicket && c.id.Ticket == "" {
		return Resolved{}, fmt.Errorf("%w at %s: the call has no ticket", ErrNoMount, quote(vpath))
	}
	prefix := render(e.segs, c.id)
	key := prefix + rel
	if len(key) > maxKeyLen {
		return Resolved{}, pathErr(vpath, fmt.Sprintf("is too long: its object key would exceed %d bytes", maxKeyLen))
	}
	return Resolved{Mount: e.Mount, Prefix: prefix, Rel: rel, Key: key}, nil
}

func render(segs []segment, id Identity) string {
	var b strings.Builder
	for _, s := range segs {
		if s.kind == literal {
			b.WriteString(s.lit)
		} else {
			b.WriteString(id.field(s.kind))
		}
		b.WriteByte('/')
	}
	return b.String()
}

// Disjoint checks that keys under prefix, a template like the mounts' (for
// example "{user}/settings/" or "_shared/skills/"), can never be reached
// through any mount of the table, for any caller. An overlap that needs an
// ID the table already reserves cannot happen; one that needs any other ID
// is an error, since the table does not reserve it.
func (t *Table) Disjoint(prefix string) error {
	segs, err := parseTemplate(prefix)
	if err != nil {
		return err
	}
	for _, e := range t.entries {
		could, needs := overlap(segs, e.segs)
		if could && !slices.ContainsFunc(needs, func(n segment) bool { return t.reserved[n.kind][n.lit] }) {
			return fmt.Errorf("%w: keys under %s could be reached through the mount %s (%s)", ErrInvalidTable, prefix, e.Path, e.Template)
		}
	}
	return nil
}

// Lookup returns the mount at path ("/skills"), whoever calls.
func (t *Table) Lookup(path string) (Mount, bool) {
	i, ok := t.byName[strings.TrimPrefix(path, "/")]
	if !ok || !strings.HasPrefix(path, "/") {
		return Mount{}, false
	}
	return t.entries[i].Mount, true
}
