// Package loads runs the loads of keyed values (each library's index) as
// their callers need them: one load of a key at a time, shared by the
// callers that wait for it (Group), the rest queued on a bounded pool of
// workers that callers do not wait for (Background). A Group also counts
// the drops of each key (a change made it stale) so that what a load read
// before a drop is never kept after it, and a caller that comes after a
// drop never takes the answer of a load that began before it: a replica
// serves its own writes to the next call.
package loads
