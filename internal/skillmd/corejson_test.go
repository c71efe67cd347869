package skillmd_test

import (
	"encoding/json"
	"testing"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// The frontmatter as hosts' YAML 1.2 parsers read it (JavaScript's yaml
// package with its default core schema is what the official MCP client
// compares entries with; test/mcp-host checks the same cases against it).
func TestFrontmatterJSONAsWritten(t *testing.T) {
	for _, tc := range []struct {
		yaml, want string
	}{
		{"version: 1.0", `{"version":1.0}`},
		{"build: 2", `{"build":2}`},
		{"big: 9007199254740993", `{"big":9007199254740993}`},
		{"neg: -0012", `{"neg":-12}`},
		{"plus: +7", `{"plus":7}`},
		{"oct: 0o17", `{"oct":15}`},
		{"hex: 0xFF", `{"hex":255}`},
		{"f: .5", `{"f":0.5}`},
		{"f: 1.", `{"f":1.0}`},
		{"f: -1.5e+3", `{"f":-1.5e+3}`},
		{"f: 012.50", `{"f":12.50}`},
		{"inf: .inf", `{"inf":".inf"}`},
		{"date: 2024-01-15", `{"date":"2024-01-15"}`},
		{"ts: 2024-01-15T10:00:00Z", `{"ts":"2024-01-15T10:00:00Z"}`},
		{"under: 1_000", `{"under":"1_000"}`},
		{"bin: 0b101", `{"bin":"0b101"}`},
		{"yes: yes", `{"yes":"yes"}`},
		{"t: True", `{"t":true}`},
		{"n: ~", `{"n":null}`},
		{"e:", `{"e":null}`},
		{`q: "1.0"`, `{"q":"1.0"}`},
		{"q: '2'", `{"q":"2"}`},
		{"s: !!str 3", `{"s":"3"}`},
		{"html: <a & b>", `{"html":"<a & b>"}`},
		{"1: one", `{"1":"one"}`},
		{"block: |\n  two\n  lines", `{"block":"two\nlines\n"}`},
		{"list: [1, x, 2.50]", `{"list":[1,"x",2.50]}`},
		{"metadata:\n  version: 1.0\n  tags: [a]", `{"metadata":{"version":1.0,"tags":["a"]}}`},
	} {
		md := "---\nname: x\ndescription: d\n" + tc.yaml + "\n---\nbody\n"
		fm, _, p := skillmd.ParseSkillMD([]byte(md), "x")
		if !p.Valid() {
			t.Errorf("%q: %v", tc.yaml, p.Errors)
			continue
		}
		want := `{"name":"x","description":"d",` + tc.want[1:]
		if string(fm.JSON) != want {
			t.Errorf("%q: JSON %s, want %s", tc.yaml, fm.JSON, want)
		}
		if !json.Valid(fm.JSON) {
			t.Errorf("%q: %s is not JSON", tc.yaml, fm.JSON)
		}
	}
}

func TestFrontmatterJSONEmpty(t *testing.T) {
	fm, _, _ := skillmd.ParseSkillMD([]byte("---\n---\nbody\n"), "x")
	if string(fm.JSON) != "{}" {
		t.Fatalf("JSON %q, want {}", fm.JSON)
	}
}
