package library

import "github.com/skillsvc/skillsvc/internal/library/libconfig"

// Config is the authors' path's configuration (internal/library/libconfig).
type Config = libconfig.Config

// DefaultConfig returns the flag defaults.
func DefaultConfig() Config { return libconfig.DefaultConfig() }
