package library

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// The admins' bulk changes (AdminService): callers are admins, no actor is
// checked here.

// maxDeleteVersions bounds the versions one DeleteVersions names.
const maxDeleteVersions = 1000

// DeleteVersions deletes versions or proposals of a skill by full id. A
// version a label points at is refused (FAILED_PRECONDITION) and nothing
// is deleted: move the label, or for latest roll back or delete the skill,
// first. The record is not read, so an unreadable one goes too; its blobs
// go with the next garbage collection. It returns how many were stored.
func (p *Publisher) DeleteVersions(ctx context.Context, l layout.LibraryRef, name string, ids []string) (_ int, err error) {
	defer func() { count(p.metrics, "delete_versions", err) }()
	if err := errors.Join(l.Validate(), checkName(name)); err != nil {
		return 0, err
	}
	if len(ids) == 0 || len(ids) > maxDeleteVersions {
		return 0, fmt.Errorf("%w: name 1 to %d versions", errkind.InvalidArgument, maxDeleteVersions)
	}
	hexes := make([]string, len(ids))
	for i, id := range ids {
		if hexes[i] = versions.HexOf(id); len(hexes[i]) != 64 {
			return 0, fmt.Errorf("%w: %q is not a full version id (sha256:<64 hex>)", errkind.InvalidArgument, versions.Clip(id))
		}
	}
	s := p.store(l)
	deleted := 0
	err = p.lock(ctx, l, name, func() error {
		refs, _, err := s.Refs(ctx, name)
		if err != nil {
			return err
		}
		for _, h := range hexes {
			if lbs := versions.LabelsOf(refs, "sha256:"+h); len(lbs) > 0 {
				return fmt.Errorf("%w: version sha256:%s of %s is labelled %s; move the label (latest: roll back or delete the skill) first", errkind.FailedPrecondition, h, name, strings.Join(lbs, ", "))
			}
		}
		for _, h := range hexes {
			for _, key := range []string{s.RecordKey(name, h), s.ProposalKey(name, h)} {
				if _, err := p.bucket.Stat(ctx, key); objstore.IsNotFound(err) {
					continue
				} else if err != nil {
					return err
				}
				if err := p.bucket.Delete(ctx, key); err != nil {
					return err
				}
				deleted++
			}
		}
		return nil
	})
	return deleted, err
}

// ProposalFilter picks the proposals RejectProposals acts on.
type ProposalFilter struct {
	Name     string    // "": every skill of the library
	Proposer string    // "": every author (a user ID)
	Before   time.Time // zero: any age; else created before it (expiry)
	Comment  string
	// Delete deletes the proposals picked, rejected ones too, instead of
	// rejecting the pending ones: it frees --library.max-proposals.
	Delete bool
}

// ProposalsResult says what RejectProposals did.
type ProposalsResult struct {
	Rejected, Deleted int
	// Unreadable names the keys of proposal records that could not be
	// read (logged), left as they are.
	Unreadable []string
}

// RejectProposals rejects (or deletes) the library's proposals f picks, as
// the admin a.
func (p *Publisher) RejectProposals(ctx context.Context, a Actor, l layout.LibraryRef, f ProposalFilter) (res ProposalsResult, err error) {
	defer func() { count(p.metrics, "reject_proposals", err) }()
	if err := errors.Join(l.Validate(), checkText("comment", f.Comment)); err != nil {
		return res, err
	}
	if f.Name != "" {
		if err := checkName(f.Name); err != nil {
			return res, err
		}
	}
	s := p.store(l)
	prefix := s.Root + "skills/"
	if f.Name != "" {
		prefix = s.SkillPrefix(f.Name)
	}
	now := p.now().UTC()
	err = objstore.Walk(ctx, p.bucket, prefix, func(o objstore.Object) error {
		if !strings.Contains(strings.TrimPrefix(o.Key, s.Root+"skills/"), "/p/") || !strings.HasSuffix(o.Key, ".json") {
			return nil
		}
		rec, _, err := s.RecordAt(ctx, o.Key)
		switch key, bad := versions.IsUnreadable(err); {
		case bad:
			res.Unreadable = append(res.Unreadable, key)
			return nil
		case errors.Is(err, errkind.NotFound):
			return nil // gone since listed
		case err != nil:
			return err
		}
		if !rec.Proposal() || (f.Proposer != "" && rec.Proposer != f.Proposer) || (!f.Before.IsZero() && !rec.Created.Before(f.Before)) {
			return nil
		}
		switch {
		case f.Delete:
			if err := p.bucket.Delete(ctx, o.Key); err != nil {
				return err
			}
			res.Deleted++
		case rec.State == versions.Pending:
			_, err := p.setState(ctx, s, rec, func(r *versions.Record) {
				if r.State == versions.Pending {
					r.State, r.Reviewer, r.ReviewTime, r.ReviewComment = versions.Rejected, a.Author, now, f.Comment
				}
			})
			if err != nil {
				return err
			}
			res.Rejected++
		}
		return nil
	})
	return res, err
}
