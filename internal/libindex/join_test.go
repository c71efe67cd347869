package libindex

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestJoinedFailedLoadRetried: a caller that joins a load begun before it
// came, which then finds storage failing, gets one load of its own: storage
// may have recovered since that load began, and the first caller after an
// outage would otherwise get the outage's answer. The caller whose own load
// failed gets the failure, and a load that began after the caller came is
// not retried.
func TestJoinedFailedLoadRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := objstoretest.NewFaulty(objstoretest.NewBucket(t, map[string]string{keyA: skillMD("a")}))
		log := slog.New(slog.DiscardHandler)
		ix := New(b, cache.NewLRU(1<<20), testConfig(5*time.Second), log, NewCacheLog(log), NewMetrics(nil))
		release := make(chan struct{})
		lists := 0
		b.Before(objstore.OpList, func(context.Context, objstoretest.Call) error {
			lists++
			if lists == 1 {
				<-release
				return objstore.ErrUnavailable // storage was down when this listing ran
			}
			return nil
		})
		var (
			firstErr, joinedErr error
			joined              *Index
		)
		firstDone, joinedDone := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(firstDone)
			_, firstErr = ix.Get(t.Context(), aliceLayer)
		}()
		synctest.Wait()         // the first caller's load is in its listing
		time.Sleep(time.Second) // the bubble's clock, at once: the next caller comes a second after the load began
		go func() {
			defer close(joinedDone)
			joined, joinedErr = ix.Get(t.Context(), aliceLayer)
		}()
		synctest.Wait() // the second caller waits for the same load
		close(release)
		<-firstDone
		<-joinedDone
		if !errors.Is(firstErr, objstore.ErrUnavailable) {
			t.Errorf("the caller whose load failed: err = %v, want unavailable", firstErr)
		}
		if joinedErr != nil || joined == nil || len(joined.Heads) != 1 {
			t.Errorf("the caller that joined it: %v, %v; want the index from a load of its own", joined, joinedErr)
		}
		if lists != 2 {
			t.Errorf("%d listings, want 2 (the failed load, the joined caller's own)", lists)
		}

		// Storage down for a caller's own load: no second try.
		if err := ix.Drop(t.Context(), aliceLayer); err != nil {
			t.Fatal(err)
		}
		b.Fail(objstore.OpList, "", objstore.ErrUnavailable)
		before := b.Calls(objstore.OpList)
		if _, err := ix.Get(t.Context(), aliceLayer); !errors.Is(err, objstore.ErrUnavailable) {
			t.Errorf("own load with storage down: err = %v, want unavailable", err)
		}
		if n := b.Calls(objstore.OpList) - before; n != 1 {
			t.Errorf("own load with storage down: %d listings, want 1", n)
		}
		ix.Close()
	})
}
