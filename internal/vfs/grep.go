package vfs

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sync/errgroup"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/textfile"
)

// GrepOptions selects what Grep looks for.
type GrepOptions struct {
	Pattern         string
	Glob            string
	Regex           bool
	CaseInsensitive bool
	MaxMatches      int
}

// GrepMatch is one matching line.
type GrepMatch struct {
	Path string
	Line int64
	Text string
}

// GrepResult holds the matches in path and line order.
type GrepResult struct {
	Matches      []GrepMatch
	Truncated    bool
	FilesScanned int64
	FilesSkipped int64
}

const (
	// maxLineBytes bounds the text returned per matching line.
	maxLineBytes = 1000
	// grepMargin is kept from the caller's deadline to send what was found.
	grepMargin = 100 * time.Millisecond
	// grepCheckBytes is how often, in bytes matched, scanning a file looks
	// at its context, so a cancelled search does not read on to the end of
	// a big file.
	grepCheckBytes = 8 << 10
)

// Grep searches the files at or below base line by line. Binary files and
// files over MaxGrepFileBytes are skipped; the search stops with Truncated
// set at MaxMatches, at the scan budget or shortly before the deadline.
func (fs *FS) Grep(ctx context.Context, id mounts.Caller, base string, o GrepOptions) (GrepResult, error) {
	if base == "" {
		base = "/"
	}
	s, err := fs.newGrepScan(o)
	if err != nil {
		return GrepResult{}, err
	}
	searchCtx, cancel := beforeDeadline(ctx, grepMargin)
	defer cancel()
	truncated, err := s.run(searchCtx, id, base)
	// Running into the margin is no failure: the caller gets what was found.
	if err != nil && (searchCtx.Err() == nil || ctx.Err() != nil) {
		return GrepResult{}, storeErr(base, err)
	}
	return s.result(truncated || searchCtx.Err() != nil), nil
}

// beforeDeadline returns ctx ending margin, or a tenth of the time left if
// that is less, before ctx's deadline.
func beforeDeadline(ctx context.Context, margin time.Duration) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, dl.Add(-min(margin, time.Until(dl)/10)))
}

// grepScan is one Grep. The goroutine that picks files owns group, budget
// and files; the fields below mu are shared with the fetches.
type grepScan struct {
	fs   *FS
	re   *regexp.Regexp
	glob string
	max  int

	ctx    context.Context // the group's: ends when a fetch fails
	group  *errgroup.Group
	budget int64 // bytes left to scan
	files  int   // files handed to fetches; a file's index orders its matches

	mu      sync.Mutex
	perFile map[int][]GrepMatch
	found   int
	scanned int64
	skipped int64
	stopped bool // ended before every file was searched
}

// newGrepScan validates o.
func (fs *FS) newGrepScan(o GrepOptions) (*grepScan, error) {
	re, err := fs.compileRegexp(o.Pattern, o.Regex, o.CaseInsensitive)
	if err != nil {
		return nil, err
	}
	if o.Glob != "" {
		if err := fs.checkGlob("glob", o.Glob); err != nil {
			return nil, err
		}
	}
	maxMatches, err := limits.Count("max_matches", o.MaxMatches, fs.cfg.MaxGrepMatches, fs.cfg.MaxGrepMatches)
	if err != nil {
		return nil, err
	}
	return &grepScan{fs: fs, re: re, glob: o.Glob, max: maxMatches, budget: fs.cfg.MaxGrepScanBytes, perFile: map[int][]GrepMatch{}}, nil
}

// run searches base with at most GrepConcurrency fetches in flight. It
// reports whether the walk's object budget ran out.
func (s *grepScan) run(ctx context.Context, id mounts.Caller, base string) (truncated bool, err error) {
	s.group, s.ctx = errgroup.WithContext(ctx)
	s.group.SetLimit(s.fs.cfg.GrepConcurrency)
	truncated, err = s.pick(id, base)
	// A failed fetch cancels the walk; report the fetch's error, not that.
	if werr := s.group.Wait(); werr != nil {
		err = werr
	}
	return truncated, err
}

// pick visits base itself when it is a file, else every file below it.
func (s *grepScan) pick(id mounts.Caller, base string) (truncated bool, err error) {
	info, r, o, err := s.fs.stat(s.ctx, id, base)
	if err != nil {
		return false, err
	}
	if info.IsDir {
		return s.fs.walkFiles(s.ctx, id, base, "", s.visit)
	}
	err = s.visit(candidate{vpath: base, rel: info.Name, obj: o, tree: s.fs.tree(r)})
	if errors.Is(err, errStop) {
		err = nil
	}
	return false, err
}

// visit starts the fetch of one file, or ends the walk with errStop once
// the search has enough matches, has spent its budget or is out of time.
func (s *grepScan) visit(c candidate) error {
	if s.glob != "" {
		if ok, _ := doublestar.Match(s.glob, c.rel); !ok {
			return nil
		}
	}
	if c.obj.Size > s.fs.cfg.MaxGrepFileBytes {
		s.mu.Lock()
		s.skipped++
		s.mu.Unlock()
		return nil
	}
	s.budget -= c.obj.Size
	if s.enough() || s.budget < 0 || s.ctx.Err() != nil {
		s.stop()
		return errStop
	}
	s.mu.Lock()
	s.scanned++
	s.mu.Unlock()
	idx := s.files
	s.files++
	s.group.Go(panics.Guard(func() error { return s.fetch(idx, c) }))
	return nil
}

func (s *grepScan) enough() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.found >= s.max
}

func (s *grepScan) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

// fetch greps the idx-th file. A file deleted since it was listed is left
// out; one cut off by the end of the search ends it early.
func (s *grepScan) fetch(idx int, c candidate) error {
	ms, clipped, binary, err := s.fs.grepFile(s.ctx, c, s.re, s.max+1)
	switch {
	case err != nil && s.ctx.Err() != nil:
		s.stop()
		return nil
	case objstore.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if binary {
		s.scanned--
		s.skipped++
		return nil
	}
	s.perFile[idx] = ms
	s.found += len(ms)
	s.stopped = s.stopped || clipped
	return nil
}

// result merges the files' matches in the order they were listed, which is
// path order, keeping at most max.
func (s *grepScan) result(truncated bool) GrepResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := GrepResult{Truncated: truncated || s.stopped, FilesScanned: s.scanned, FilesSkipped: s.skipped}
	for i := range s.files {
		for _, m := range s.perFile[i] {
			if len(res.Matches) == s.max {
				res.Truncated = true
				return res
			}
			res.Matches = append(res.Matches, m)
		}
	}
	return res
}

// grepFile returns at most limit matching lines of one file, or binary=true
// for a file Grep skips: not text, or grown past MaxGrepFileBytes since it
// was listed. clipped says a line was only searched in its first
// MaxGrepLineBytes.
func (fs *FS) grepFile(ctx context.Context, c candidate, re *regexp.Regexp, limit int) (ms []GrepMatch, clipped, binary bool, err error) {
	data, _, err := textfile.Reader{MaxBytes: fs.cfg.MaxGrepFileBytes}.Read(ctx, fs.getter(c.tree, c.obj), c.obj.Key, c.vpath)
	if errors.Is(err, textfile.ErrBinary) || errkind.Of(err) == errkind.ResourceExhausted {
		return nil, false, true, nil
	}
	if err != nil {
		return nil, false, false, err
	}
	ms, clipped, err = matchLines(ctx, c.vpath, data, re, limit, fs.cfg.MaxGrepLineBytes)
	return ms, clipped, false, err
}

// matchLines returns at most limit lines of data that re matches. A line
// longer than maxLine is matched on its first maxLine bytes only, which
// bounds the time of one match (it cannot be interrupted); clipped says so.
func matchLines(ctx context.Context, vpath string, data []byte, re *regexp.Regexp, limit, maxLine int) (ms []GrepMatch, clipped bool, err error) {
	rest, sinceCheck := data, 0
	for line := int64(1); len(ms) < limit && len(rest) > 0; line++ {
		if sinceCheck >= grepCheckBytes {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
			sinceCheck = 0
		}
		var text []byte
		text, rest = nextLine(rest)
		sinceCheck += len(text) + 1
		text = bytes.TrimSuffix(text, []byte{'\r'}) // CRLF files match as LF ones
		if len(text) > maxLine {
			text, clipped = text[:maxLine], true
		}
		if re.Match(text) {
			ms = append(ms, GrepMatch{Path: vpath, Line: line, Text: clip(string(text[:min(len(text), maxLineBytes+4)]), maxLineBytes)})
		}
	}
	return ms, clipped, nil
}
