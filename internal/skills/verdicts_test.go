package skills_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// noteScanner stands in for the scan policy: every layer build notes on
// each skill how many verdicts were learnt by then, and learn tells each
// library built that one more is known, as a finished background scan
// does.
type noteScanner struct {
	mu      sync.Mutex
	learnt  int
	changed map[string]func() // by prefix, the newest build's
}

func (s *noteScanner) Layer(_ context.Context, _, prefix string, refs []*skillview.Ref, _ *libindex.Files, changed func()) (uint64, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = map[string]func(){}
	}
	s.changed[prefix] = changed
	for _, r := range refs {
		if r.Notes == nil {
			r.Notes = new(skillmd.Problems)
		}
		r.Notes.Warnings = append(r.Notes.Warnings, fmt.Sprintf("verdicts %d", s.learnt))
	}
	return uint64(s.learnt) + 1, nil
}

func (s *noteScanner) learn() {
	s.mu.Lock()
	s.learnt++
	var fs []func()
	for _, f := range s.changed {
		fs = append(fs, f)
	}
	s.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// TestVerdictServesHeldLayer: a scan verdict learnt for the shared library
// (every few calls while a large upload is scanned) does not make the next
// call wait for the library's layer to be built again; the held layer
// answers it, and the verdict shows once the layer is built again in the
// background.
func TestVerdictServesHeldLayer(t *testing.T) {
	lb := skillstest.New()
	for i := range 3 {
		lb.Shared().Skill(fmt.Sprintf("s%d", i), "", fmt.Sprintf("Skill %d of the organization.", i), "# Steps\n\nReconcile the ledger.\n")
	}
	lib := skillstest.Library(t, lb.Bucket(t), skillstest.Indexed(time.Hour))
	scanner := &noteScanner{}
	lib.Tree.SetScanner(scanner)
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	noted := func() []string {
		t.Helper()
		list, err := lib.Catalog.Skills(t.Context(), alice, skillview.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range list {
			for _, w := range s.Problems.Warnings {
				out = append(out, s.Dir+": "+w)
			}
		}
		return out
	}
	before := []string{"s0: verdicts 0", "s1: verdicts 0", "s2: verdicts 0"}
	if got := noted(); !slices.Equal(got, before) {
		t.Fatalf("first listing: %q, want %q", got, before)
	}
	scanner.learn()
	if got := noted(); !slices.Equal(got, before) {
		t.Fatalf("the call after a verdict: %q, want the held layer's %q (the call waited for a build)", got, before)
	}
	after := []string{"s0: verdicts 1", "s1: verdicts 1", "s2: verdicts 1"}
	deadline := time.Now().Add(time.Minute)
	for got := noted(); !slices.Equal(got, after); got = noted() {
		if time.Now().After(deadline) {
			t.Fatalf("the verdict never showed: %q, want %q", got, after)
		}
		time.Sleep(10 * time.Millisecond) // a rebuild starts at most once per second
	}
}
