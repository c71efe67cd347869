package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsvc/skillsvc/internal/skillview"
)

// skill://index.json is the skills extension's discovery document, the
// Agent Skills discovery index bound to MCP (SEP-2640): one skill-md entry
// per skill skills/list serves, whose url is the skill's SKILL.md resource.
// Hosts that discover skills by it (Microsoft Agent Framework's
// MCPSkillsSource) never call skills/list. It is built from the same
// catalog pages as skills/list, so it is scoped and filtered the same way.

const (
	indexURI = skillScheme + "index.json"
	// indexSchema is the discovery schema the index follows; the extension
	// binds it to MCP with url a resource URI and no digest (resources
	// carry theirs in skills/get).
	indexSchema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
	indexType   = "skill-md"
)

var indexResource = &mcp.Resource{
	URI:         indexURI,
	Name:        "skill-index",
	Title:       "Skills index",
	Description: "The skills served over this extension, as the Agent Skills discovery index: name, type, description and the SKILL.md resource of each.",
	MIMEType:    "application/json",
}

type indexEntry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	URL         string `json:"url"`
}

type indexDocument struct {
	Schema string        `json:"$schema"`
	Skills []*indexEntry `json:"skills"`
}

func (s *identityServer) indexEntry(sk *skillview.Skill) *indexEntry {
	var fm struct{ Name, Description string }
	json.Unmarshal(sk.JSON, &fm) // served skills have both, as text
	return &indexEntry{Name: fm.Name, Type: indexType, Description: fm.Description, URL: s.uriOf(sk.Path + "/" + skillFileName)}
}

// readIndex answers resources/read of skill://index.json: every page of
// the caller's served skills, as long as the document stays within
// --mcp.max-resource-bytes (the rest are left out: a host that needs
// them all pages skills/list).
func (s *identityServer) readIndex(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	doc := indexDocument{Schema: indexSchema, Skills: []*indexEntry{}}
	var (
		token  string
		digest mcp.ResultBase
		size   = int64(len(indexSchema)) + 32
	)
	for first := true; first || token != ""; first = false {
		if err := ctx.Err(); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		entries, page, err := servedPage(ctx, s, token, s.indexEntry)
		if err != nil {
			return nil, err
		}
		if first {
			digest = libraryDigest(page)
		}
		for _, e := range entries {
			b, _ := json.Marshal(e)
			if size += int64(len(b)) + 1; size > s.h.cfg.MaxResourceBytes {
				s.h.log.Warn("mcp: skill://index.json cut at --mcp.max-resource-bytes", "identity", s.key, "skills", len(doc.Skills))
				return s.indexResult(doc, digest)
			}
			doc.Skills = append(doc.Skills, e)
		}
		token = page.NextPageToken
	}
	return s.indexResult(doc, digest)
}

func (s *identityServer) indexResult(doc indexDocument, digest mcp.ResultBase) (*mcp.ReadResourceResult, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encoding the index: %w", err)
	}
	return &mcp.ReadResourceResult{
		Meta:      digest.Meta,
		Cacheable: s.cacheable(),
		Contents:  []*mcp.ResourceContents{{URI: indexURI, MIMEType: indexResource.MIMEType, Text: buf.String()}},
	}, nil
}
