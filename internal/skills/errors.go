package skills

import "github.com/skillsvc/skillsvc/internal/errkind"

// ErrInvalidSkill: the skill's SKILL.md cannot be trusted (see skillmd.Problems).
// Other failures wrap an errkind.Kind.
var ErrInvalidSkill = errkind.New(errkind.FailedPrecondition, "invalid skill")
