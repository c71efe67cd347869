// Package convert converts the library's versions, the problems of a skill
// and a publish's evals to their LibraryService messages.
package convert

import (
	"fmt"

	"google.golang.org/protobuf/types/known/timestamppb"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/coexist"
	"github.com/skillsvc/skillsvc/internal/errkind"
	authors "github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/versions"
)

// states are the proto's version states.
var states = map[versions.State]skillsvcv1.VersionState{
	versions.Published: skillsvcv1.VersionState_VERSION_STATE_PUBLISHED,
	versions.Pending:   skillsvcv1.VersionState_VERSION_STATE_PENDING,
	versions.Rejected:  skillsvcv1.VersionState_VERSION_STATE_REJECTED,
}

// StateOf converts a request's state filter; unspecified is "".
func StateOf(s skillsvcv1.VersionState) (versions.State, error) {
	if s == skillsvcv1.VersionState_VERSION_STATE_UNSPECIFIED {
		return "", nil
	}
	for k, v := range states {
		if v == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("%w: unknown state %d", errkind.InvalidArgument, s)
}

// Version converts v; withManifest adds its files.
func Version(v authors.Version, withManifest bool) *skillsvcv1.SkillVersion {
	out := &skillsvcv1.SkillVersion{
		Id: v.ID, Name: v.Name, Category: v.Category, Author: v.Author, TotalBytes: v.TotalBytes,
		FileCount: int32(len(v.Files)), Labels: v.Labels, State: states[v.State], Message: v.Message,
		Reviewer: v.Reviewer, ReviewComment: v.ReviewComment,
		Library: &skillsvcv1.LibraryRef{User: v.Library.User, Shared: v.Library.Shared, Team: v.Library.Team},
	}
	for _, w := range v.Problems {
		out.Problems = append(out.Problems, &skillsvcv1.SkillProblem{Severity: skillsvcv1.SkillProblem_SEVERITY_WARNING,
			File: w.File, Field: w.Field, Rule: w.Rule, Value: w.Value, Message: w.Message})
	}
	if !v.Created.IsZero() {
		out.CreateTime = timestamppb.New(v.Created)
	}
	if !v.ReviewTime.IsZero() {
		out.ReviewTime = timestamppb.New(v.ReviewTime)
	}
	out.Signatures = Signatures(v, withManifest)
	if withManifest {
		m := &skillsvcv1.SkillManifest{TotalBytes: v.TotalBytes, FileCount: int32(len(v.Files))}
		for _, f := range v.Files {
			m.Files = append(m.Files, &skillsvcv1.ManifestFile{Path: f.Rel, Size: f.Size, Sha256: f.SHA256, Mode: uint32(f.Mode)})
		}
		out.Manifest = m
	}
	return out
}

// Problems converts problems.
func Problems(ps []skillmd.Problem) []*skillsvcv1.SkillProblem {
	out := make([]*skillsvcv1.SkillProblem, len(ps))
	for i, p := range ps {
		out[i] = &skillsvcv1.SkillProblem{
			Severity: skillsvcv1.SkillProblem_Severity(p.Severity), File: p.File, Field: p.Field,
			Rule: p.Rule, Value: p.Value, Message: p.Message,
		}
	}
	return out
}

// Evals converts a publish's triggering evals; a skill's path is its
// folder under mount, as listings give it.
func Evals(mount string, es []coexist.TriggerEval) []*skillsvcv1.TriggerEval {
	out := make([]*skillsvcv1.TriggerEval, len(es))
	for i, e := range es {
		out[i] = &skillsvcv1.TriggerEval{Query: e.Query, ShouldTrigger: e.ShouldTrigger, Rank: int32(e.Rank), TopName: e.Top.Name}
		if e.Top.Dir != "" {
			out[i].TopPath = mount + "/" + e.Top.Dir
		}
	}
	return out
}

// Signatures converts a version's signatures; bundles and keys only
// with full.
func Signatures(v authors.Version, full bool) []*skillsvcv1.VersionSignature {
	var out []*skillsvcv1.VersionSignature
	for _, sg := range v.Signatures {
		o := &skillsvcv1.VersionSignature{KeyId: sg.KeyID, KeyName: sg.KeyName, AttachedBy: sg.By}
		if !sg.Time.IsZero() {
			o.AttachTime = timestamppb.New(sg.Time)
		}
		if full {
			o.Bundle, o.PublicKey = []byte(sg.Bundle), []byte(sg.PublicKey)
		}
		out = append(out, o)
	}
	return out
}
