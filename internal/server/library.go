package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	authors "github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/provenance"
	"github.com/skillsvc/skillsvc/internal/server/convert"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// AdminKey is the metadata key an insecure-mode caller sets to "true" to
// act as an admin on LibraryService (and see pending versions in pinned
// reads); auth decides it (auth.Principal.LibraryAdmin).
const AdminKey = auth.AdminKey

// Versions is what the skills and library services need of the authors'
// path: the publisher.
type Versions struct {
	Pub   *authors.Publisher
	Table *mounts.Table
	// Provenance looks up the provenance of served skills, aligned with
	// origins (internal/provenance's Lookup.Page), for GetSkill, ListSkills
	// and SearchSkills; nil: none.
	Provenance func(ctx context.Context, id mounts.Caller, origins []provenance.Origin) ([]*skillsvcv1.Provenance, error)
}

// actor is who a LibraryService call (or a pinned read) acts as, an admin
// as auth decided. The version author is the token subject, else the user.
func (v *Versions) actor(ctx context.Context) (authors.Actor, mounts.Caller, error) {
	id, err := identity(ctx)
	if err != nil {
		return authors.Actor{}, id, err
	}
	p, _ := auth.PrincipalFrom(ctx)
	a := authors.Actor{User: id.User(), Author: p.Subject, Admin: p.LibraryAdmin, Teams: id.Teams()}
	if a.Author == "" {
		a.Author = id.User()
	}
	return a, id, nil
}

// Library serves skillsvc.v1.LibraryService.
type Library struct {
	skillsvcv1.UnimplementedLibraryServiceServer
	v       *Versions
	catalog *skills.Catalog
}

// NewLibrary returns the service.
func NewLibrary(v *Versions, catalog *skills.Catalog) *Library {
	return &Library{v: v, catalog: catalog}
}

// Bounds of a PublishSkill stream beside the folder's own (bytes, files).
const (
	maxPublishLabels = 16
	// maxPublishMessages bounds the messages of one stream: empty chunks
	// cost no bytes, but each costs a receive.
	maxPublishMessages = 1 << 16
)

// PublishSkill implements LibraryService.
func (s *Library) PublishSkill(stream skillsvcv1.LibraryService_PublishSkillServer) error {
	ctx := stream.Context()
	a, _, err := s.v.actor(ctx)
	if err != nil {
		return err
	}
	// The folder is held from its first chunk to the answer: on the
	// replica's one budget of publishes and version reads.
	mem := s.v.Pub.Budget().Reserve()
	defer mem.Release()
	h, files, err := receiveFolder(stream, mem)
	if err != nil {
		drainPublish(stream)
		return err
	}
	req := authors.PublishRequest{
		Library: libraryRef(h.GetLibrary()), Category: h.GetCategory(), Name: h.GetName(), Labels: h.GetLabels(),
		Message: h.GetMessage(), ValidateOnly: h.GetValidateOnly(), IfLatest: h.GetIfLatest(), Files: files,
	}
	res, err := s.v.Pub.Publish(ctx, a, req)
	if err != nil {
		return err
	}
	out := &skillsvcv1.PublishSkillResponse{Version: convert.Version(res.Version, false), Problems: convert.Problems(res.Problems), RemovedFiles: res.Removed, Valid: res.Valid, Evals: convert.Evals(s.catalog.Mount(), res.Evals)}
	if req.ValidateOnly {
		out.Version.CreateTime = nil
		return stream.SendAndClose(out)
	}
	if !res.Pending {
		out.Skill = s.summary(ctx, res.Version)
	}
	return stream.SendAndClose(out)
}

// receiveFolder reads a PublishSkill stream: the header once and first,
// then chunks, consecutive chunks of one path appending. It refuses as
// soon as the folder passes the file-count or byte limit, so what it holds
// is bounded by them, and charges what it holds to mem.
func receiveFolder(stream skillsvcv1.LibraryService_PublishSkillServer, mem *versions.Reservation) (*skillsvcv1.PublishSkillHeader, []skillmd.File, error) {
	first, err := stream.Recv()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%w: PublishSkill sent no header", errkind.InvalidArgument)
		}
		return nil, nil, err
	}
	h := first.GetHeader()
	if h == nil {
		return nil, nil, fmt.Errorf("%w: the first PublishSkill message must be a header", errkind.InvalidArgument)
	}
	if err := checkHeader(h); err != nil {
		return nil, nil, err
	}
	var files []skillmd.File
	var total int64
	for n := 1; ; n++ {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return h, files, nil
		}
		if err != nil {
			return nil, nil, err
		}
		c := msg.GetChunk()
		switch {
		case n > maxPublishMessages:
			return nil, nil, fmt.Errorf("%w: PublishSkill sent more than %d messages", errkind.InvalidArgument, maxPublishMessages)
		case c == nil:
			return nil, nil, fmt.Errorf("%w: only the first PublishSkill message is a header", errkind.InvalidArgument)
		case c.GetPath() == "":
			return nil, nil, fmt.Errorf("%w: chunk %d has no path", errkind.InvalidArgument, n)
		}
		total += int64(len(c.GetData()))
		// What the folder holds is charged as allocated: appending
		// grows a file's buffer up to twice its bytes.
		var grew int
		// The mode is the first chunk's that gives one; only its
		// executable bit counts (filemode.Of).
		mode := fs.FileMode(c.GetMode()).Perm()
		if last := len(files) - 1; last >= 0 && files[last].Path == c.GetPath() {
			before := cap(files[last].Data)
			files[last].Data = append(files[last].Data, c.GetData()...)
			grew = cap(files[last].Data) - before
			if files[last].Mode == 0 {
				files[last].Mode = mode
			}
		} else {
			files = append(files, skillmd.File{Path: c.GetPath(), Data: c.GetData(), Mode: mode})
			grew = cap(c.GetData())
		}
		if err := mem.Take(stream.Context(), int64(grew)); err != nil {
			return nil, nil, err
		}
		if len(files) > skillmd.MaxSkillFiles || total > skillmd.MaxSkillBytes {
			// Every problem is found once the folder is whole; past a
			// limit it never will be, and is not held.
			return nil, nil, &authors.ProblemsError{Problems: skillmd.CheckFolder(h.GetName(), files)}
		}
	}
}

// checkHeader bounds the header's fields the publisher does not check
// itself (it checks name, category, labels and message).
func checkHeader(h *skillsvcv1.PublishSkillHeader) error {
	switch {
	case h.GetName() == "":
		return fmt.Errorf("%w: header.name is required", errkind.InvalidArgument)
	case len(h.GetLabels()) > maxPublishLabels:
		return fmt.Errorf("%w: at most %d labels", errkind.InvalidArgument, maxPublishLabels)
	case len(h.GetIfLatest()) > 71:
		return fmt.Errorf("%w: if_latest is a version id or \"none\"", errkind.InvalidArgument)
	case len(h.GetName()) > 256:
		return fmt.Errorf("%w: header.name is too long", errkind.InvalidArgument)
	}
	return authors.CheckCategory(h.GetCategory())
}

// drainPublish reads what the client of a refused publish still sends
// (up to drainLimit), as drainUpload does, so it learns why.
func drainPublish(stream skillsvcv1.LibraryService_PublishSkillServer) {
	for n := 0; n < drainLimit; {
		msg, err := stream.Recv()
		if err != nil {
			return
		}
		n += max(len(msg.GetChunk().GetData()), 1)
	}
}

// summary is the skill as the catalog now lists it to its library's
// owner (the caller, for the shared library; the caller as the team's
// member, for a team's); nil when it cannot say.
func (s *Library) summary(ctx context.Context, v authors.Version) *skillsvcv1.SkillSummary {
	id, err := identity(ctx)
	if err != nil {
		return nil
	}
	switch {
	case v.Library.Team != "":
		if id, err = s.v.Table.Identify(mounts.Identity{User: id.User(), Thread: id.Thread(), Teams: v.Library.Team}); err != nil {
			return nil
		}
	case !v.Library.Shared && v.Library.User != id.User():
		if id, err = s.v.Table.Identify(mounts.Identity{User: v.Library.User, Thread: "index"}); err != nil {
			return nil
		}
	}
	path := s.catalog.Mount() + "/" + v.Name
	if v.Category != "" {
		path = s.catalog.Mount() + "/" + v.Category + "/" + v.Name
	}
	d, err := s.catalog.Get(ctx, id, path)
	if err != nil || (v.Library.Team != "" && d.Layer != skillview.LayerTeam+v.Library.Team) {
		return nil // a team's skill the caller's own shadows is not the one published
	}
	return summaryProto(d.Skill, full)
}

// DeleteSkill implements LibraryService.
func (s *Library) DeleteSkill(ctx context.Context, req *skillsvcv1.DeleteSkillRequest) (*skillsvcv1.DeleteSkillResponse, error) {
	a, _, err := s.v.actor(ctx)
	if err != nil {
		return nil, err
	}
	n, err := s.v.Pub.Delete(ctx, a, libraryRef(req.GetLibrary()), req.GetName(), req.GetIfLatest())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.DeleteSkillResponse{RemovedFiles: int32(n)}, nil
}

// ListSkillVersions implements LibraryService.
func (s *Library) ListSkillVersions(ctx context.Context, req *skillsvcv1.ListSkillVersionsRequest) (*skillsvcv1.ListSkillVersionsResponse, error) {
	a, _, err := s.v.actor(ctx)
	if err != nil {
		return nil, err
	}
	state, err := convert.StateOf(req.GetState())
	if err != nil {
		return nil, err
	}
	page, err := s.v.Pub.ListVersions(ctx, a, authors.ListRequest{
		Library: libraryRef(req.GetLibrary()), Name: req.GetName(), State: state, PageSize: req.GetPageSize(), PageToken: req.GetPageToken(),
	})
	if err != nil {
		return nil, err
	}
	out := &skillsvcv1.ListSkillVersionsResponse{NextPageToken: page.Next, Labels: page.Labels}
	for _, v := range page.Versions {
		out.Versions = append(out.Versions, convert.Version(v, false))
	}
	return out, nil
}

// GetSkillVersion implements LibraryService.
func (s *Library) GetSkillVersion(ctx context.Context, req *skillsvcv1.GetSkillVersionRequest) (*skillsvcv1.GetSkillVersionResponse, error) {
	a, _, err := s.v.actor(ctx)
	if err != nil {
		return nil, err
	}
	v, raw, err := s.v.Pub.GetVersion(ctx, a, libraryRef(req.GetLibrary()), req.GetName(), req.GetVersion())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.GetSkillVersionResponse{Version: convert.Version(v, true), Raw: string(raw)}, nil
}

// SetSkillLabel implements LibraryService.
func (s *Library) SetSkillLabel(ctx context.Context, req *skillsvcv1.SetSkillLabelRequest) (*skillsvcv1.SetSkillLabelResponse, error) {
	a, _, err := s.v.actor(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.v.Pub.SetLabel(ctx, a, libraryRef(req.GetLibrary()), req.GetName(), req.GetLabel(), req.GetVersion())
	if err != nil {
		return nil, err
	}
	out := &skillsvcv1.SetSkillLabelResponse{}
	if v != nil {
		out.Version = convert.Version(*v, false)
	}
	return out, nil
}

// RollbackSkill implements LibraryService.
func (s *Library) RollbackSkill(ctx context.Context, req *skillsvcv1.RollbackSkillRequest) (*skillsvcv1.RollbackSkillResponse, error) {
	a, _, err := s.v.actor(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.v.Pub.Rollback(ctx, a, libraryRef(req.GetLibrary()), req.GetName(), req.GetVersion(), req.GetIfLatest())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.RollbackSkillResponse{Version: convert.Version(res.Version, false), Skill: s.summary(ctx, res.Version), RemovedFiles: res.Removed}, nil
}

// ReviewSkillVersion implements LibraryService.
func (s *Library) ReviewSkillVersion(ctx context.Context, req *skillsvcv1.ReviewSkillVersionRequest) (*skillsvcv1.ReviewSkillVersionResponse, error) {
	a, _, err := s.v.actor(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.v.Pub.Review(ctx, a, libraryRef(req.GetLibrary()), req.GetName(), req.GetVersion(), req.GetApprove(), req.GetComment())
	if err != nil {
		return nil, err
	}
	out := &skillsvcv1.ReviewSkillVersionResponse{Version: convert.Version(res.Version, false), RemovedFiles: res.Removed}
	if req.GetApprove() {
		out.Skill = s.summary(ctx, res.Version)
	}
	return out, nil
}

// libraryRef converts a request's library; nil is the caller's own.
func libraryRef(r *skillsvcv1.LibraryRef) layout.LibraryRef {
	if r == nil {
		return layout.LibraryRef{}
	}
	return library(r)
}

// problemField names where a problem is, for google.rpc.BadRequest.
func problemField(p skillmd.Problem) string {
	return strings.Trim(p.File+":"+p.Field, ":")
}
