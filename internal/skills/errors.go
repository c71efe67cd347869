package skills

import "errors"

// ErrInvalidSkill: the skill's SKILL.md cannot be trusted (see Problems).
// Other failures use the vfs sentinels, which the gRPC edge already maps.
var ErrInvalidSkill = errors.New("invalid skill")
