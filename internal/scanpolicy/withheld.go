package scanpolicy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Withholds reports whether a listing leaves out the skills the policy
// blocked in the organization's and teams' libraries: any listing of
// invalid skills by a caller who is not a library admin. Admins see them
// listed as invalid, with why; a user sees their own library's.
func Withholds(ctx context.Context, includeInvalid bool) bool {
	if !includeInvalid {
		return true // invalid skills are left out anyway
	}
	p, _ := auth.PrincipalFrom(ctx)
	return !p.LibraryAdmin
}

// WithoutWithheld is page without the skills withheld from the caller;
// the page token still continues after the last path the page covered.
func WithoutWithheld(page skillview.Page) skillview.Page {
	held := func(s skillview.Skill) bool { return Withheld(s.Layer, s.Errors) }
	if !slices.ContainsFunc(page.Skills, held) {
		return page
	}
	page.Skills = slices.DeleteFunc(slices.Clone(page.Skills), held)
	return page
}

// HideBlocked is GetSkill's error for a skill the policy blocks: to a
// caller who is not a library admin the skill does not exist (NOT_FOUND,
// without why); an admin gets FAILED_PRECONDITION with the findings. A
// user sees why their own skill is blocked in ListSkills with
// include_invalid.
func HideBlocked(ctx context.Context, err error, path string) error {
	if !errors.Is(err, skills.ErrInvalidSkill) || !strings.Contains(err.Error(), BlockedPrefix) {
		return err
	}
	if p, _ := auth.PrincipalFrom(ctx); p.LibraryAdmin {
		return err
	}
	return fmt.Errorf("%w: no skill %q", errkind.NotFound, path)
}
