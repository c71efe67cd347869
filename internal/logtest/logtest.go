// Package logtest collects what a service under test logs, for tests that
// read the log back while the service's goroutines may still be writing.
package logtest

import (
	"bytes"
	"context"
	"sync"
)

// Buffer is a log destination safe for concurrent writers; the zero value
// is ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// wrote is closed and replaced on every write, waking Wait.
	wrote chan struct{}
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wrote != nil {
		close(b.wrote)
		b.wrote = nil
	}
	return b.buf.Write(p)
}

// Wait returns true once what was written satisfies ok, false if ctx ends
// first. It checks after every write, never on a timer.
func (b *Buffer) Wait(ctx context.Context, ok func(log string) bool) bool {
	for {
		b.mu.Lock()
		if ok(b.buf.String()) {
			b.mu.Unlock()
			return true
		}
		if b.wrote == nil {
			b.wrote = make(chan struct{})
		}
		wrote := b.wrote
		b.mu.Unlock()
		select {
		case <-wrote:
		case <-ctx.Done():
			return false
		}
	}
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
