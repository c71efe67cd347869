// Package scanpolicy applies a library's scan policy (--library.scan:
// off, warn or block, per library) to every new library state: a publish's
// candidate folder before anything is stored, and a skill an out-of-band
// upload changed, scanned in the background once per manifest digest and
// rules version (the verdict shared through the cache) and noted on the
// layer that serves it. The scanner itself is internal/scan: pure, bounded,
// never running a skill's code.
package scanpolicy
