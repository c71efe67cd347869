// Package skilluse records that a skill was used, at whichever surface
// served it (gRPC, the JSON gateway, MCP, the /skills mount): one usage
// event for the recorder (internal/usage) and the skill's attributes on the
// call's span, with a span event marking an activation. Every surface calls
// it where the skill was resolved, so a use is counted once whatever path
// (a kept reply included) answered it.
package skilluse

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// Surfaces: where a use came in.
const (
	GRPC = "grpc"
	JSON = "json" // the JSON gateway (server.InProcess)
	MCP  = "mcp"
	VFS  = "vfs" // a read through the /skills mount of the filesystem
)

// Span attribute and event names (docs/operators/observability.md).
// gen_ai.skill.* are the OpenTelemetry GenAI conventions' names for a
// skill (development status); the rest are skillsvc's own.
const (
	AttrSkillName    = attribute.Key("gen_ai.skill.name")
	AttrSkillVersion = attribute.Key("gen_ai.skill.version")
	AttrSkillLayer   = attribute.Key("skillsvc.skill.layer")
	AttrSkillFile    = attribute.Key("skillsvc.skill.file")
	AttrSurface      = attribute.Key("skillsvc.usage.surface")
	// AttrOffered lists the skills a listing, prompt block or search
	// offered, as "name@version", the first MaxOffered of them;
	// AttrOfferedCount is how many it offered in all.
	AttrOffered      = attribute.Key("skillsvc.skills.offered")
	AttrOfferedCount = attribute.Key("skillsvc.skills.offered_count")
	// EventActivated marks each activation on the call's span.
	EventActivated = "skillsvc.skill.activated"
)

// MaxOffered bounds AttrOffered: a library of thousands must not make a
// span of thousands of strings.
const MaxOffered = 50

// Skill is what a use names of a skill.
type Skill struct {
	Name, Layer string
	// Version is the published version's id when served from a version,
	// else the manifest digest.
	Version string
}

// Of is s as a use names it.
func Of(s skillview.Skill) Skill {
	return Skill{Name: s.Name, Layer: s.Layer, Version: s.ManifestDigest()}
}

// OfRef is r as a use names it.
func OfRef(r *skillview.Ref) Skill {
	return Skill{Name: r.Name, Layer: r.Layer, Version: r.Digest()}
}

// Recorder records uses of skills in R and on the calls' spans. The zero
// value records them on spans only.
type Recorder struct {
	R usage.Recorder
}

// For is a Recorder recording in r; usage.Nop, or nil, records on spans
// only (and builds no event).
func For(r usage.Recorder) Recorder {
	if r == usage.Nop {
		r = nil
	}
	return Recorder{R: r}
}

// Activated records an activation of sk by id at surface.
func (r Recorder) Activated(ctx context.Context, surface string, id mounts.Caller, sk Skill) {
	r.use(ctx, usage.Activation, surface, id, sk, "")
}

// File records a read of file (relative to the skill folder) of sk: an
// activation when the file is the SKILL.md, whichever surface read it.
func (r Recorder) File(ctx context.Context, surface string, id mounts.Caller, sk Skill, file string) {
	if file == skillmd.SkillFile {
		r.use(ctx, usage.Activation, surface, id, sk, "")
		return
	}
	r.use(ctx, usage.FileRead, surface, id, sk, file)
}

// Exported is the File a use names for ExportSkill: the whole folder
// materialized where the caller runs it (skillctl run, the clients'
// runners), a use of its files rather than an activation, which the
// SKILL.md read or load_skill before it already counted.
const Exported = "*"

func (r Recorder) use(ctx context.Context, kind usage.Kind, surface string, id mounts.Caller, sk Skill, file string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		attrs := []attribute.KeyValue{AttrSkillName.String(sk.Name), AttrSkillVersion.String(sk.Version), AttrSkillLayer.String(sk.Layer), AttrSurface.String(surface)}
		if file != "" {
			attrs = append(attrs, AttrSkillFile.String(file))
		}
		span.SetAttributes(attrs...)
		if kind == usage.Activation {
			span.AddEvent(EventActivated, trace.WithAttributes(attrs...))
		}
	}
	if r.R == nil {
		return
	}
	r.R.Record(ctx, usage.Event{
		Kind: kind, Skill: sk.Name, Layer: sk.Layer, Version: sk.Version, File: file,
		User: id.User(), Teams: id.Teams(), Thread: id.Thread(), Surface: surface,
	})
}

// Searched records a search by id for query that returned results (best
// first) of total skills, and offers them on the span. A listing without
// a query is no search: Offered alone marks its span.
func (r Recorder) Searched(ctx context.Context, surface string, id mounts.Caller, query string, results []Skill, total int) {
	Offered(ctx, results, total)
	if r.R == nil {
		return
	}
	names := make([]string, 0, min(len(results), MaxResults))
	for _, s := range results[:min(len(results), MaxResults)] {
		names = append(names, s.Name)
	}
	r.R.Record(ctx, usage.Event{
		Kind: usage.Search, Query: query, Results: names,
		User: id.User(), Teams: id.Teams(), Thread: id.Thread(), Surface: surface,
	})
}

// MaxResults is how many of a search's results its event names: the
// recorder keeps ten.
const MaxResults = 10

// SearchSkills is how many of a search's results Searched needs: the
// span's when it records, else the event's, none without a recorder.
func (r Recorder) SearchSkills(ctx context.Context) int {
	switch {
	case Tracing(ctx):
		return MaxOffered
	case r.R != nil:
		return MaxResults
	}
	return 0
}

// Searches reports whether a search of ctx is recorded anywhere: in R, or
// on the span.
func (r Recorder) Searches(ctx context.Context) bool { return r.R != nil || Tracing(ctx) }

// Offered marks the span of ctx with the skills a listing, prompt block or
// search offered: the first MaxOffered of offered, and total, how many it
// offered in all.
func Offered(ctx context.Context, offered []Skill, total int) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	list := make([]string, 0, min(len(offered), MaxOffered))
	for _, s := range offered[:min(len(offered), MaxOffered)] {
		list = append(list, s.Name+"@"+s.Version)
	}
	span.SetAttributes(AttrOffered.StringSlice(list), AttrOfferedCount.Int(total))
}

// Tracing reports whether ctx's span records: what only the span needs
// (the skills a kept reply offered) is worked out only then.
func Tracing(ctx context.Context) bool { return trace.SpanFromContext(ctx).IsRecording() }

type surfaceKey struct{}

// WithSurface is ctx telling a use recorded below it (the skills tree's,
// which serves every edge) the surface the call came in at.
func WithSurface(ctx context.Context, surface string) context.Context {
	return context.WithValue(ctx, surfaceKey{}, surface)
}

// SurfaceOf is the surface WithSurface gave ctx, else def.
func SurfaceOf(ctx context.Context, def string) string {
	if s, ok := ctx.Value(surfaceKey{}).(string); ok {
		return s
	}
	return def
}

// Hits are the skills of search hits, as a use names them.
func Hits(hits []skillview.Scored) []Skill {
	out := make([]Skill, len(hits))
	for i, h := range hits {
		out[i] = Of(h.Skill)
	}
	return out
}

// Offer is what a prompt block offered: its first MaxOffered skills, and
// how many in all. Bounded, so a replica may remember many.
type Offer struct {
	Skills []Skill
	Total  int
}

// OfBlock is what a prompt block offered, its skills as a use names them.
func OfBlock(offered []skillmd.Offered) Offer {
	out := make([]Skill, min(len(offered), MaxOffered))
	for i := range out {
		o := offered[i]
		out[i] = Skill{Name: o.Name, Layer: o.Layer, Version: o.Version}
	}
	return Offer{Skills: out, Total: len(offered)}
}

// Block records a prompt block made for id: with a query (a task) a
// search that returned the skills it offered, else only the span's list
// of them.
func (r Recorder) Block(ctx context.Context, surface string, id mounts.Caller, query string, o Offer) {
	if query != "" {
		r.Searched(ctx, surface, id, query, o.Skills, o.Total)
		return
	}
	Offered(ctx, o.Skills, o.Total)
}

// Listed marks the span of ctx with the skills of a listing's page.
func Listed(ctx context.Context, page []skillview.Skill) {
	if !Tracing(ctx) {
		return
	}
	listed := make([]Skill, min(len(page), MaxOffered))
	for i := range listed {
		listed[i] = Of(page[i])
	}
	Offered(ctx, listed, len(page))
}
