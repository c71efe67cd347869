// Package watch is the one change feed of callers' catalogs, behind
// SkillsService.WatchSkills and MCP's change notifications. A Feed keeps,
// per user watched on this replica, one hub that compares successive
// states of the user's catalog (each served skill's path, name, layer,
// manifest digest and whether it is disabled, under the library digest)
// and hands the newest to every subscriber, which diffs it against what it
// last handed on. Comparing states rather than relaying events catches
// every way a catalog changes alike: API writes, enable/disable, and files
// put straight into the bucket.
//
// A hub looks again when the catalog hears of a change to the user's or
// the shared library (skills.Catalog.Listen: an API write or an S3 event
// on this replica, and, over a Redis topic, on any other), and at the
// latest every interval, which revalidates the library's index as any call
// does (at most once per --skills.index-refresh across replicas). So one
// look per user per interval per replica serves all its watchers, and a
// bucket change without events arrives within about an interval and a half.
//
// States are kept in the shared cache by user and library digest for a
// while (Config.ResumeTTL), so a client that reconnects to any replica
// resumes from the digest it last saw.
package watch
