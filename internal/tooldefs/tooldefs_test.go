package tooldefs_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"testing"

	"github.com/skillsvc/skillsvc/internal/tooldefs"
)

// Every tool is well formed for each format the definition is rendered to:
// MCP wants an object schema, and Anthropic, OpenAI and Gemini take names
// of letters, digits, _ and - up to 64 characters.
func TestDefinitions(t *testing.T) {
	name := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	var seen []string
	for _, tool := range tooldefs.All() {
		t.Run(tool.Name, func(t *testing.T) {
			if !name.MatchString(tool.Name) || slices.Contains(seen, tool.Name) {
				t.Errorf("name %q is not a valid tool name or is not unique", tool.Name)
			}
			seen = append(seen, tool.Name)
			if tool.Description == "" {
				t.Error("no description")
			}
			var schema struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Type != "object" {
				t.Fatalf("input schema is not an object schema (%v): %s", err, tool.InputSchema)
			}
			for p, s := range schema.Properties {
				var prop struct {
					Description string          `json:"description"`
					Type        json.RawMessage `json:"type"`
				}
				if json.Unmarshal(s, &prop) != nil || prop.Description == "" {
					t.Errorf("property %s has no description", p)
				}
				// Strict providers (OpenAI's strict mode, Gemini) refuse a
				// union of types: one type per property.
				var typ string
				if json.Unmarshal(prop.Type, &typ) != nil {
					t.Errorf("property %s: type %s is not one type", p, prop.Type)
				}
			}
			for _, r := range schema.Required {
				if _, ok := schema.Properties[r]; !ok {
					t.Errorf("required %s is not a property", r)
				}
			}
			// Hosts ask the user before a call by these hints, reading a
			// missing destructiveHint or openWorldHint as true.
			if tool.Served() && !tool.Annotations.Complete() {
				t.Errorf("annotations %+v: every server tool has a title and all four hints", tool.Annotations)
			}
			if a := tool.Annotations; a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint && *a.DestructiveHint {
				t.Error("a read-only tool cannot be destructive")
			}
			if tool.RunsIn != "" && tool.RunsIn != "client" {
				t.Errorf("runsIn %q: want \"client\" or nothing", tool.RunsIn)
			}
			if tooldefs.Lookup(tool.Name).Description != tool.Description {
				t.Error("Lookup returns another tool")
			}
		})
	}
	if len(seen) == 0 {
		t.Fatal("no tools")
	}
}

// The server offers every tool but those that run in the client.
func TestServer(t *testing.T) {
	var served, client []string
	for _, tool := range tooldefs.All() {
		if tool.Served() {
			served = append(served, tool.Name)
		} else {
			client = append(client, tool.Name)
		}
	}
	var got []string
	for _, tool := range tooldefs.Server() {
		got = append(got, tool.Name)
	}
	if !slices.Equal(got, served) {
		t.Errorf("Server() = %v, want %v", got, served)
	}
	if !slices.Equal(client, []string{"run_skill_script", "use_skill"}) {
		t.Errorf("client-side tools %v, want run_skill_script and use_skill", client)
	}
}
