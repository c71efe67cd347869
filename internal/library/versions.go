package library

import (
	"context"
	"errors"
	"fmt"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/limits"
	"github.com/skillsvc/skillsvc/internal/pagetoken"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// ListRequest asks for a page of a skill's versions.
type ListRequest struct {
	Library   layout.LibraryRef
	Name      string
	State     versions.State // "": every state the actor may see
	PageSize  int32
	PageToken string
}

// Page is one page of versions, newest first, and every label.
type Page struct {
	Versions []Version
	Next     string
	Labels   map[string]string
}

// Page sizes of ListSkillVersions.
const (
	defaultPageSize = 50
	maxPageSize     = 500
)

// ListVersions lists a skill's versions the actor may see, newest first.
func (p *Publisher) ListVersions(ctx context.Context, a Actor, req ListRequest) (Page, error) {
	l, _, err := p.authorize(a, req.Library, read)
	if err != nil {
		return Page{}, err
	}
	if err := checkName(req.Name); err != nil {
		return Page{}, err
	}
	size, err := limits.Count("page_size", req.PageSize, defaultPageSize, maxPageSize)
	if err != nil {
		return Page{}, err
	}
	scope := "versions\x00" + p.cfg.Root(l) + req.Name + "\x00" + string(req.State)
	s := p.store(l)
	after, err := pagetoken.Decode(scope, req.PageToken)
	if err != nil {
		return Page{}, err
	}
	if _, _, ok := s.MarkerOf(req.Name, s.OrderPrefix(req.Name)+after); after != "" && !ok {
		return Page{}, fmt.Errorf("%w: page_token is not from this listing", errkind.InvalidArgument)
	}
	refs, _, err := s.Refs(ctx, req.Name)
	if err != nil {
		return Page{}, err
	}
	mem := p.budget.Reserve()
	defer mem.Release()
	if !refs.Ordered {
		if err := s.Order(ctx, req.Name, mem); err != nil {
			return Page{}, err
		}
	}
	out := Page{Labels: map[string]string{}}
	for lb, id := range refs.Labels {
		out.Labels[lb] = id
	}
	// The page's records only, in the markers' order. Versions the actor
	// may not see or did not ask for are skipped, reading at most twice
	// the page; a page also ends once its records pass the reply budget
	// (--skills.max-page-bytes). A shorter page carries a token.
	n, maxBytes := int(size), int64(p.catalog.MaxPageBytes())
	read := 0
	full := func() bool {
		return len(out.Versions) >= n || read >= 2*n || (len(out.Versions) > 0 && mem.Held() >= maxBytes)
	}
	for {
		if full() {
			out.Next = pagetoken.Encode(scope, after)
			break
		}
		ms, more, err := s.Markers(ctx, req.Name, after, min(n-len(out.Versions), 2*n-read))
		if err != nil {
			return Page{}, err
		}
		for _, m := range ms {
			if full() {
				out.Next = pagetoken.Encode(scope, after)
				return out, nil
			}
			after = m
			rk, created, ok := s.MarkerOf(req.Name, s.OrderPrefix(req.Name)+m)
			if !ok {
				continue
			}
			read++
			r, ok, err := s.ReadRecord(ctx, req.Name, rk, mem)
			if err != nil {
				return Page{}, err
			}
			// A marker of another time is stale: the record is listed by
			// the marker of its creation.
			if ok && r.Created.Equal(created) && visible(a, r) && (req.State == "" || r.State == req.State) {
				out.Versions = append(out.Versions, Version{Record: r, Library: l, Labels: versions.LabelsOf(refs, r.ID)})
			}
		}
		if !more {
			break
		}
	}
	return out, nil
}

// find resolves a version the actor may see.
func (p *Publisher) find(ctx context.Context, a Actor, l layout.LibraryRef, name, ref string) (Version, error) {
	s := p.store(l)
	refs, _, err := s.Refs(ctx, name)
	if err != nil {
		return Version{}, err
	}
	rec, _, err := s.Resolve(ctx, name, ref, refs)
	if err != nil {
		return Version{}, err
	}
	if !visible(a, rec) {
		// Not even its existence is told.
		return Version{}, fmt.Errorf("%w: skill %s has no version %s", errkind.NotFound, name, versions.Clip(ref))
	}
	return Version{Record: rec, Library: l, Labels: versions.LabelsOf(refs, rec.ID)}, nil
}

// GetVersion returns one version and its SKILL.md.
func (p *Publisher) GetVersion(ctx context.Context, a Actor, lib layout.LibraryRef, name, ref string) (Version, []byte, error) {
	l, _, err := p.authorize(a, lib, read)
	if err != nil {
		return Version{}, nil, err
	}
	if err := checkName(name); err != nil {
		return Version{}, nil, err
	}
	v, err := p.find(ctx, a, l, name, ref)
	if err != nil {
		return Version{}, nil, err
	}
	raw, err := p.ReadFile(ctx, v, skillmd.SkillFile)
	return v, raw, err
}

// ReadFile reads one file of a version from the library's blobs (checked
// against its digest), charged to the memory budget while read.
func (p *Publisher) ReadFile(ctx context.Context, v Version, rel string) ([]byte, error) {
	for _, f := range v.Files {
		if f.Rel == rel {
			mem := p.budget.Reserve()
			defer mem.Release()
			if err := mem.Take(ctx, f.Size); err != nil {
				return nil, err
			}
			return p.blobs.Get(ctx, p.cfg.BlobSpace(v.Library), blobs.Digest(f.SHA256))
		}
	}
	return nil, fmt.Errorf("%w: version %s of %s has no file %q", errkind.NotFound, v.ID, v.Name, versions.Clip(rel))
}

// SetLabel points label at a version, or removes it (ref "").
func (p *Publisher) SetLabel(ctx context.Context, a Actor, lib layout.LibraryRef, name, label, ref string) (_ *Version, err error) {
	defer func() { count(p.metrics, "label", err) }()
	l, _, err := p.authorize(a, lib, write)
	if err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := versions.CheckLabel(label); err != nil {
		return nil, err
	}
	if label == versions.Latest {
		return nil, fmt.Errorf("%w: %q moves only by publishing, rolling back or approving", errkind.InvalidArgument, versions.Latest)
	}
	s := p.store(l)
	if ref == "" {
		_, err := s.UpdateRefs(ctx, name, func(r *versions.Refs) error { delete(r.Labels, label); return nil })
		return nil, err
	}
	v, err := p.find(ctx, a, l, name, ref)
	if err != nil {
		return nil, err
	}
	if v.State != versions.Published {
		return nil, fmt.Errorf("%w: version %s is %s; only published versions are labelled", errkind.FailedPrecondition, v.ID, v.State)
	}
	refs, err := s.UpdateRefs(ctx, name, func(r *versions.Refs) error { r.Labels[label] = v.ID; return nil })
	if err != nil {
		return nil, err
	}
	v.Labels = versions.LabelsOf(refs, v.ID)
	return &v, nil
}

// Rollback makes a published version the live copy again and moves latest.
func (p *Publisher) Rollback(ctx context.Context, a Actor, lib layout.LibraryRef, name, ref, ifLatest string) (_ Result, err error) {
	defer func() { count(p.metrics, "rollback", err) }()
	l, _, err := p.authorize(a, lib, write)
	if err != nil {
		return Result{}, err
	}
	if err := checkName(name); err != nil {
		return Result{}, err
	}
	v, err := p.find(ctx, a, l, name, ref)
	if err != nil {
		return Result{}, err
	}
	if v.State != versions.Published {
		return Result{}, fmt.Errorf("%w: version %s is %s; only a published version is rolled back to", errkind.FailedPrecondition, v.ID, v.State)
	}
	return p.makeLive(ctx, l, v, ifLatest, nil)
}

// Review approves (publishes) or rejects a pending version.
func (p *Publisher) Review(ctx context.Context, a Actor, lib layout.LibraryRef, name, ref string, approve bool, comment string) (_ Result, err error) {
	defer func() { count(p.metrics, "review", err) }()
	l, _, err := p.authorize(a, lib, review)
	if err != nil {
		return Result{}, err
	}
	if err := errors.Join(checkName(name), checkText("comment", comment)); err != nil {
		return Result{}, err
	}
	v, err := p.find(ctx, a, l, name, ref)
	if err != nil {
		return Result{}, err
	}
	if v.State != versions.Pending {
		return Result{}, fmt.Errorf("%w: version %s is %s, not pending", errkind.FailedPrecondition, v.ID, v.State)
	}
	reviewed := func(r *versions.Record) {
		r.Reviewer, r.ReviewTime, r.ReviewComment = a.Author, p.now().UTC(), comment
		if approve {
			r.State = versions.Published
		} else {
			r.State = versions.Rejected
		}
	}
	if !approve {
		rec, err := p.setState(ctx, p.store(l), v.Record, reviewed)
		if err != nil {
			return Result{}, err
		}
		v.Record = rec
		return Result{Version: v, Valid: true}, nil
	}
	if !v.Proposal() {
		// A pending record stored before proposals were kept apart.
		return p.makeLive(ctx, l, v, "", func(s versions.Store, rec versions.Record) (versions.Record, error) {
			return p.setState(ctx, s, rec, reviewed)
		})
	}
	// An approved proposal becomes the version of its files (the one
	// stored already, if they were published before) and is gone.
	return p.makeLive(ctx, l, v, "", func(s versions.Store, prop versions.Record) (versions.Record, error) {
		ver := prop
		ver.ID, ver.Content = prop.Content, ""
		reviewed(&ver)
		if err := p.checkVersions(ctx, s, ver); err != nil {
			return versions.Record{}, err
		}
		kept, err := p.keepRecord(ctx, s, ver)
		if err != nil {
			return versions.Record{}, err
		}
		if kept.State != versions.Published || len(prop.Signatures) > 0 {
			// The proposal's signatures go with its files.
			return p.setState(ctx, s, kept, func(r *versions.Record) {
				if r.State != versions.Published {
					reviewed(r)
				}
				for _, sg := range prop.Signatures {
					r.Signatures = versions.WithSignature(r.Signatures, sg)
				}
			})
		}
		return kept, nil
	})
}

// makeLive writes a stored version as the live copy under the skill's
// lock and moves latest to it; commit (optional) makes v's record the
// published version first (an approval). An approved proposal is deleted
// once its version is live.
func (p *Publisher) makeLive(ctx context.Context, l layout.LibraryRef, v Version, ifLatest string, commit func(versions.Store, versions.Record) (versions.Record, error)) (Result, error) {
	s := p.store(l)
	var res Result
	err := p.lock(ctx, l, v.Name, func() error {
		refs, _, err := s.Refs(ctx, v.Name)
		if err != nil {
			return err
		}
		if err := p.checkIfLatest(ctx, l, s, refs, v.Name, v.Category, ifLatest); err != nil {
			return err
		}
		// Read every file before writing any: a missing blob fails the
		// change with the live copy untouched.
		mem := p.budget.Reserve()
		defer mem.Release()
		data, err := p.readVersion(ctx, l, v.Record, mem)
		if err != nil {
			return err
		}
		rec := v.Record
		// Refused before an approval is recorded, not after.
		if err := p.checkSigned(l, rec); err != nil {
			return err
		}
		if commit != nil {
			if rec, err = commit(s, rec); err != nil {
				return err
			}
		}
		removed, refs, err := p.goLive(ctx, l, rec, nil, func(rel string) ([]byte, error) { return data[rel], nil })
		if err != nil {
			return err
		}
		if v.Proposal() {
			if err := p.bucket.Delete(ctx, s.KeyOf(v.Record)); err != nil {
				return err
			}
		}
		res = Result{Version: Version{Record: rec, Library: l, Labels: versions.LabelsOf(refs, rec.ID)}, Removed: removed, Valid: true}
		return nil
	})
	return res, err
}
