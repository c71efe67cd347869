package library

import "time"

// SetClock sets the time the publisher's garbage collection measures blob
// ages against.
func SetClock(p *Publisher, now func() time.Time) { p.now = now }
