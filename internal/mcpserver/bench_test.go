package mcpserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// BenchmarkRequest is one MCP request through the whole handler in process
// (edge checks, the SDK, the catalog and filesystem called directly, the in-memory store): a ping,
// which measures the edge and the SDK, and a write_file of 1 MiB, whose
// body the edge reads and checks before the SDK decodes it again.
func BenchmarkRequest(b *testing.B) {
	e := start(b, memory.New(), nil)
	alice := identity("alice", "t1")
	sid := openSession(b, e.h, alice)
	for _, bc := range []struct{ name, body string }{
		{"ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"write_file_1MiB", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/workspace/big.md","content":%q}}}`, strings.Repeat("x", 1<<20))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				if rec := rawPost(e.h, b.Context(), alice, sid, bc.body); rec.Code != http.StatusOK {
					b.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// BenchmarkSkillsListPage is one skills/list page of 50 skills, each with
// a SKILL.md of about 3 KiB of frontmatter and three more files, from a
// warm catalog: the catalog's full view, the entries, their JSON.
func BenchmarkSkillsListPage(b *testing.B) {
	lib := skillstest.New()
	alice := lib.User("alice")
	var meta strings.Builder
	for k := range 70 {
		fmt.Fprintf(&meta, "  key-%02d: a value an author wrote down\n", k)
	}
	for i := range 50 {
		dir := fmt.Sprintf("cat/skill-%02d", i)
		alice.File(dir+"/SKILL.md", fmt.Sprintf("---\nname: skill-%02d\ndescription: Skill %d for the benchmark.\nmetadata:\n%s---\n# Body\n", i, i, meta.String()))
		for _, f := range []string{"references/a.md", "references/b.md", "scripts/run.py"} {
			alice.File(dir+"/"+f, "content of "+f+"\n")
		}
	}
	e := startWith(b, lib.Bucket(b), nil, func(c *skills.Config) {
		c.IndexRefresh, c.IndexMaxStale, c.StaleIfError = time.Hour, time.Hour, time.Hour
	})
	id := identity("alice", "t1")
	sid := openSession(b, e.h, id)
	body := `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`
	b.ReportAllocs()
	for b.Loop() {
		if rec := rawPost(e.h, b.Context(), id, sid, body); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "skill-49") {
			b.Fatalf("HTTP %d: %.300s", rec.Code, rec.Body)
		}
	}
}
