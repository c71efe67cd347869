package panics_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/panics"
)

func TestGuard(t *testing.T) {
	err := panics.Guard(func() error { panic("boom") })()
	if err == nil || !strings.Contains(err.Error(), "panic: boom") || !strings.Contains(err.Error(), "panics_test.go") {
		t.Fatalf("Guard(panic) = %v, want the panic and its stack", err)
	}
	want := errors.New("plain")
	if err := panics.Guard(func() error { return want })(); err != want {
		t.Fatalf("Guard(return err) = %v, want %v", err, want)
	}
}
