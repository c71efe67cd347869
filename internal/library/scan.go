package library

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/scan"
	"github.com/skillsvc/skillsvc/internal/scanpolicy"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// WithScanner applies the libraries' scan policy (--library.scan) to
// every publish: the candidate folder is scanned before review and before
// anything is stored or live.
func WithScanner(s *scanpolicy.Scanner) Option {
	return func(p *Publisher) { p.scanner = s }
}

// Scanner is the scan policy's scanner (WithScanner); nil: none.
func (p *Publisher) Scanner() *scanpolicy.Scanner { return p.scanner }

// scanCandidate scans a valid candidate (rec its record) under library
// l's policy: its findings as problems (warnings; under block, high ones
// errors), and the report to store with the version (nil: not scanned).
// Under block a publish with a high finding is refused here.
func (p *Publisher) scanCandidate(ctx context.Context, l layout.LibraryRef, rec versions.Record, req PublishRequest) ([]skillmd.Problem, *scan.Report, error) {
	if p.scanner == nil {
		return nil, nil, nil
	}
	r, mode, err := p.scanner.Publish(ctx, l, rec.ID, req.Files)
	if err != nil || mode == scanpolicy.Off {
		return nil, nil, err
	}
	block := mode == scanpolicy.Block && scanpolicy.Blocks(r)
	ps := scanpolicy.Problems(r, block)
	if block && !req.ValidateOnly {
		return nil, nil, &scanpolicy.BlockedError{Problems: ps}
	}
	return ps, &r, nil
}

// ScanReportKey is where a version's scan report is kept: beside its
// record, by the content's digest (a proposal of the same files shares
// it).
func (p *Publisher) ScanReportKey(l layout.LibraryRef, name, content string) string {
	return layout.VersionsOf(p.cfg.Root(l)).Scan(name, strings.TrimPrefix(content, "sha256:"))
}

// storeReport keeps r beside the version whose content is rec's, so a
// later read needs no rescan.
func (p *Publisher) storeReport(ctx context.Context, l layout.LibraryRef, rec versions.Record, r *scan.Report) error {
	if r == nil {
		return nil
	}
	content := rec.ID
	if rec.Content != "" {
		content = rec.Content
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = p.bucket.Put(ctx, p.ScanReportKey(l, rec.Name, content), bytes.NewReader(b), int64(len(b)), objstore.PutOptions{})
	return err
}

// ScanReport reads the scan report stored with a version of name (its
// content digest), ok false when none was (published with the policy
// off, or before it existed).
func (p *Publisher) ScanReport(ctx context.Context, l layout.LibraryRef, name, content string) (scan.Report, bool, error) {
	rc, _, err := p.bucket.Get(ctx, p.ScanReportKey(l, name, content))
	if objstore.IsNotFound(err) {
		return scan.Report{}, false, nil
	}
	if err != nil {
		return scan.Report{}, false, err
	}
	defer rc.Close()
	var r scan.Report
	if err := json.NewDecoder(rc).Decode(&r); err != nil {
		return scan.Report{}, false, err
	}
	return r, true, nil
}
