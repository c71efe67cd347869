package library

import "time"

// SetClock sets the time the publisher's garbage collection measures blob
// ages against.
func SetClock(p *Publisher, now func() time.Time) { p.now = now }

// WaitProvenanceReads waits for the background reads of provenance
// indexes under way.
func WaitProvenanceReads(p *Publisher) { p.prov.Wait() }
