// Package logtest collects what a service under test logs, for tests that
// read the log back while the service's goroutines may still be writing.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a log destination safe for concurrent writers; the zero value
// is ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
