package server

import (
	"context"
	"fmt"
	"io/fs"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/layout"
	authors "github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/settings"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// Admin serves skillsvc.v1.AdminService, the operators' calls. auth admits
// only admin principals; the request names the user (or the shared
// library) acted on.
type Admin struct {
	skillsvcv1.UnimplementedAdminServiceServer
	catalog  *skills.Catalog
	versions *Versions
}

// NewAdmin returns the service over the catalog whose caches it drops and
// the authors' path whose libraries it collects garbage of.
func NewAdmin(c *skills.Catalog, v *Versions) *Admin {
	return &Admin{catalog: c, versions: v}
}

// DropSkillIndex implements AdminService. The catalog validates the reference.
func (a *Admin) DropSkillIndex(ctx context.Context, req *skillsvcv1.DropSkillIndexRequest) (*skillsvcv1.DropSkillIndexResponse, error) {
	if err := a.catalog.DropLibraryIndex(ctx, layout.LibraryRef{User: req.GetUser(), Shared: req.GetShared(), Team: req.GetTeam()}); err != nil {
		return nil, err
	}
	return &skillsvcv1.DropSkillIndexResponse{}, nil
}

// SetUserSkillEnabled implements AdminService.
func (a *Admin) SetUserSkillEnabled(ctx context.Context, req *skillsvcv1.SetUserSkillEnabledRequest) (*skillsvcv1.SetUserSkillEnabledResponse, error) {
	sk, err := a.catalog.SetUserEnabled(ctx, req.GetUser(), req.GetPath(), req.GetEnabled())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.SetUserSkillEnabledResponse{Skill: summaryProto(sk, described)}, nil
}

func library(r *skillsvcv1.LibraryRef) layout.LibraryRef {
	return layout.LibraryRef{User: r.GetUser(), Shared: r.GetShared(), Team: r.GetTeam()}
}

// PutLibraryFile implements AdminService.
func (a *Admin) PutLibraryFile(ctx context.Context, req *skillsvcv1.PutLibraryFileRequest) (*skillsvcv1.PutLibraryFileResponse, error) {
	attrs, err := a.catalog.PutLibraryFile(ctx, library(req.GetLibrary()), req.GetPath(), req.GetData(),
		objstore.PutOptions{IfMatch: req.GetIfMatch(), IfNoneMatch: req.GetMustNotExist(), Mode: filemode.Normal(fs.FileMode(req.GetMode()).Perm())})
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.PutLibraryFileResponse{Etag: attrs.ETag, Size: attrs.Size}, nil
}

// DeleteLibraryFile implements AdminService.
func (a *Admin) DeleteLibraryFile(ctx context.Context, req *skillsvcv1.DeleteLibraryFileRequest) (*skillsvcv1.DeleteLibraryFileResponse, error) {
	if err := a.catalog.DeleteLibraryFile(ctx, library(req.GetLibrary()), req.GetPath()); err != nil {
		return nil, err
	}
	return &skillsvcv1.DeleteLibraryFileResponse{}, nil
}

// SetSkillProtected implements AdminService.
func (a *Admin) SetSkillProtected(ctx context.Context, req *skillsvcv1.SetSkillProtectedRequest) (*skillsvcv1.SetSkillProtectedResponse, error) {
	names, err := a.catalog.SetProtected(ctx, library(req.GetLibrary()), req.GetName(), req.GetProtected())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.SetSkillProtectedResponse{Names: names}, nil
}

// ListProtectedSkills implements AdminService.
func (a *Admin) ListProtectedSkills(ctx context.Context, req *skillsvcv1.ListProtectedSkillsRequest) (*skillsvcv1.ListProtectedSkillsResponse, error) {
	names, err := a.catalog.Protected(ctx, library(req.GetLibrary()))
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.ListProtectedSkillsResponse{Names: names}, nil
}

// SetSkillScope implements AdminService.
func (a *Admin) SetSkillScope(ctx context.Context, req *skillsvcv1.SetSkillScopeRequest) (*skillsvcv1.SetSkillScopeResponse, error) {
	defs, err := a.catalog.SetScope(ctx, library(req.GetLibrary()), scopeDef(req.GetScope()))
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.SetSkillScopeResponse{Scopes: scopesProto(defs)}, nil
}

// DeleteSkillScope implements AdminService.
func (a *Admin) DeleteSkillScope(ctx context.Context, req *skillsvcv1.DeleteSkillScopeRequest) (*skillsvcv1.DeleteSkillScopeResponse, error) {
	defs, err := a.catalog.DeleteScope(ctx, library(req.GetLibrary()), req.GetName())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.DeleteSkillScopeResponse{Scopes: scopesProto(defs)}, nil
}

// ListSkillScopes implements AdminService.
func (a *Admin) ListSkillScopes(ctx context.Context, req *skillsvcv1.ListSkillScopesRequest) (*skillsvcv1.ListSkillScopesResponse, error) {
	defs, err := a.catalog.Scopes(ctx, library(req.GetLibrary()))
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.ListSkillScopesResponse{Scopes: scopesProto(defs)}, nil
}

// The compatibility rules, proto ⇄ catalog.
var compatibilities = map[skillsvcv1.SkillScopeCompatibility]string{
	skillsvcv1.SkillScopeCompatibility_SKILL_SCOPE_COMPATIBILITY_UNSPECIFIED:      settings.CompatibilityAny,
	skillsvcv1.SkillScopeCompatibility_SKILL_SCOPE_COMPATIBILITY_EMPTY_OR_HARNESS: settings.CompatibilityEmptyOrHarness,
	skillsvcv1.SkillScopeCompatibility_SKILL_SCOPE_COMPATIBILITY_HARNESS:          settings.CompatibilityHarness,
}

func scopeDef(p *skillsvcv1.SkillScope) settings.ScopeDef {
	rule := func(r *skillsvcv1.SkillScopeRule) settings.ScopeRule {
		return settings.ScopeRule{Categories: r.GetCategories(), Tags: r.GetTags(), Names: r.GetNames()}
	}
	c, ok := compatibilities[p.GetCompatibility()]
	if !ok {
		c = p.GetCompatibility().String() // an unknown number: ScopeDef.Validate refuses it
	}
	return settings.ScopeDef{Name: p.GetName(), Include: rule(p.GetInclude()), Exclude: rule(p.GetExclude()), Compatibility: c}
}

func scopesProto(defs []settings.ScopeDef) []*skillsvcv1.SkillScope {
	out := make([]*skillsvcv1.SkillScope, len(defs))
	for i, d := range defs {
		rule := func(r settings.ScopeRule) *skillsvcv1.SkillScopeRule {
			return &skillsvcv1.SkillScopeRule{Categories: r.Categories, Tags: r.Tags, Names: r.Names}
		}
		out[i] = &skillsvcv1.SkillScope{Name: d.Name, Include: rule(d.Include), Exclude: rule(d.Exclude)}
		for k, v := range compatibilities {
			if v == d.Compatibility {
				out[i].Compatibility = k
			}
		}
	}
	return out
}

// CollectLibraryGarbage implements AdminService. The publisher validates
// the reference.
func (a *Admin) CollectLibraryGarbage(ctx context.Context, req *skillsvcv1.CollectLibraryGarbageRequest) (*skillsvcv1.CollectLibraryGarbageResponse, error) {
	res, err := a.versions.Pub.CollectGarbage(ctx, library(req.GetLibrary()), req.GetDryRun())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.CollectLibraryGarbageResponse{
		BlobsDeleted:      int32(res.BlobsDeleted),
		BytesFreed:        res.BytesFreed,
		BlobsKept:         int32(res.BlobsKept),
		SnapshotsDeleted:  int32(res.SnapshotsDeleted),
		PinsDeleted:       int32(res.PinsDeleted),
		DryRun:            req.GetDryRun(),
		UnreadableRecords: res.Unreadable,
	}, nil
}

// DeleteSkillVersions implements AdminService.
func (a *Admin) DeleteSkillVersions(ctx context.Context, req *skillsvcv1.DeleteSkillVersionsRequest) (*skillsvcv1.DeleteSkillVersionsResponse, error) {
	n, err := a.versions.Pub.DeleteVersions(ctx, library(req.GetLibrary()), req.GetName(), req.GetVersions())
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.DeleteSkillVersionsResponse{Deleted: int32(n)}, nil
}

// RejectProposals implements AdminService; the reviewer is the admin's
// token subject.
func (a *Admin) RejectProposals(ctx context.Context, req *skillsvcv1.RejectProposalsRequest) (*skillsvcv1.RejectProposalsResponse, error) {
	p, _ := auth.PrincipalFrom(ctx)
	f := authors.ProposalFilter{Name: req.GetName(), Proposer: req.GetAuthor(), Comment: req.GetComment(), Delete: req.GetDelete()}
	if t := req.GetCreatedBefore(); t != nil {
		if err := t.CheckValid(); err != nil {
			return nil, fmt.Errorf("%w: created_before: %v", errkind.InvalidArgument, err)
		}
		f.Before = t.AsTime()
	}
	res, err := a.versions.Pub.RejectProposals(ctx, authors.Actor{Author: p.Subject, Admin: true}, library(req.GetLibrary()), f)
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.RejectProposalsResponse{Rejected: int32(res.Rejected), Deleted: int32(res.Deleted), UnreadableRecords: res.Unreadable}, nil
}
