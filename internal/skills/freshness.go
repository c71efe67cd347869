package skills

import (
	"flag"
	"fmt"
	"time"
)

// Storage is what the "auto" defaults of --skills.index-refresh and
// --skills.index-max-stale depend on: how the replicas learn of a change
// made with other tools than skillsvc.
type Storage int8

const (
	// Polled storage (S3 without bucket events) is listed again to see a
	// change, and a LIST costs: PolledIndexRefresh and PolledIndexMaxStale.
	Polled Storage = iota
	// Local storage (a directory) is cheap to list: LocalIndexRefresh for
	// both, so a library copied into the data directory shows up on the
	// first call a second after the copy.
	Local
	// Events (S3 with bucket change events) show a change within a second:
	// polling is only the safety net for an event lost, and a replica lists
	// each library it serves once every EventsIndexRefresh at most (less
	// while it stays unchanged, libindex.FreshFor).
	Events
)

// The values "auto" resolves to (ResolveFreshness).
const (
	PolledIndexRefresh  = 5 * time.Second
	PolledIndexMaxStale = 30 * time.Second
	LocalIndexRefresh   = time.Second
	EventsIndexRefresh  = 5 * time.Minute
	EventsIndexMaxStale = 15 * time.Minute
)

// indexRefreshHelp and indexMaxStaleHelp say what "auto" means, told in the two flags' help.
var (
	indexRefreshHelp  = fmt.Sprintf(` "auto" (the default) is %v with --storage=local (listing a directory is cheap), %v with events (--events.webhook-token-file or --events.sqs.queue-url: the bucket's change events keep libraries fresh and polling is the safety net), else %v; skillsvc config prints what it resolves to.`, LocalIndexRefresh, EventsIndexRefresh, PolledIndexRefresh)
	indexMaxStaleHelp = fmt.Sprintf(` "auto" (the default) is the refresh interval with --storage=local, %v with events (the bound for a change whose event was lost; at least the refresh interval), else %v; skillsvc config prints what it resolves to.`, EventsIndexMaxStale, PolledIndexMaxStale)
)

// autoDuration is a duration flag that may also be "auto": its default,
// left for ResolveFreshness to decide once the storage is known. While
// auto, the duration holds def, the polled storage's value.
type autoDuration struct {
	d    *time.Duration
	auto *bool
	def  time.Duration
}

func autoDurationVar(f *flag.FlagSet, d *time.Duration, auto *bool, def time.Duration, name, usage string) {
	*d, *auto = def, true
	f.Var(autoDuration{d, auto, def}, name, usage)
}

func (a autoDuration) String() string {
	if a.auto == nil {
		return ""
	}
	if *a.auto {
		return "auto"
	}
	return a.d.String()
}

func (a autoDuration) Set(s string) error {
	if s == "auto" {
		*a.d, *a.auto = a.def, true
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*a.d, *a.auto = d, false
	return nil
}

// Get is the duration it has now (the polled value while auto).
func (a autoDuration) Get() any { return *a.d }

// freshness holds which of the two flags are still "auto".
type freshness struct{ refreshAuto, maxStaleAuto bool }

// ResolveFreshness sets IndexRefresh and IndexMaxStale where they are
// "auto" to the values for s; one set keeps its value and bounds the other
// (a refresh never exceeds a max stale set, a max stale left auto never
// falls under the refresh). After it, neither is auto.
func (c *Config) ResolveFreshness(s Storage) {
	refreshAuto, maxStaleAuto := c.freshness.refreshAuto, c.freshness.maxStaleAuto
	switch s {
	case Local:
		if refreshAuto {
			c.IndexRefresh = LocalIndexRefresh
			if !maxStaleAuto {
				c.IndexRefresh = min(LocalIndexRefresh, c.IndexMaxStale)
			}
		}
		if maxStaleAuto {
			c.IndexMaxStale = c.IndexRefresh
		}
	case Events:
		if refreshAuto {
			c.IndexRefresh = EventsIndexRefresh
			if !maxStaleAuto {
				c.IndexRefresh = min(EventsIndexRefresh, c.IndexMaxStale)
			}
		}
		if maxStaleAuto {
			c.IndexMaxStale = max(EventsIndexMaxStale, c.IndexRefresh)
		}
	default:
		if refreshAuto {
			c.IndexRefresh = PolledIndexRefresh
		}
		if maxStaleAuto {
			c.IndexMaxStale = PolledIndexMaxStale
		}
	}
	c.freshness = freshness{}
}
