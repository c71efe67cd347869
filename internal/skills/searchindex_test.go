package skills_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// TestSearchIndexBuildOutlivesCaller: the first search of a library builds
// its index for every caller waiting on it; the caller that started the
// build giving up fails no one, and the bodies are read once.
func TestSearchIndexBuildOutlivesCaller(t *testing.T) {
	lb := skillstest.New()
	const n = 12
	for i := range n {
		lb.Shared().Skill(fmt.Sprintf("s%02d", i), "", fmt.Sprintf("Skill %d of the organization.", i), "# Steps\n\nReconcile the ledger.\n")
	}
	bucket := objstoretest.NewFaulty(lb.Bucket(t))
	lib := skillstest.Library(t, bucket, skillstest.Indexed(time.Hour))
	alice := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t"})
	if _, err := lib.Catalog.Skills(t.Context(), alice, skillview.ListOptions{}); err != nil { // the view, warm
		t.Fatal(err)
	}
	reads := bucket.Calls(objstore.OpGetRange)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	bucket.Before(objstore.OpGetRange, func(context.Context, objstoretest.Call) error {
		once.Do(func() { close(entered) })
		<-release // a slow store, whatever the build's caller does
		return nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() {
		_, err := lib.Catalog.Search(ctx, alice, skillview.SearchOptions{Query: "reconcile the ledger"})
		first <- err
	}()
	<-entered
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that left: %v, want context.Canceled", err)
	}
	second := make(chan error, 1)
	go func() {
		res, err := lib.Catalog.Search(t.Context(), alice, skillview.SearchOptions{Query: "reconcile the ledger"})
		if err == nil && len(res.Hits) == 0 {
			err = errors.New("no hits")
		}
		second <- err
	}()
	close(release)
	if err := <-second; err != nil {
		t.Fatalf("the caller still waiting: %v", err)
	}
	if got := bucket.Calls(objstore.OpGetRange) - reads; got != n {
		t.Errorf("%d SKILL.md reads for %d skills: the build was not shared or not kept", got, n)
	}
}
