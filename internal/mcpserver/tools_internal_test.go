package mcpserver

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsvc/skillsvc/internal/tooldefs"
)

// Each tool's argument type decodes exactly what its defined schema
// accepts: the schema the SDK infers from the type (the one it used before
// the definition existed) is the defined one without the descriptions. A
// changed field or a changed schema fails here rather than in a model's
// call.
func TestArgumentTypesMatchDefinition(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "inferred"}, nil)
	inferFrom[listSkillsIn](srv, "list_skills")
	inferFrom[loadSkillIn](srv, "load_skill")
	inferFrom[readSkillFileIn](srv, "read_skill_file")
	inferFrom[searchSkillsIn](srv, "search_skills")
	inferFrom[pathIn](srv, "ls")
	inferFrom[readFileIn](srv, "read_file")
	inferFrom[writeFileIn](srv, "write_file")
	inferFrom[editFileIn](srv, "edit_file")
	inferFrom[globIn](srv, "glob")
	inferFrom[grepIn](srv, "grep")

	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	listed, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	inferred := map[string]any{}
	for _, tl := range listed.Tools {
		inferred[tl.Name] = tl.InputSchema
	}

	for _, def := range tooldefs.Server() {
		t.Run(def.Name, func(t *testing.T) {
			got, ok := inferred[def.Name]
			if !ok {
				t.Fatal("no argument type for this tool in the test")
			}
			var want map[string]any
			if err := json.Unmarshal(def.InputSchema, &want); err != nil {
				t.Fatal(err)
			}
			props, _ := want["properties"].(map[string]any)
			for _, p := range props {
				delete(p.(map[string]any), "description")
			}
			var gotSchema map[string]any
			b, _ := json.Marshal(got)
			json.Unmarshal(b, &gotSchema)
			sortRequired(gotSchema)
			sortRequired(want)
			nullableAsPresence(gotSchema, want)
			if !reflect.DeepEqual(gotSchema, want) {
				w, _ := json.Marshal(want)
				t.Errorf("argument type's schema\n got %s\nwant %s (the definition without descriptions)", b, w)
			}
		})
	}
	if len(inferred) != len(tooldefs.Server()) {
		t.Errorf("%d argument types, %d defined tools", len(inferred), len(tooldefs.Server()))
	}
}

// sortRequired puts a schema's required names in order: the order carries
// no meaning, and the inferred one is the struct's field order.
func sortRequired(schema map[string]any) {
	if r, ok := schema["required"].([]any); ok {
		slices.SortFunc(r, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	}
}

// nullableAsPresence takes an inferred ["null", T] for the defined T: a
// pointer field marks whether the argument was given (a category of ""
// is not no category), and the definition keeps one type per property,
// which strict providers require; null is refused before decoding.
func nullableAsPresence(inferred, defined map[string]any) {
	ip, _ := inferred["properties"].(map[string]any)
	dp, _ := defined["properties"].(map[string]any)
	for name, p := range ip {
		got, _ := p.(map[string]any)
		want, _ := dp[name].(map[string]any)
		types, _ := got["type"].([]any)
		if len(types) == 2 && types[0] == "null" && want != nil && types[1] == want["type"] {
			got["type"] = want["type"]
		}
	}
}

func inferFrom[In any](srv *mcp.Server, name string) {
	mcp.AddTool(srv, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	})
}

// The filesystem's refusals name gRPC calls; the tools' errors name none.
func TestModelFacingErrors(t *testing.T) {
	for _, msg := range []string{
		`binary file: "/skills/a/logo.png" is not UTF-8 text; use Download`,
		`"/workspace/big.txt" is 99 bytes, text reads load at most 10; use Download`,
		`content is 99 bytes, Write stores at most 10; use Upload`,
		`content is not UTF-8; use Upload for binary files`,
	} {
		got := modelFacing(msg)
		for _, call := range []string{"Download", "Upload", "Write "} {
			if strings.Contains(got, call) {
				t.Errorf("%q → %q names %s", msg, got, call)
			}
		}
	}
}
