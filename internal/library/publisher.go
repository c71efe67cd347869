// Package library is the skill authors' path beside the catalog: publish a
// skill folder validated by skillmd.CheckFolder, delete it, and keep every
// published version immutable (a record naming each file by digest, the
// files in the library's blob space), with labels, rollback and, for the
// shared library, review. Plain bucket uploads keep working beside it: the
// live copy a publish writes is an ordinary skill folder of the library.
package library

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/coexist"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library/libmetrics"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/provindex"
	"github.com/skillsvc/skillsvc/internal/scan"
	"github.com/skillsvc/skillsvc/internal/scanpolicy"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// Publisher makes the authors' changes to skill libraries.
type Publisher struct {
	bucket  objstore.Bucket
	catalog *skills.Catalog
	cfg     Config
	blobs   *blobs.Store
	locks   cache.Cache // the shared cache: the skills' locks
	// notify tells the other replicas a library changed (nil: they see it
	// within --skills.index-refresh).
	notify  func(ctx context.Context, l layout.LibraryRef)
	now     func() time.Time
	metrics *libmetrics.Metrics
	log     *slog.Logger
	budget  *versions.Budget      // publishes' and version reads' memory (budget.go)
	compete coexist.Competitors   // the coexistence check's search; nil: none
	prov    *provindex.Index      // libraries' provenance indexes by key (provindex.go)
	reg     prometheus.Registerer // WithRegisterer's
	scanner *scanpolicy.Scanner   // the scan policy (scan.go); nil: none
}

// Option configures a Publisher.
type Option func(*Publisher)

// WithNotify calls f after each change to a library's live copy, once its
// index is dropped here: the events receiver tells the other replicas.
func WithNotify(f func(ctx context.Context, l layout.LibraryRef)) Option {
	return func(p *Publisher) { p.notify = f }
}

// WithCompetitors turns on the coexistence check and the triggering evals
// of every publish (validate_only too).
func WithCompetitors(c coexist.Competitors) Option {
	return func(p *Publisher) { p.compete = c }
}

// WithLogger logs what the publisher skips (unreadable records, by key).
func WithLogger(log *slog.Logger) Option {
	return func(p *Publisher) { p.log = log }
}

// New returns a publisher over the catalog's bucket; locks (the shared
// cache) orders changes of one skill across replicas.
func New(bucket objstore.Bucket, catalog *skills.Catalog, cfg Config, locks cache.Cache, opts ...Option) *Publisher {
	p := &Publisher{bucket: bucket, catalog: catalog, cfg: cfg, blobs: blobs.New(bucket, skillmd.MaxSkillBytes, cfg.GCGrace), locks: locks, now: time.Now,
		log: slog.New(slog.DiscardHandler), budget: versions.NewBudget(cfg.MemoryBudget, cfg.MemoryWait)}
	for _, o := range opts {
		o(p)
	}
	if p.metrics == nil {
		p.metrics = libmetrics.New(nil)
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.prov = provindex.New(bucket, provindex.Options{Now: func() time.Time { return p.now() }, Log: p.log, Registerer: p.reg})
	return p
}

// Config returns the layout the publisher writes (BlobSpace, Root).
func (p *Publisher) Config() Config { return p.cfg }

// Budget is the replica's memory budget the publisher draws on; the server
// charges a publish's folder to it while receiving it.
func (p *Publisher) Budget() *versions.Budget { return p.budget }

// Actor is who asks for a change.
type Actor struct {
	// User is the caller's verified user ID (mounts.Caller): its own
	// library, and whose proposals it sees.
	User   string
	Author string // the token subject, else the user: versions name it (shown, never trusted)
	Admin  bool
	// Teams are the caller's verified teams (mounts.Caller.Teams): a
	// member reads its team library's versions and proposes new ones.
	Teams []string
}

// ProblemsError is a refused folder and every problem found in it.
type ProblemsError struct {
	Problems []skillmd.Problem
}

func (e *ProblemsError) Error() string {
	var msgs []string
	for _, p := range e.Problems {
		if p.Severity == skillmd.SeverityError {
			msgs = append(msgs, p.Message)
		}
	}
	return "invalid argument: the skill folder is invalid: " + strings.Join(msgs, "; ")
}

// Unwrap gives the error its kind.
func (e *ProblemsError) Unwrap() error { return errkind.InvalidArgument }

// SkillProblems lets the error table attach the problems to the status.
func (e *ProblemsError) SkillProblems() []skillmd.Problem { return e.Problems }

// access is what a call does to a library.
type access int

const (
	read access = iota
	publish
	write  // delete, labels, rollback
	review // approve or reject
)

// authorize decides a call in one place: anyone acts on their own user
// library, admins on any; the shared library is read by all, and a team's
// by its members; a non-admin publishes to the shared library, and a
// member to its team's, only as a pending version when review is on. It
// returns the library (the caller's own when l is zero) and whether a
// publish is pending.
func (p *Publisher) authorize(a Actor, l layout.LibraryRef, what access) (layout.LibraryRef, bool, error) {
	if l == (layout.LibraryRef{}) {
		l = layout.LibraryRef{User: a.User}
	}
	if err := l.Validate(); err != nil {
		return l, false, err
	}
	own := l.User != "" && l.User == a.User
	member := l.Team != "" && slices.Contains(a.Teams, l.Team)
	common := l.Shared || member // a library the caller reads but does not own
	switch {
	case what == review && !a.Admin:
		return l, false, fmt.Errorf("%w: reviewing a version needs an admin", errkind.PermissionDenied)
	case a.Admin || own || (common && what == read):
		return l, false, nil
	case common && what == publish && p.cfg.Review:
		return l, true, nil
	case l.Shared && what == publish:
		return l, false, fmt.Errorf("%w: publishing to the shared library needs an admin", errkind.PermissionDenied)
	case l.Shared:
		return l, false, fmt.Errorf("%w: changing the shared library needs an admin", errkind.PermissionDenied)
	case member && what == publish:
		return l, false, fmt.Errorf("%w: publishing to team %s's library needs an admin (or --library.review, for a pending version)", errkind.PermissionDenied, l.Team)
	case member:
		return l, false, fmt.Errorf("%w: changing team %s's library needs an admin", errkind.PermissionDenied, l.Team)
	case l.Team != "":
		return l, false, fmt.Errorf("%w: the caller is not a member of team %s", errkind.PermissionDenied, l.Team)
	}
	return l, false, fmt.Errorf("%w: a caller acts only on its own library", errkind.PermissionDenied)
}

func (p *Publisher) store(l layout.LibraryRef) versions.Store {
	return versions.Store{Bucket: p.bucket, Root: p.cfg.Root(l), Max: p.cfg.MaxVersions, Log: p.log, MaxProposals: p.cfg.MaxProposals}
}

// lock holds the skill's lock while fn runs: two changes of one skill
// never interleave their live writes (in this process and, with Redis,
// across replicas). A change an earlier one left unfinished (live.go) is
// rolled forward first.
func (p *Publisher) lock(ctx context.Context, l layout.LibraryRef, name string, fn func() error) error {
	key := p.lockKey(l, name)
	deadline := time.Now().Add(p.cfg.LockWait)
	wait := 5 * time.Millisecond
	run := func() error {
		if _, err := p.rollForward(ctx, l, name); err != nil {
			return err
		}
		return fn()
	}
	for {
		unlock, ok, err := p.locks.TryLock(ctx, key, lockTTL)
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if ok {
			defer unlock()
			return run()
		}
		if err != nil {
			// The shared cache is down: a change goes ahead unordered
			// rather than fail; if_latest still guards it.
			return run()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: another change of skill %s is under way; try again", errkind.Aborted, name)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, 200*time.Millisecond)
	}
}

// Version is a record with the labels pointing at it, and its library.
type Version struct {
	versions.Record
	Library layout.LibraryRef
	Labels  []string
}

// PublishRequest is one skill folder to publish.
type PublishRequest struct {
	Library      layout.LibraryRef // zero: the actor's own
	Category     string
	Name         string
	Labels       []string
	Message      string
	ValidateOnly bool
	IfLatest     string
	Files        []skillmd.File
}

// Result is what a change made.
type Result struct {
	Version  Version
	Problems []skillmd.Problem // warnings (and, validating only, errors)
	Valid    bool
	Pending  bool
	Removed  []string // files of the previous live copy removed
	// Evals are the folder's eval_queries.json run against the library
	// with this version in it (internal/coexist).
	Evals []coexist.TriggerEval
}

func checkText(field, s string) error {
	if utf8.RuneCountInString(s) > versions.MaxMessageRunes {
		return fmt.Errorf("%w: %s is over %d characters", errkind.InvalidArgument, field, versions.MaxMessageRunes)
	}
	return nil
}

// CheckCategory accepts "" or one canonical path segment.
func CheckCategory(c string) error {
	if c != "" && (!mounts.Addressable(c) || strings.Contains(c, "/") || strings.HasPrefix(c, ".")) {
		return fmt.Errorf("%w: category %q must be one path segment (or empty for a flat skill)", errkind.InvalidArgument, versions.Clip(c))
	}
	return nil
}

// dir is the skill folder's path in its library.
func dir(category, name string) string {
	if category == "" {
		return name
	}
	return category + "/" + name
}

// Publish validates the folder and, when valid, keeps it as a version and
// (unless pending) writes it as the library's live copy and moves latest.
func (p *Publisher) Publish(ctx context.Context, a Actor, req PublishRequest) (res Result, err error) {
	defer func() {
		op := "publish"
		switch {
		case req.ValidateOnly:
			op = "validate"
		case res.Pending:
			op = "pending"
		}
		count(p.metrics, op, err)
		if err == nil && !req.ValidateOnly {
			p.metrics.Bytes.Add(float64(res.Version.TotalBytes))
		}
	}()
	l, pending, err := p.authorize(a, req.Library, publish)
	if err != nil {
		return Result{}, err
	}
	if err := errors.Join(CheckCategory(req.Category), checkText("message", req.Message)); err != nil {
		return Result{}, err
	}
	for _, lb := range req.Labels {
		if err := versions.CheckLabel(lb); err != nil {
			return Result{}, err
		}
	}
	problems := skillmd.CheckFolder(req.Name, req.Files)
	// The collision rule reads the library's index: only for a folder
	// otherwise valid, so a refused folder costs no storage request.
	if !skillmd.HasErrors(problems) {
		ps, err := p.collisions(ctx, l, req.Category, req.Name)
		if err != nil {
			return Result{}, err
		}
		problems = append(problems, ps...)
	}
	valid := !skillmd.HasErrors(problems)
	if !valid && !req.ValidateOnly {
		return Result{}, &ProblemsError{Problems: problems}
	}
	var evals []coexist.TriggerEval
	if valid {
		var ps []skillmd.Problem
		check := coexist.Check{Search: p.compete, Timeout: p.cfg.CoexistenceTimeout, Log: p.log}
		ps, evals = check.Run(ctx, l, req.Name, coexist.Candidate{Dir: dir(req.Category, req.Name), Files: req.Files})
		problems = append(problems, ps...)
	}
	rec := recordOf(req, a, p.now())
	var report *scan.Report
	if valid {
		ps, r, err := p.scanCandidate(ctx, l, rec, req)
		if err != nil {
			return Result{}, err
		}
		problems, report = append(problems, ps...), r
		if r != nil {
			rec.ScanVerdict = string(r.Verdict) // the version's provenance
		}
		valid = !skillmd.HasErrors(problems)
	}
	// Every live key is checked before anything is written.
	paths := make([]string, len(req.Files))
	for i, f := range req.Files {
		paths[i] = f.Path
	}
	if _, err := p.liveBase(l, req.Category, req.Name, paths); err != nil {
		return Result{}, err
	}
	// The warnings stay with the version, for its reviewer.
	rec.Problems = versions.WarningsOf(problems)
	if pending {
		// A proposal: the author's own, whatever is stored; it moves no
		// label and writes nothing live until an admin approves it.
		if len(req.Labels) > 0 {
			return Result{}, fmt.Errorf("%w: labels are moved by an admin; a pending publish moves none", errkind.PermissionDenied)
		}
		rec.Content, rec.ID, rec.Proposer, rec.State = rec.ID, versions.ProposalID(a.User, rec.ID), a.User, versions.Pending
	}
	if err := versions.CheckNewRecord(rec); err != nil {
		return Result{}, err
	}
	res = Result{Version: Version{Record: rec, Library: l}, Problems: problems, Valid: valid, Pending: pending, Evals: evals}
	if req.ValidateOnly {
		res.Version.Created = time.Time{}
		return res, nil
	}
	s := p.store(l)
	err = p.lock(ctx, l, req.Name, func() error {
		refs, _, err := s.Refs(ctx, req.Name)
		if err != nil {
			return err
		}
		if err := p.checkIfLatest(ctx, l, s, refs, req.Name, req.Category, req.IfLatest); err != nil {
			return err
		}
		if pending {
			err = p.checkProposals(ctx, s, a, rec)
		} else {
			err = p.checkVersions(ctx, s, rec)
		}
		if err != nil {
			return err
		}
		data := make(map[string][]byte, len(req.Files))
		var rewrote [][]byte
		for _, f := range req.Files {
			st, err := p.blobs.Put(ctx, p.cfg.BlobSpace(l), f.Data)
			if err != nil {
				return err
			}
			if st.Rewrote {
				rewrote = append(rewrote, f.Data)
			}
			data[f.Path] = f.Data
		}
		if err := p.storeReport(ctx, l, rec, report); err != nil {
			return err
		}
		kept, err := p.keepRecord(ctx, s, rec)
		if err != nil {
			return err
		}
		// An old blob this version reuses was written again; a collection
		// that had already stat'ed it may have deleted it since. Once the
		// record names it, every later collection keeps it: put back what
		// is gone.
		for _, b := range rewrote {
			if _, err := p.blobs.Put(ctx, p.cfg.BlobSpace(l), b); err != nil {
				return err
			}
		}
		if pending {
			// The author's own proposal again: back to pending if it was
			// rejected (another author's is another record).
			if kept.State != versions.Pending {
				if kept, err = p.setState(ctx, s, kept, func(r *versions.Record) {
					r.State, r.Message, r.Reviewer, r.ReviewTime, r.ReviewComment = versions.Pending, rec.Message, "", time.Time{}, ""
					r.Problems = rec.Problems // what this proposal's check found
				}); err != nil {
					return err
				}
			}
			res.Version.Record = kept
			return nil
		}
		// Published by a caller allowed to (an admin, or the library's
		// owner), a stored pending or rejected record of these files too.
		if kept.State != versions.Published {
			if kept, err = p.setState(ctx, s, kept, func(r *versions.Record) { r.State = versions.Published }); err != nil {
				return err
			}
		}
		removed, refs, err := p.goLive(ctx, l, kept, req.Labels, func(rel string) ([]byte, error) { return data[rel], nil })
		if err != nil {
			return err
		}
		res.Removed = removed
		res.Version = Version{Record: kept, Library: l, Labels: versions.LabelsOf(refs, kept.ID)}
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	if res.Pending {
		res.Version.Library = l
		res.Version.Labels = nil
	}
	// Only warnings are returned with a publish.
	res.Problems = slices.DeleteFunc(res.Problems, func(pr skillmd.Problem) bool { return pr.Severity == skillmd.SeverityError })
	return res, nil
}

// checkVersions refuses a new version past --library.max-versions.
// Proposals are kept apart: they never fill it.
func (p *Publisher) checkVersions(ctx context.Context, s versions.Store, rec versions.Record) error {
	hexes, err := s.VersionHexes(ctx, rec.Name, "")
	if err != nil {
		return err
	}
	if len(hexes) >= p.cfg.MaxVersions && !slices.Contains(hexes, strings.TrimPrefix(rec.ID, "sha256:")) {
		return fmt.Errorf("%w: skill %s has %d versions, the most kept (--library.max-versions)", errkind.FailedPrecondition, rec.Name, len(hexes))
	}
	return nil
}

// checkProposals refuses a new proposal past the skill's proposals
// (--library.max-proposals) or its author's pending ones
// (--library.max-proposals-per-author); the author's own proposal of the
// same files again is no new one.
func (p *Publisher) checkProposals(ctx context.Context, s versions.Store, a Actor, rec versions.Record) error {
	objs, err := s.ProposalObjects(ctx, rec.Name, "")
	if err != nil {
		return err
	}
	key := s.KeyOf(rec)
	if slices.ContainsFunc(objs, func(o objstore.Object) bool { return o.Key == key }) {
		return nil
	}
	if len(objs) >= p.cfg.MaxProposals {
		return fmt.Errorf("%w: skill %s has %d proposals, the most kept (--library.max-proposals); an admin rejects or deletes some (RejectProposals)", errkind.FailedPrecondition, rec.Name, len(objs))
	}
	mem := p.budget.Reserve()
	defer mem.Release()
	mine := 0
	for _, o := range objs {
		r, ok, err := s.ReadRecord(ctx, rec.Name, o.Key, mem)
		if err != nil {
			return err
		}
		if ok && r.Proposer == a.User && r.State == versions.Pending {
			mine++
		}
		mem.Release() // one record held at a time
	}
	if mine >= p.cfg.MaxProposalsPerAuthor {
		return fmt.Errorf("%w: you have %d pending proposals of skill %s, the most kept (--library.max-proposals-per-author); wait for their review", errkind.FailedPrecondition, mine, rec.Name)
	}
	return nil
}

// recordOf is the version record of a folder.
func recordOf(req PublishRequest, a Actor, now time.Time) versions.Record {
	fds := make([]skillmd.FileDigest, len(req.Files))
	var total int64
	for i, f := range req.Files {
		fds[i] = skillmd.FileDigest{Rel: f.Path, Size: int64(len(f.Data)), SHA256: string(blobs.Of(f.Data)), Mode: filemode.Of(f.Mode, f.Data)}
		total += int64(len(f.Data))
	}
	slices.SortFunc(fds, func(x, y skillmd.FileDigest) int { return strings.Compare(x.Rel, y.Rel) })
	return versions.Record{
		ID: skillmd.ManifestDigest(fds), Name: req.Name, Category: req.Category, Created: now.UTC(),
		Author: a.Author, Message: req.Message, State: versions.Published, Files: fds, TotalBytes: total,
	}
}

// collisions refuses a name another folder of the library already uses.
func (p *Publisher) collisions(ctx context.Context, l layout.LibraryRef, category, name string) ([]skillmd.Problem, error) {
	list, err := p.catalog.LibrarySkills(ctx, l)
	if err != nil {
		return nil, err
	}
	want := dir(category, name)
	for _, s := range list {
		if s.Dir != want && (s.Name == name || s.Folder == name) {
			return []skillmd.Problem{{
				Severity: skillmd.SeverityError, Field: "name", Rule: RuleNameUnique, Value: name,
				Message: fmt.Sprintf("the library already has a skill named %q at %s; delete it first or publish to that folder", name, s.Dir),
			}}, nil
		}
	}
	return nil, nil
}

// RuleNameUnique: a name is one skill's in a library.
const RuleNameUnique = "name-unique"

// checkIfLatest applies a change's if_latest: "none" while the skill has
// no latest version and no live SKILL.md, else the version latest must be.
func (p *Publisher) checkIfLatest(ctx context.Context, l layout.LibraryRef, s versions.Store, refs versions.Refs, name, category, ifLatest string) error {
	if ifLatest == "" {
		return nil
	}
	latest := refs.Labels[versions.Latest]
	if ifLatest == "none" {
		prefix, err := p.catalog.LibraryPrefix(l)
		if err != nil {
			return err
		}
		_, statErr := p.bucket.Stat(ctx, prefix+dir(category, name)+"/"+skillmd.SkillFile)
		switch {
		case statErr != nil && !objstore.IsNotFound(statErr):
			return statErr
		case latest != "" || statErr == nil:
			return fmt.Errorf("%w: skill %s already exists (if_latest is \"none\")", errkind.FailedPrecondition, name)
		}
		return nil
	}
	h := versions.HexOf(ifLatest)
	if h == "" {
		return fmt.Errorf("%w: if_latest %q is not a version id (or \"none\")", errkind.InvalidArgument, versions.Clip(ifLatest))
	}
	if !strings.HasPrefix(strings.TrimPrefix(latest, "sha256:"), h) {
		return fmt.Errorf("%w: latest of %s is %s, not %s", errkind.FailedPrecondition, name, orNone(latest), versions.Clip(ifLatest))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// keepRecord writes rec unless it exists, and returns the stored record
// (the first publish's time and author stay).
func (p *Publisher) keepRecord(ctx context.Context, s versions.Store, rec versions.Record) (versions.Record, error) {
	key := s.KeyOf(rec)
	if err := s.Mark(ctx, rec); err != nil {
		return versions.Record{}, err
	}
	err := s.PutJSON(ctx, key, rec, objstore.PutOptions{IfNoneMatch: true})
	if err == nil {
		return rec, nil
	}
	if !objstore.LostRace(err) {
		return versions.Record{}, err
	}
	old, _, err := s.RecordAt(ctx, key)
	if err != nil {
		return versions.Record{}, err
	}
	if !old.Created.Equal(rec.Created) {
		_ = s.Bucket.Delete(ctx, s.MarkerKey(rec)) // stale; listings skip it anyway
	}
	if old.Category != rec.Category {
		// A category move publishes the same files elsewhere: the record
		// says where, so a later rollback writes the folder there.
		return p.setState(ctx, s, old, func(r *versions.Record) { r.Category = rec.Category })
	}
	return old, nil
}

// setState changes a record's state (and review) by a conditional write.
func (p *Publisher) setState(ctx context.Context, s versions.Store, rec versions.Record, change func(*versions.Record)) (versions.Record, error) {
	key := s.KeyOf(rec)
	var out versions.Record
	err := objstore.RetryConditional(ctx, 8, 20*time.Millisecond, func() error {
		cur, etag, err := s.RecordAt(ctx, key)
		if err != nil {
			return err
		}
		change(&cur)
		if err := s.PutJSON(ctx, key, cur, objstore.PutOptions{IfMatch: etag}); err != nil {
			return err
		}
		out = cur
		return nil
	})
	if objstore.LostRace(err) {
		return versions.Record{}, fmt.Errorf("%w: version %s changed concurrently; try again", errkind.Aborted, rec.ID)
	}
	return out, err
}

// liveDir finds the folder of the library serving name.
func (p *Publisher) liveDir(ctx context.Context, l layout.LibraryRef, name string) (string, bool, error) {
	list, err := p.catalog.LibrarySkills(ctx, l)
	if err != nil {
		return "", false, err
	}
	for _, s := range list {
		if s.Name == name || s.Dir == name {
			return s.Dir, true, nil
		}
	}
	return "", false, nil
}

// Delete removes every file of the skill's live copy (SKILL.md first, so
// no reader sees a skill missing its files) and the latest label; its
// versions stay for a rollback.
func (p *Publisher) Delete(ctx context.Context, a Actor, lib layout.LibraryRef, name, ifLatest string) (_ int, err error) {
	defer func() { count(p.metrics, "delete", err) }()
	l, _, err := p.authorize(a, lib, write)
	if err != nil {
		return 0, err
	}
	if err := checkName(name); err != nil {
		return 0, err
	}
	s := p.store(l)
	removed := 0
	err = p.lock(ctx, l, name, func() error {
		d, ok, err := p.liveDir(ctx, l, name)
		if err != nil {
			return err
		}
		refs, _, err := s.Refs(ctx, name)
		if err != nil {
			return err
		}
		if !ok && refs.Labels[versions.Latest] == "" {
			return fmt.Errorf("%w: the library has no skill %q", errkind.NotFound, name)
		}
		if ifLatest != "" && ifLatest != "none" {
			if err := p.checkIfLatest(ctx, l, s, refs, name, "", ifLatest); err != nil {
				return err
			}
		}
		if ok {
			if removed, err = p.removeFolder(ctx, l, d); err != nil {
				return err
			}
		}
		if _, err := s.UpdateRefs(ctx, name, func(r *versions.Refs) error { delete(r.Labels, versions.Latest); return nil }); err != nil {
			return err
		}
		p.changed(ctx, l)
		return nil
	})
	return removed, err
}

// removeFolder deletes every file of the library's folder d, SKILL.md
// first, so no reader sees a skill missing its files.
func (p *Publisher) removeFolder(ctx context.Context, l layout.LibraryRef, d string) (int, error) {
	prefix, err := p.catalog.LibraryPrefix(l)
	if err != nil {
		return 0, err
	}
	base := prefix + d + "/"
	var keys []string
	if err := objstore.Walk(ctx, p.bucket, base, func(o objstore.Object) error {
		keys = append(keys, o.Key)
		return nil
	}); err != nil {
		return 0, err
	}
	slices.SortStableFunc(keys, func(x, y string) int {
		return -compareBool(path.Base(x) == skillmd.SkillFile && path.Dir(x)+"/" == base, path.Base(y) == skillmd.SkillFile && path.Dir(y)+"/" == base)
	})
	removed := 0
	for _, k := range keys {
		if err := p.bucket.Delete(ctx, k); err != nil {
			return removed, err
		}
		removed++
	}
	return removed, nil
}

// removeOthers deletes the skill's live folders other than rec's (another
// category's): a name is served from one folder, the one just written.
func (p *Publisher) removeOthers(ctx context.Context, l layout.LibraryRef, rec versions.Record) error {
	list, err := p.catalog.LibrarySkills(ctx, l)
	if err != nil {
		return err
	}
	want := dir(rec.Category, rec.Name)
	for _, sk := range list {
		if sk.Dir != want && (sk.Name == rec.Name || sk.Folder == rec.Name) {
			if _, err := p.removeFolder(ctx, l, sk.Dir); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkName accepts a skill name.
func checkName(name string) error {
	if !skillmd.ValidName(name) || len(name) > skillmd.MaxNameLen {
		return fmt.Errorf("%w: name %q is not a skill name", errkind.InvalidArgument, versions.Clip(name))
	}
	return nil
}

// visible reports whether a may see rec: a pending or rejected version
// only its author, by verified user ID (a token subject may be shared),
// and admins.
func visible(a Actor, rec versions.Record) bool {
	switch {
	case rec.State == versions.Published || a.Admin:
		return true
	case a.User == "":
		return false
	case rec.Proposer != "":
		return rec.Proposer == a.User
	}
	// A pending record stored before proposals were kept apart names its
	// author by token subject, else user: its user alone sees it.
	return rec.Author == a.User
}
