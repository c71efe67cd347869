package skillview

import (
	"time"

	"github.com/skillsvc/skillsvc/internal/pagetoken"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Skill is a skill's summary: where it is, its frontmatter and problems.
type Skill struct {
	// Path is the skill folder under the mount, e.g. "/skills/docs/pdf".
	Path     string
	Dir      string // "docs/pdf"
	Folder   string // "pdf"; Name is what the skill is addressed by
	Category string // "docs", or "" for a flat skill
	Layer    string // LayerUser, LayerShared, or LayerTeam and the team's ID
	ETag     string // of SKILL.md
	Disabled bool
	// Manifest lists the skill's files by digest; nil for a name no skill
	// has (SetEnabled). Shared with every caller: read-only.
	Manifest *Manifest
	skillmd.Frontmatter
	skillmd.Problems
	// Written is what the MCP skills extension checks of the frontmatter
	// as written (skillmd.WrittenOf); zero when not checked yet.
	Written skillmd.Written
}

// ExtensionProblem is why the MCP skills extension does not serve the
// skill, or "" when it does (skillmd.ExtensionProblem).
func (s Skill) ExtensionProblem() string {
	return skillmd.ExtensionProblem(s.Name, s.Frontmatter, s.Written, s.Folder, s.Manifest == nil || s.Manifest.OverLimits)
}

// Location is the virtual path of the skill's SKILL.md.
func (s Skill) Location() string { return Location(s.Path) }

// ManifestDigest is the skill's content identity (Manifest.Digest, made
// once with the manifest): "" for a name no skill has, and for a skill over
// the limits, whose files are not hashed.
func (s Skill) ManifestDigest() string {
	if s.Manifest == nil {
		return ""
	}
	return s.Manifest.Digest
}

// ListOptions filter a listing.
type ListOptions struct {
	Category        string
	FilterCategory  bool // Category "" then means flat skills only
	IncludeInvalid  bool
	IncludeDisabled bool
	// ServedOverMCP keeps only the skills the MCP skills extension serves
	// (skillmd.ExtensionProblem), applied before a page is cut so every
	// page is full.
	ServedOverMCP bool
}

// Page is one page of Skills.
type Page struct {
	Skills        []Skill
	NextPageToken string
	// LibraryDigest is "sha256:<hex>" of the caller's library as served
	// (every served skill's path, name, description and manifest, and the
	// skills the user disabled): the same on every page and replica for the
	// same content, whatever the filters.
	LibraryDigest string
	// TokenScope is what the page token is bound to (the listing options the
	// page was cut with): Truncate makes the next page's token with it.
	TokenScope string
}

// Truncate keeps the first n skills of the page, when n is less than it
// holds (and positive): the next page then starts after them. A caller
// that bounds the encoded size of a reply ends the page early with it.
func (p Page) Truncate(n int) Page {
	if n <= 0 || n >= len(p.Skills) {
		return p
	}
	return Page{Skills: p.Skills[:n], NextPageToken: pagetoken.Encode(p.TokenScope, p.Skills[n-1].Path), LibraryDigest: p.LibraryDigest, TokenScope: p.TokenScope}
}

// Category is a category and how many skills it holds.
type Category struct {
	Name  string
	Count int
}

// Block is a prompt block and the digest of the library it lists (as
// Page.LibraryDigest).
type Block struct {
	skillmd.Block
	LibraryDigest string
	// Offered are the skills the block included, in block order.
	Offered []skillmd.Offered
}

// File is one file of a skill folder.
type File struct {
	Path   string // relative to the skill folder, e.g. "scripts/run.py"
	Size   int64
	Binary bool
}

// Detail is everything GetSkill returns.
type Detail struct {
	Skill
	Raw   string // SKILL.md as stored
	Body  string // SKILL.md without its frontmatter
	Files []File // the other files, at most MaxListedFiles
	// FilesOmitted counts the files beyond MaxListedFiles.
	FilesOmitted int
}

// RenderOptions shape Render's text.
type RenderOptions struct {
	// Arguments replace $ARGUMENTS in the body.
	Arguments string
	// BaseDir is the base directory the text names instead of the skill's
	// path under the mount: where the caller unpacked the skill's export.
	BaseDir string
}

// ReadOptions shape ReadFile's refusals.
type ReadOptions struct {
	// DownloadTool is the caller's tool for fetching a file as is, named
	// when a file is refused as binary or too large; "" means the
	// configured default.
	DownloadTool string
}

// Scored is a search hit.
type Scored struct {
	Skill
	// Score is the search's score: comparable within one search only.
	Score float64
	// Relevance is 0–1 and comparable across searches (search.Hit), so a
	// caller can cut off weak hits.
	Relevance float64
	// Alternates are the copies of the skill collapsed into this hit
	// (near-duplicates in the caller's other layers, or in the same one),
	// nearest layer first.
	Alternates []Alternate
}

// Alternate names a copy of a skill collapsed into a search hit.
type Alternate struct {
	Path, Name, Layer string
}

// SearchOptions select what Search ranks and returns.
type SearchOptions struct {
	Query string // a task description
	Limit int32  // 0 means the configured default
	// Category limits the search to one category ("" is flat skills)
	// when FilterCategory is set.
	Category       string
	FilterCategory bool
	// MinRelevance drops hits below it, 0–1.
	MinRelevance float64
}

// Results are a search's hits, best first, and the digest of the library
// searched (as Page.LibraryDigest).
type Results struct {
	Hits          []Scored
	LibraryDigest string
}

// Competitor is a skill of a library as a search ranked it.
type Competitor struct {
	Dir, Name, Path string
	// Candidate marks the candidate itself (Compete's).
	Candidate        bool
	Score, Relevance float64
	// Alternates are the dirs of the copies collapsed into this hit
	// ("" for the candidate).
	Alternates []string
}

// Competition is how one query ranks a library's skills, a candidate
// among them.
type Competition struct {
	Query string
	// Rank is the candidate's place in Top, from 1; 0: not within it.
	Rank int
	Top  []Competitor // best first
}

// LibrarySkill is one skill folder of a single library as its index lists
// it (not merged with another library).
type LibrarySkill struct {
	Dir      string // "category/folder" or "folder"
	Folder   string
	Category string
	// Name is what the skill is listed by: its frontmatter name, or the
	// folder's.
	Name string
	// Added is when its SKILL.md was last written (a publish writes it
	// last); zero when unknown.
	Added time.Time
}
