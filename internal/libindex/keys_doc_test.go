package libindex

import (
	"os"
	"strings"
	"testing"
)

// TestKeysDocumented: the Redis page names the key spaces this package
// writes, at the versions it writes them (a version bump left the page
// naming v5 keys nobody wrote).
func TestKeysDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/operators/redis.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{indexKeySpace, stampKeySpace, lockKeySpace, headKeySpace, digestKeySpace, fileKeySpace, sniffKeySpace} {
		if !strings.Contains(string(b), "`"+k) {
			t.Errorf("docs/operators/redis.md does not name %s", k)
		}
	}
}
