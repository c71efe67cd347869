// Package panics keeps a panic in a background goroutine from killing the
// process: gRPC's recovery interceptor only sees the handler's own goroutine.
package panics

import (
	"fmt"
	"log/slog"
	"runtime/debug"
)

// Guard wraps fn, run in a goroutine of its own (errgroup.Go, say), so that a
// panic there becomes an error (answered Internal, with its stack logged).
func Guard(fn func() error) func() error {
	return func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		return fn()
	}
}

// GuardValue is Guard for a function that also returns a value, such as a
// load run by singleflight.Group.DoChan, which re-panics in a goroutine of
// its own (killing the process) when the load panics.
func GuardValue[T any](fn func() (T, error)) func() (T, error) {
	return func() (v T, err error) {
		defer func() {
			if p := recover(); p != nil {
				var zero T
				v, err = zero, fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		return fn()
	}
}

// Logged runs fn and logs a panic there as what instead of letting it end
// the process: for callbacks another library calls in a goroutine of its
// own (a Redis topic's messages).
func Logged(log *slog.Logger, what string, fn func()) {
	if err := Guard(func() error { fn(); return nil })(); err != nil {
		log.Error(what, "err", err)
	}
}
