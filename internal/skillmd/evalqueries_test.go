package skillmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// TestParseEvalQueries: the Agent Skills format is read; anything else is
// one warning naming the problem, never an error or a panic.
func TestParseEvalQueries(t *testing.T) {
	many := "[" + strings.Repeat(`{"query":"q","should_trigger":true},`, skillmd.MaxEvalQueries) + `{"query":"last","should_trigger":false}]`
	for _, tc := range []struct {
		name, data string
		want       int    // queries read
		problem    string // in the warning's message; "" none
	}{
		{"valid", `[{"query":"fill a pdf form","should_trigger":true},{"query":"write a poem","should_trigger":false,"note":"extra fields are kept out"}]`, 2, ""},
		{"empty array", `[]`, 0, ""},
		{"not JSON", `[{"query":`, 0, "cut short"},
		{"garbage", `query: x`, 0, "not JSON"},
		{"an object", `{"query":"x","should_trigger":true}`, 0, "array of objects"},
		{"query a number", `[{"query":1,"should_trigger":true}]`, 0, "query must be a string"},
		{"trigger a string", `[{"query":"x","should_trigger":"yes"}]`, 0, "should_trigger must be a boolean"},
		{"no query", `[{"should_trigger":true}]`, 0, "entry 1 has no query"},
		{"no should_trigger", `[{"query":"x"}]`, 0, "entry 1 has no should_trigger"},
		{"query too long", fmt.Sprintf(`[{"query":%q,"should_trigger":true}]`, strings.Repeat("x", skillmd.MaxEvalQueryBytes+1)), 0, "at most 4096"},
		{"trailing text", `[] []`, 0, "text follows"},
		{"not UTF-8", "[\"\xff\"]", 0, "not UTF-8"},
		{"too many", many, skillmd.MaxEvalQueries, "only the first"},
		{"too big", "[" + strings.Repeat(" ", 1<<20) + "]", 0, "bytes, at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qs, ps := skillmd.ParseEvalQueries([]byte(tc.data))
			if len(qs) != tc.want {
				t.Errorf("got %d queries, want %d", len(qs), tc.want)
			}
			if tc.problem == "" {
				if len(ps) != 0 {
					t.Fatalf("problems %+v", ps)
				}
				return
			}
			if len(ps) != 1 || ps[0].Severity != skillmd.SeverityWarning || ps[0].Rule != skillmd.RuleEvalQueries || ps[0].File != skillmd.EvalQueriesFile || !strings.Contains(ps[0].Message, tc.problem) {
				t.Fatalf("problems %+v, want one warning about %q", ps, tc.problem)
			}
		})
	}
}

// TestCheckFolderEvalQueries: a malformed eval_queries.json is a warning
// of the folder check, which stays valid.
func TestCheckFolderEvalQueries(t *testing.T) {
	md := []byte("---\nname: pdf\ndescription: Fill PDF forms.\n---\nbody\n")
	ps := skillmd.CheckFolder("pdf", []skillmd.File{{Path: "SKILL.md", Data: md}, {Path: "eval_queries.json", Data: []byte("{")}})
	if skillmd.HasErrors(ps) || len(ps) != 1 || ps[0].Rule != skillmd.RuleEvalQueries {
		t.Fatalf("problems %+v", ps)
	}
	ps = skillmd.CheckFolder("pdf", []skillmd.File{{Path: "SKILL.md", Data: md}, {Path: "eval_queries.json", Data: []byte(`[{"query":"x","should_trigger":true}]`)}})
	if len(ps) != 0 {
		t.Fatalf("problems %+v", ps)
	}
}

func FuzzParseEvalQueries(f *testing.F) {
	f.Add([]byte(`[{"query":"x","should_trigger":true}]`))
	f.Add([]byte(`[{"query":1}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		qs, ps := skillmd.ParseEvalQueries(data)
		if len(qs) > skillmd.MaxEvalQueries || len(ps) > 1 {
			t.Fatalf("%d queries, %d problems", len(qs), len(ps))
		}
		for _, q := range qs {
			if q.Query == "" || len(q.Query) > skillmd.MaxEvalQueryBytes {
				t.Fatalf("query of %d bytes accepted", len(q.Query))
			}
		}
		for _, p := range ps {
			if p.Severity != skillmd.SeverityWarning {
				t.Fatalf("not a warning: %+v", p)
			}
		}
	})
}
