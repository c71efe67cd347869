// Package quota keeps one tenant from raising another's latency. Every user
// has a token bucket (golang.org/x/time/rate) that bounds its request rate
// and a count of its calls in flight that bounds its share of what all
// users share: object storage connections, cache, CPU. The gRPC
// interceptors refuse a call over either limit at once, never queueing it,
// with an error wrapping errkind.ResourceExhausted that says which limit was
// hit and when a retry may pass (errkind.RetryAfter). Defaults come from
// flags; a YAML overrides file gives single users other limits and is
// reloaded while the server runs (package filewatch). The state of at most
// max-tracked-users users is kept, least recently seen forgotten first, but
// never that of a user with calls in flight, whose count must stay right.
package quota
