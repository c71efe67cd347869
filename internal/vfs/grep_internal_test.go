package vfs

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// checkCounter is a context whose caller goes at its n-th check (Err call):
// the test measures matching in checks and bytes, not in time.
type checkCounter struct {
	context.Context
	n, checks int
}

func (c *checkCounter) Err() error {
	if c.checks++; c.checks >= c.n {
		return context.Canceled
	}
	return nil
}

// TestMatchLinesStopsWithCaller: matching a file looks at its context at
// least every grepCheckBytes plus a line, and stops at the first look after
// the caller has gone, so a costly expression never runs on over the rest
// of a big file for a caller that has gone.
func TestMatchLinesStopsWithCaller(t *testing.T) {
	const maxLine = 1000
	line := strings.Repeat("ab", 700) // longer than maxLine: matched on its first 1,000 bytes
	data := []byte(strings.Repeat(line+"\n", 4000))
	re := regexp.MustCompile("ab")

	// The caller never goes: every line matches, and the checks come at
	// least every grepCheckBytes plus one line.
	never := &checkCounter{Context: t.Context(), n: 1 << 30}
	ms, clipped, err := matchLines(never, "/f", data, re, 1<<20, maxLine)
	if err != nil || len(ms) != 4000 || !clipped {
		t.Fatalf("matchLines = %d matches, clipped %v, %v; want 4000, clipped", len(ms), clipped, err)
	}
	if least := len(data) / (grepCheckBytes + len(line) + 1); never.checks < least {
		t.Errorf("%d checks of the context over %d bytes, want at least %d", never.checks, len(data), least)
	}

	// The caller goes at the fifth check: matching ends there.
	gone := &checkCounter{Context: t.Context(), n: 5}
	if _, _, err := matchLines(gone, "/f", data, re, 1<<20, maxLine); !errors.Is(err, context.Canceled) {
		t.Errorf("matchLines after the caller went: %v, want context.Canceled", err)
	}
	if gone.checks != 5 {
		t.Errorf("matchLines looked at its context %d times, want it to stop at the fifth", gone.checks)
	}
}
