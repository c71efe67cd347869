package mcpserver_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsvc/skillsvc/internal/mcpserver"
)

type indexDoc struct {
	Schema string `json:"$schema"`
	Skills []struct{ Name, Type, Description, URL string }
}

func readIndex(t *testing.T, s *mcp.ClientSession) (indexDoc, *mcp.ReadResourceResult) {
	t.Helper()
	r, err := s.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://index.json"})
	if err != nil {
		t.Fatal(err)
	}
	var doc indexDoc
	if err := json.Unmarshal([]byte(r.Contents[0].Text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc, r
}

// skill://index.json holds every skill skills/list serves, across its
// pages, in its order, with the listing's library digest; and a document
// that would pass --mcp.max-resource-bytes is cut at a whole entry.
func TestSkillIndex(t *testing.T) {
	for name, sopts := range map[string]*mcp.ClientSessionOptions{"2025-11-25": sessions, "2026-07-28": nil} {
		t.Run(name, func(t *testing.T) {
			e := start(t, library().Bucket(t), func(c *mcpserver.Config) { c.SkillsPageSize = 1 })
			s := e.connectVersion(identity("alice", "t1"), nil, sopts)
			doc, r := readIndex(t, s)
			var got, want []string
			for _, sk := range doc.Skills {
				if sk.Type != "skill-md" || sk.Name == "" || sk.Description == "" {
					t.Errorf("entry %+v", sk)
				}
				got = append(got, sk.URL)
			}
			for _, sk := range listAll(t, s) {
				want = append(want, sk.URI)
			}
			if !slices.Equal(got, want) || len(want) != 3 {
				t.Errorf("index %v, skills/list %v", got, want)
			}
			list, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), s, "skills/list", &listParams{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Meta["dev.skillsvc/libraryDigest"] != list.Meta["dev.skillsvc/libraryDigest"] || r.Meta["dev.skillsvc/libraryDigest"] == nil {
				t.Errorf("index digest %v, listing's %v", r.Meta, list.Meta)
			}
		})
	}
	t.Run("cut", func(t *testing.T) {
		e := start(t, library().Bucket(t), func(c *mcpserver.Config) { c.MaxResourceBytes = 300 })
		doc, r := readIndex(t, e.connect(identity("alice", "t1"), nil))
		if n := len(doc.Skills); n == 0 || n >= 3 || int64(len(r.Contents[0].Text)) > 300 {
			t.Errorf("%d entries in %d bytes, want some but not all within 300", n, len(r.Contents[0].Text))
		}
	})
}
