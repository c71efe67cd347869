package mcpserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore/memory"
)

// BenchmarkRequest is one MCP request through the whole handler in process
// (edge checks, the SDK, the gRPC loopback, the in-memory store): a ping,
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
