// Package usage counts who uses which skill: activations, file reads and
// searches, recorded at each surface without slowing the call, aggregated
// per library and read back by the library's owners.
package usage

import "context"

// Kind is what a use was.
type Kind string

const (
	// Activation: GetSkill, RenderSkill, load_skill, skills/get, or a
	// SKILL.md read through /skills or resources/read.
	Activation Kind = "activation"
	// FileRead: a read of one of the skill's other files.
	FileRead Kind = "file_read"
	// Search: SearchSkills, search_skills, or a query-aware prompt block.
	Search Kind = "search"
)

// Event is one use. It never carries file contents.
type Event struct {
	Kind Kind
	// Skill is the skill's name as the caller's view serves it; "" for a
	// search.
	Skill string
	// Layer is the skill's layer as skillview spells it: the user's own,
	// a team's or the organization's (shared) library.
	Layer string
	// Version is the published version id when the skill was served from
	// a version, else its manifest digest.
	Version string
	// File is the path relative to the skill folder, for a FileRead.
	File    string
	User    string
	Teams   []string
	Thread  string
	Surface string // "grpc", "json", "mcp" or "vfs"
	// Query is a search's query as given: the recorder normalizes and
	// bounds it.
	Query string
	// Results are the names a search returned, in order: the recorder
	// keeps the first ten.
	Results []string
}

// Recorder takes events on the hot path: it never blocks, never fails and
// never slows the call.
type Recorder interface {
	Record(ctx context.Context, e Event)
}

// Nop records nothing: tests, and deployments with usage off.
var Nop Recorder = nop{}

type nop struct{}

func (nop) Record(context.Context, Event) {}
