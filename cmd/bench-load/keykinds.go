package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// keyKinds counts the storage requests the proxy forwards by operation and
// kind of key (-v): the key with its user, skill and digest segments
// generalized, so a row's requests read as "GetObject
// {user}/…/provenance.json" rather than as one total.
type keyKinds struct {
	mu sync.Mutex
	n  map[string]int64
}

var (
	kindUser   = regexp.MustCompile(`tenant-\d+`)
	kindSkill  = regexp.MustCompile(`\b(skill-\d+|own-\d+)\b`)
	kindDigest = regexp.MustCompile(`[0-9a-f]{16,}`)
)

// keyKind is key generalized: "" for a bucket request (a listing).
func keyKind(op, key string) string {
	key = kindUser.ReplaceAllString(key, "{user}")
	key = kindSkill.ReplaceAllString(key, "{skill}")
	key = kindDigest.ReplaceAllString(key, "{digest}")
	if key == "" {
		return op
	}
	return op + " " + key
}

// count installs k on proxy until the returned stop is called.
func (k *keyKinds) count(proxy *testserver.S3Proxy) (stop func()) {
	k.n = map[string]int64{}
	proxy.OnRequest(func(op, key string) *testserver.S3Refusal {
		kind := keyKind(op, key)
		k.mu.Lock()
		k.n[kind]++
		k.mu.Unlock()
		return nil
	})
	return func() { proxy.OnRequest(nil) }
}

// String lists the kinds, most requests first.
func (k *keyKinds) String() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	kinds := slices.SortedFunc(maps.Keys(k.n), func(a, b string) int {
		if k.n[a] != k.n[b] {
			return int(k.n[b] - k.n[a])
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(kinds))
	for _, kind := range kinds {
		parts = append(parts, fmt.Sprintf("%s=%s", kind, loadbench.Count(float64(k.n[kind]))))
	}
	return strings.Join(parts, " ")
}
