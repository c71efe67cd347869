// Package filewatch keeps a value parsed from files current while the files
// change on disk: TLS certificates, token verification keys and limit
// overrides are rotated without a restart. It polls rather than using inotify
// because Kubernetes swaps mounted secrets by renaming a symlinked directory,
// which file notifications miss; reading a few small files every few seconds
// costs nothing.
package filewatch

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultInterval is how often files are checked when a caller gives 0.
const DefaultInterval = 10 * time.Second

// Parse turns the files' contents, in the order of their paths, into a
// value. It is called only when some file's contents changed.
type Parse[T any] func(contents [][]byte) (T, error)

// Value is the latest value parsed from a set of files. A change that fails
// to parse (a half-written file, a certificate whose key has not arrived
// yet) keeps the previous value and is retried at the next check.
type Value[T any] struct {
	paths []string
	parse Parse[T]
	log   *slog.Logger

	cur atomic.Pointer[T]

	mu  sync.Mutex // serializes checks
	sum [sha256.Size]byte

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// Watch parses the files once, failing if they cannot be read or parsed,
// then checks them every interval (DefaultInterval when 0; a negative
// interval never checks again) until Close.
func Watch[T any](paths []string, interval time.Duration, parse Parse[T], log *slog.Logger) (*Value[T], error) {
	if len(paths) == 0 {
		return nil, errors.New("filewatch: no files")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v := &Value[T]{paths: paths, parse: parse, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	if _, err := v.Check(); err != nil {
		return nil, err
	}
	if interval == 0 {
		interval = DefaultInterval
	}
	if interval < 0 {
		close(v.done)
		return v, nil
	}
	go v.poll(interval)
	return v, nil
}

// Load returns the current value.
func (v *Value[T]) Load() T { return *v.cur.Load() }

// Check reads the files now and, when their contents changed, parses them
// and replaces the value. It reports whether the value was replaced.
func (v *Value[T]) Check() (bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	contents := make([][]byte, len(v.paths))
	h := sha256.New()
	for i, p := range v.paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return false, fmt.Errorf("filewatch: %w", err)
		}
		contents[i] = b
		// Length-prefixed, so moving bytes between files is a change.
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	if v.cur.Load() != nil && bytes.Equal(sum[:], v.sum[:]) {
		return false, nil
	}
	val, err := v.parse(contents)
	if err != nil {
		return false, err
	}
	v.cur.Store(&val)
	v.sum = sum
	return true, nil
}

func (v *Value[T]) poll(interval time.Duration) {
	defer close(v.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-v.stop:
			return
		case <-t.C:
		}
		changed, err := v.Check()
		switch {
		case err != nil:
			v.log.Warn("reloading files failed; keeping the previous contents", "files", v.paths, "err", err)
		case changed:
			v.log.Info("reloaded files", "files", v.paths)
		}
	}
}

// Close stops checking. The last value stays loadable.
func (v *Value[T]) Close() {
	v.once.Do(func() { close(v.stop) })
	<-v.done
}
