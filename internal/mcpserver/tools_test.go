package mcpserver_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsvc/skillsvc/internal/tooldefs"
)

// The server's tools/list is the shared definition, word for word: the
// same tools (the SDK lists them by name), descriptions and input schemas.
func TestToolsMatchDefinition(t *testing.T) {
	e := start(t, library().Bucket(t), nil)
	s := e.connect(identity("alice", "t1"), nil)
	listed, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range listed.Tools {
		byName[tl.Name] = tl
	}
	defs := tooldefs.Server()
	if len(listed.Tools) != len(defs) {
		t.Errorf("tools/list has %d tools, the definition %d", len(listed.Tools), len(defs))
	}
	for _, def := range defs {
		t.Run(def.Name, func(t *testing.T) {
			got, ok := byName[def.Name]
			if !ok {
				t.Fatal("not listed")
			}
			if got.Description != def.Description {
				t.Errorf("description\n got %q\nwant %q", got.Description, def.Description)
			}
			var gotSchema, wantSchema any
			b, _ := json.Marshal(got.InputSchema)
			if err := json.Unmarshal(b, &gotSchema); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(def.InputSchema, &wantSchema); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotSchema, wantSchema) {
				t.Errorf("input schema\n got %s\nwant %s", b, def.InputSchema)
			}
		})
	}
}
