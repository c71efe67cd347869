package panics_test

import (
	"errors"
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
