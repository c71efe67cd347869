package views

import (
	"os"
	"strings"
	"testing"
)

// TestParsedKeyDocumented: the Redis page names the parsed-head key at the
// codec and parser versions written.
func TestParsedKeyDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/operators/redis.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "`"+parsedKeySpace) {
		t.Errorf("docs/operators/redis.md does not name %s", parsedKeySpace)
	}
}
