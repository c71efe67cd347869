// Package tooldefs is the one definition of the tools skillsvc offers
// agents: each tool's name, description and JSON Schema for its input, in
// tools.json. The MCP server builds its tools from it, and make generate
// copies the file into the Python and TypeScript clients, whose SkillTools
// render the skill tools from it, so the three cannot drift apart.
package tooldefs

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

//go:embed tools.json
var file []byte

// Tool is one tool as tools.json defines it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// RunsIn is "client" for a tool that runs where the agent runs (a
	// skill's script or code): skillsvc stores skills and never runs them,
	// so the server does not offer it. Empty for the server's tools.
	RunsIn string `json:"runsIn,omitempty"`
	// Annotations are the MCP hints hosts decide by whether to ask the
	// user before a call; every server tool has all five. The clients'
	// SkillTools render only name, description and input schema.
	Annotations *Annotations `json:"annotations,omitempty"`
}

// Annotations are a tool's MCP annotations (ToolAnnotations), each hint
// written out, since hosts read a missing destructiveHint and
// openWorldHint as true.
type Annotations struct {
	Title           string `json:"title"`
	ReadOnlyHint    *bool  `json:"readOnlyHint"`
	DestructiveHint *bool  `json:"destructiveHint"`
	IdempotentHint  *bool  `json:"idempotentHint"`
	OpenWorldHint   *bool  `json:"openWorldHint"`
}

// Complete reports whether every hint and the title are set.
func (a *Annotations) Complete() bool {
	return a != nil && a.Title != "" && a.ReadOnlyHint != nil && a.DestructiveHint != nil && a.IdempotentHint != nil && a.OpenWorldHint != nil
}

// Served reports whether the server offers the tool (over MCP).
func (t Tool) Served() bool { return t.RunsIn == "" }

var parse = sync.OnceValues(func() ([]Tool, error) {
	var f struct {
		Tools []Tool `json:"tools"`
	}
	if err := json.Unmarshal(file, &f); err != nil {
		return nil, fmt.Errorf("tooldefs: tools.json: %w", err)
	}
	return f.Tools, nil
})

// All returns every tool, in the file's order. It panics if tools.json is
// malformed, which the package's tests rule out.
func All() []Tool {
	tools, err := parse()
	if err != nil {
		panic(err)
	}
	return tools
}

// Server returns the tools the server offers, in the file's order.
func Server() []Tool {
	var out []Tool
	for _, t := range All() {
		if t.Served() {
			out = append(out, t)
		}
	}
	return out
}

// Lookup returns the tool called name; it panics if there is none, since
// every name a caller asks for is fixed in its code.
func Lookup(name string) Tool {
	for _, t := range All() {
		if t.Name == name {
			return t
		}
	}
	panic(fmt.Sprintf("tooldefs: no tool %q in tools.json", name))
}
