// Package usageapi serves skillsvc.v1.UsageService: a library's skill usage
// (internal/usage's Reader) read back by whom it belongs to, with the
// library's skills that went unused (the catalog's listing of the library).
package usageapi

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// Bounds of a request.
const (
	// DefaultDays is the range of a request naming none.
	DefaultDays = 30
	// lookbackDays is how far before the range an unused skill's last use
	// is looked for.
	lookbackDays = 90
)

// Skills lists a library's own skills (skills.Catalog.LibrarySkills).
type Skills interface {
	LibrarySkills(ctx context.Context, l layout.LibraryRef) ([]skillview.LibrarySkill, error)
}

// Service serves UsageService.
type Service struct {
	skillsvcv1.UnimplementedUsageServiceServer
	reader *usage.Reader
	skills Skills
	now    func() time.Time
}

// New returns the service reading reader (nil: usage is not counted, and
// every call is FAILED_PRECONDITION) and listing the libraries' skills
// from skills.
func New(reader *usage.Reader, skills Skills) *Service {
	return &Service{reader: reader, skills: skills, now: time.Now}
}

// Authorize decides in one place whose usage a caller reads: its own
// library's; a team's when it is a member who may change the team's
// library (a library admin, as internal/library decides changes); the
// organization's, and another user's, a library admin's. A zero ref is
// the caller's own library.
func Authorize(c mounts.Caller, libraryAdmin bool, ref layout.LibraryRef) (usage.LibraryRef, error) {
	if ref == (layout.LibraryRef{}) {
		ref.User = c.User()
	}
	if err := ref.Validate(); err != nil {
		return usage.LibraryRef{}, err
	}
	switch {
	case ref.User != "" && ref.User == c.User():
		return usage.Own(c), nil
	case ref.Team != "" && slices.Contains(c.Teams(), ref.Team) && libraryAdmin:
		lib, _ := usage.Team(c, ref.Team)
		return lib, nil
	case libraryAdmin:
		return usage.Operator(ref)
	case ref.Shared:
		return usage.LibraryRef{}, fmt.Errorf("%w: the organization's usage is an admin's to read", errkind.PermissionDenied)
	case ref.Team != "" && slices.Contains(c.Teams(), ref.Team):
		return usage.LibraryRef{}, fmt.Errorf("%w: team %s's usage is for the members who may change its library (an admin)", errkind.PermissionDenied, ref.Team)
	case ref.Team != "":
		return usage.LibraryRef{}, fmt.Errorf("%w: the caller is not a member of team %s", errkind.PermissionDenied, ref.Team)
	}
	return usage.LibraryRef{}, fmt.Errorf("%w: a caller reads only its own library's usage", errkind.PermissionDenied)
}

// GetUsage implements UsageService.
func (s *Service) GetUsage(ctx context.Context, req *skillsvcv1.GetUsageRequest) (*skillsvcv1.GetUsageResponse, error) {
	c, ok := auth.FromContext(ctx)
	if !ok {
		return nil, fmt.Errorf("%w: no identity", auth.ErrUnauthenticated)
	}
	p, _ := auth.PrincipalFrom(ctx)
	lib, err := Authorize(c, p.LibraryAdmin, layoutRef(req.GetLibrary()))
	if err != nil {
		return nil, err
	}
	if s.reader == nil {
		return nil, fmt.Errorf("%w: usage is not counted (--usage.enabled=false)", errkind.FailedPrecondition)
	}
	from, to, err := s.window(req)
	if err != nil {
		return nil, err
	}
	rep, err := s.reader.Read(ctx, lib, from, to)
	if err != nil {
		return nil, err
	}
	out := &skillsvcv1.GetUsageResponse{From: rep.From.String(), To: rep.To.String()}
	layer := layerOf(lib.Layout())
	used := make(map[string]bool)
	for _, su := range rep.Skills {
		if su.Activations > 0 {
			used[su.Skill] = true
		}
		if req.GetSkill() != "" && su.Skill != req.GetSkill() {
			continue
		}
		out.Skills = append(out.Skills, skillProto(su, layer))
	}
	for _, d := range rep.Days {
		out.Days = append(out.Days, &skillsvcv1.DailyUsage{Day: d.Day.String(), Activations: d.Activations, FileReads: d.FileReads,
			Searches: d.Searches, Users: d.Users, Threads: d.Threads})
	}
	out.Searches, out.OtherSearches = searches(rep.Searches, lib == usage.Own(c), s.reader.QueryMinUsers())
	out.QueryMinUsers = int32(s.reader.QueryMinUsers())
	out.Unused, err = s.unused(ctx, lib, rep, used, req.GetSkill())
	return out, err
}

// window is the request's range of days.
func (s *Service) window(req *skillsvcv1.GetUsageRequest) (usage.Day, usage.Day, error) {
	today := usage.DayOf(s.now())
	days := req.GetDays()
	switch {
	case days < 0:
		return 0, 0, fmt.Errorf("%w: days must not be negative", errkind.InvalidArgument)
	case days > 0 && (req.GetFrom() != "" || req.GetTo() != ""):
		return 0, 0, fmt.Errorf("%w: days or from and to, not both", errkind.InvalidArgument)
	case req.GetFrom() == "" && req.GetTo() != "":
		return 0, 0, fmt.Errorf("%w: to needs from", errkind.InvalidArgument)
	case req.GetFrom() == "":
		if days == 0 {
			days = DefaultDays
		}
		return today - usage.Day(min(days, 1<<16)) + 1, today, nil
	}
	from, err := usage.ParseDay(req.GetFrom())
	if err != nil {
		return 0, 0, err
	}
	to := today
	if req.GetTo() != "" {
		if to, err = usage.ParseDay(req.GetTo()); err != nil {
			return 0, 0, err
		}
	}
	if to < from {
		return 0, 0, fmt.Errorf("%w: to is before from", errkind.InvalidArgument)
	}
	return from, to, nil
}

// unused lists the library's skills with no activation in rep's range
// (only skill, when named), with the last day each was used in the
// lookbackDays before it.
func (s *Service) unused(ctx context.Context, lib usage.LibraryRef, rep usage.Report, used map[string]bool, skill string) ([]*skillsvcv1.UnusedSkill, error) {
	all, err := s.skills.LibrarySkills(ctx, lib.Layout())
	if err != nil {
		return nil, err
	}
	var idle []skillview.LibrarySkill
	for _, sk := range all {
		if !used[sk.Name] && (skill == "" || sk.Name == skill) {
			idle = append(idle, sk)
		}
	}
	if len(idle) == 0 {
		return nil, nil
	}
	last := make(map[string]usage.Day)
	before, err := s.reader.Read(ctx, lib, rep.From-lookbackDays, rep.From-1)
	if err != nil {
		return nil, err
	}
	for _, su := range before.Skills {
		last[su.Skill] = su.Last
	}
	today := usage.DayOf(s.now())
	out := make([]*skillsvcv1.UnusedSkill, 0, len(idle))
	for _, sk := range idle {
		u := &skillsvcv1.UnusedSkill{Name: sk.Name, Dir: sk.Dir}
		if !sk.Added.IsZero() {
			u.Added = timestamppb.New(sk.Added)
			u.AgeDays = int64(today - usage.DayOf(sk.Added))
		}
		if d, ok := last[sk.Name]; ok {
			u.LastUsedDay = d.String()
			u.AgeDays = int64(today - d)
		}
		out = append(out, u)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].AgeDays != out[j].AgeDays {
			return out[i].AgeDays > out[j].AgeDays
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// searches are the report's searches that found nothing or led nowhere,
// and the others' sum: a query's text is the searcher's to see in their
// own library's report (own), and anyone else's only once minUsers
// distinct users searched it (k-anonymity), as a query may hold what a
// user typed or their agent took from the task. The rest are summed into
// one row without text, whatever their outcome.
func searches(qs []usage.SearchUsage, own bool, minUsers int) ([]*skillsvcv1.SearchUsage, *skillsvcv1.SearchUsage) {
	var shown []*skillsvcv1.SearchUsage
	var other *skillsvcv1.SearchUsage
	for _, q := range qs {
		switch {
		case !own && q.Users < int64(minUsers):
			if other == nil {
				other = &skillsvcv1.SearchUsage{}
			}
			other.Searches += q.Searches
			other.Empty += q.Empty
			other.Led += q.Led
		case q.Led < q.Searches:
			shown = append(shown, &skillsvcv1.SearchUsage{Query: q.Query, Searches: q.Searches, Empty: q.Empty, Led: q.Led})
		}
	}
	return shown, other
}

func skillProto(su usage.SkillUsage, layer string) *skillsvcv1.SkillUsage {
	out := &skillsvcv1.SkillUsage{Name: su.Skill, Layer: layer, Activations: su.Activations, FileReads: su.FileReads,
		Users: su.Users, Threads: su.Threads, Surfaces: su.Surfaces, FirstDay: su.First.String(), LastDay: su.Last.String()}
	for _, v := range su.Versions {
		out.Versions = append(out.Versions, &skillsvcv1.VersionUsage{Version: v.Version, Activations: v.Activations, FileReads: v.FileReads})
	}
	return out
}

// layerOf is the library's layer as skillview spells it.
func layerOf(l layout.LibraryRef) string {
	switch {
	case l.Shared:
		return skillview.LayerShared
	case l.Team != "":
		return skillview.LayerTeam + l.Team
	}
	return skillview.LayerUser
}

func layoutRef(r *skillsvcv1.LibraryRef) layout.LibraryRef {
	return layout.LibraryRef{User: r.GetUser(), Team: r.GetTeam(), Shared: r.GetShared()}
}
