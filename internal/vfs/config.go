package vfs

import (
	"flag"
	"fmt"
	"time"
)

// Config holds the limits that keep every operation bounded.
type Config struct {
	MaxReadBytes        int64
	MaxReadResponse     int64
	MaxWriteBytes       int64
	MaxUploadBytes      int64
	MaxListPage         int
	MaxGlobResults      int
	MaxScanObjects      int
	MaxGrepMatches      int
	MaxGrepFileBytes    int64
	MaxGrepScanBytes    int64
	GrepConcurrency     int
	MaxGrepLineBytes    int
	MaxPatternBytes     int
	MaxRegexInsts       int
	MaxGlobAlternatives int
	EditAttempts        int
	EditBackoff         time.Duration
	ChunkSize           int
}

// RegisterFlagsWithPrefix registers the limits with their defaults.
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.Int64Var(&c.MaxReadBytes, prefix+"max-read-bytes", 10<<20, "Largest file Read, Edit and Grep load as text; bigger files need Download.")
	f.Int64Var(&c.MaxReadResponse, prefix+"max-read-response-bytes", 3<<20, "Most content one Read returns; fewer lines come back (see next_offset). Keeps responses under gRPC's default 4 MiB message limit.")
	f.Int64Var(&c.MaxWriteBytes, prefix+"max-write-bytes", 10<<20, "Largest content Write and Edit store.")
	f.Int64Var(&c.MaxUploadBytes, prefix+"max-upload-bytes", 1<<30, "Largest file Upload stores.")
	f.IntVar(&c.MaxListPage, prefix+"max-list-page", 1000, "Most entries in one List page.")
	f.IntVar(&c.MaxGlobResults, prefix+"max-glob-results", 1000, "Most matches one Glob returns.")
	f.IntVar(&c.MaxScanObjects, prefix+"max-scan-objects", 100000, "Most objects one Glob or Grep lists before it stops with truncated set.")
	f.IntVar(&c.MaxGrepMatches, prefix+"max-grep-matches", 500, "Most matches one Grep returns.")
	f.Int64Var(&c.MaxGrepFileBytes, prefix+"max-grep-file-bytes", 4<<20, "Files larger than this are skipped by Grep.")
	f.Int64Var(&c.MaxGrepScanBytes, prefix+"max-grep-scan-bytes", 256<<20, "Most bytes one Grep reads before it stops with truncated set.")
	f.IntVar(&c.GrepConcurrency, prefix+"grep-concurrency", 16, "Files one Grep fetches in parallel.")
	f.IntVar(&c.MaxGrepLineBytes, prefix+"max-grep-line-bytes", 16<<10, "Grep matches only this much of a longer line (and sets truncated), which bounds the time one match takes.")
	f.IntVar(&c.MaxPatternBytes, prefix+"max-pattern-bytes", 1024, "Longest Grep pattern or Glob pattern.")
	f.IntVar(&c.MaxRegexInsts, prefix+"max-regex-insts", 1000, "Most instructions a compiled Grep regular expression may have (its matching cost per byte).")
	f.IntVar(&c.MaxGlobAlternatives, prefix+"max-glob-alternatives", 64, "Most patterns a Glob's {a,b} groups may expand to (their matching cost).")
	f.IntVar(&c.EditAttempts, prefix+"edit-attempts", 64, "Read-modify-write attempts of one Edit under contention.")
	f.DurationVar(&c.EditBackoff, prefix+"edit-backoff", 5*time.Millisecond, "Base of the jittered backoff between Edit attempts.")
	f.IntVar(&c.ChunkSize, prefix+"chunk-size", 256<<10, "Bytes per Download message.")
}

// DefaultConfig returns the defaults RegisterFlagsWithPrefix sets.
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}

// Validate rejects limits that would make operations unbounded or useless.
func (c *Config) Validate() error {
	for name, v := range map[string]int64{
		"max-read-bytes": c.MaxReadBytes, "max-read-response-bytes": c.MaxReadResponse, "max-write-bytes": c.MaxWriteBytes, "max-upload-bytes": c.MaxUploadBytes,
		"max-list-page": int64(c.MaxListPage), "max-glob-results": int64(c.MaxGlobResults),
		"max-scan-objects": int64(c.MaxScanObjects), "max-grep-matches": int64(c.MaxGrepMatches),
		"max-grep-file-bytes": c.MaxGrepFileBytes, "max-grep-scan-bytes": c.MaxGrepScanBytes,
		"grep-concurrency": int64(c.GrepConcurrency), "max-grep-line-bytes": int64(c.MaxGrepLineBytes),
		"max-pattern-bytes": int64(c.MaxPatternBytes), "max-regex-insts": int64(c.MaxRegexInsts), "max-glob-alternatives": int64(c.MaxGlobAlternatives), "edit-attempts": int64(c.EditAttempts), "chunk-size": int64(c.ChunkSize),
	} {
		if v <= 0 {
			return fmt.Errorf("vfs: %s must be positive, got %d", name, v)
		}
	}
	if c.MaxListPage > 1000 {
		return fmt.Errorf("vfs: max-list-page is at most 1000 (one S3 page), got %d", c.MaxListPage)
	}
	return nil
}
