package panics_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"golang.org/x/sync/singleflight"

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

// TestGuardValue: a panic is an error and no value; a value and an error
// returned pass through. In a singleflight.Group.DoChan load, the panic
// would otherwise be raised again in a goroutine of its own, ending the
// process with every call under way.
func TestGuardValue(t *testing.T) {
	ch := new(singleflight.Group).DoChan("k", panics.GuardValue(func() (any, error) { panic("boom") }))
	r := <-ch
	if r.Val != nil || r.Err == nil || !strings.Contains(r.Err.Error(), "panic: boom") {
		t.Fatalf("DoChan(GuardValue(panic)) = %v, %v; want no value and the panic", r.Val, r.Err)
	}
	want := errors.New("plain")
	if v, err := panics.GuardValue(func() (int, error) { return 7, want })(); v != 7 || err != want {
		t.Fatalf("GuardValue(7, err) = %v, %v", v, err)
	}
}

// TestLogged: a panic in fn is logged with what and its stack, and Logged
// returns; fn without a panic logs nothing.
func TestLogged(t *testing.T) {
	var out strings.Builder
	log := slog.New(slog.NewTextHandler(&out, nil))
	panics.Logged(log, "topic message", func() { panic("bad message") })
	if got := out.String(); !strings.Contains(got, "topic message") || !strings.Contains(got, "panic: bad message") || !strings.Contains(got, "panics_test.go") {
		t.Fatalf("logged %q; want what, the panic and its stack", got)
	}
	out.Reset()
	ran := false
	panics.Logged(log, "quiet", func() { ran = true })
	if !ran || out.Len() != 0 {
		t.Fatalf("ran %v, logged %q; want run and nothing logged", ran, out.String())
	}
}
