// Package options is what the binary knows about its flags beyond the
// standard flag package: each option's category (basic, advanced or
// experimental) and whether its value is a secret, both decided where the
// option is registered; and, from one flag.FlagSet, the YAML config file
// (keys are the flag names nested at each "."), the --help and --help-all
// listings, the effective configuration with secrets masked, a commented
// defaults file and the reference page.
package options

import (
	"flag"
	"fmt"
)

// Category says who needs an option: --help lists the basic ones,
// --help-all all of them.
type Category int8

const (
	// Advanced is every option not tagged otherwise: tuning most
	// deployments leave alone.
	Advanced Category = iota
	// Basic options are what a deployment usually sets.
	Basic
	// Experimental options may change or go away in a minor release.
	Experimental
)

func (c Category) String() string {
	switch c {
	case Basic:
		return "basic"
	case Experimental:
		return "experimental"
	default:
		return "advanced"
	}
}

// tagged carries an option's metadata with its value, so it travels with
// the flag.Flag wherever the flag set goes.
type tagged struct {
	flag.Value
	category Category
	secret   bool
}

// IsBoolFlag keeps -flag (without =true) working for boolean flags.
func (t *tagged) IsBoolFlag() bool {
	b, ok := t.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Get returns the underlying value's Get, or its String.
func (t *tagged) Get() any {
	if g, ok := t.Value.(flag.Getter); ok {
		return g.Get()
	}
	return t.Value.String()
}

func (t *tagged) String() string {
	if t == nil || t.Value == nil {
		return ""
	}
	return t.Value.String()
}

func (t *tagged) Unwrap() flag.Value { return t.Value }

func meta(f *flag.FlagSet, name string) *tagged {
	fl := f.Lookup(name)
	if fl == nil {
		// A programming error: tagging happens right after registering.
		panic(fmt.Sprintf("options: no flag %q to tag", name))
	}
	t, ok := fl.Value.(*tagged)
	if !ok {
		t = &tagged{Value: fl.Value}
		fl.Value = t
	}
	return t
}

// Tag sets the category of the named flags, already registered on f.
func Tag(f *flag.FlagSet, c Category, names ...string) {
	for _, n := range names {
		meta(f, n).category = c
	}
}

// Secret marks the named flags' values as secrets: printed masked.
func Secret(f *flag.FlagSet, names ...string) {
	for _, n := range names {
		meta(f, n).secret = true
	}
}

// CategoryOf returns fl's category (Advanced unless tagged).
func CategoryOf(fl *flag.Flag) Category {
	if t, ok := fl.Value.(*tagged); ok {
		return t.category
	}
	return Advanced
}

// IsSecret reports whether fl's value is a secret.
func IsSecret(fl *flag.Flag) bool {
	t, ok := fl.Value.(*tagged)
	return ok && t.secret
}
