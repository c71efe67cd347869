package options

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
)

// Help is what a command line asks to be shown instead of running.
type Help int8

const (
	NoHelp    Help = iota
	HelpBasic      // -h, -help, --help
	HelpAll        // --help-all
)

// Parse sets f from, lowest first: the defaults at registration, the YAML
// file that fileFlag names (on the command line, else in its environment
// variable), the SKILLSVC_* environment variables, and args. The file is
// found before anything is parsed, so the flags and environment override
// what it sets.
func Parse(f *flag.FlagSet, args []string, getenv func(string) string, fileFlag string) error {
	file, ok := argValue(f, args, fileFlag)
	if !ok {
		file = getenv(EnvName(fileFlag))
	}
	if file != "" {
		if _, err := LoadFile(f, file, fileFlag); err != nil {
			return err
		}
	}
	var errs []error
	f.VisitAll(func(fl *flag.Flag) {
		if v := getenv(EnvName(fl.Name)); v != "" {
			if err := fl.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", EnvName(fl.Name), err))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return f.Parse(args)
}

// HelpAsked reports which help args ask for, reading them as f.Parse would
// (up to "--" or the first argument that is no flag).
func HelpAsked(f *flag.FlagSet, args []string) Help {
	h := NoHelp
	scan(f, args, func(name, _ string) {
		switch name {
		case "h", "help":
			h = max(h, HelpBasic)
		case "help-all":
			h = HelpAll
		}
	})
	return h
}

// argValue is the last value args give the flag name.
func argValue(f *flag.FlagSet, args []string, name string) (v string, ok bool) {
	scan(f, args, func(n, val string) {
		if n == name {
			v, ok = val, true
		}
	})
	return v, ok
}

// scan calls fn with each flag of args and its value, as f.Parse reads
// them, stopping where f.Parse would stop or at a flag f does not know.
func scan(f *flag.FlagSet, args []string, fn func(name, value string)) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || a == "--" {
			return
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, value, hasValue := strings.Cut(name, "=")
		fl := f.Lookup(name)
		if !hasValue && fl != nil && !isBool(fl) && i+1 < len(args) {
			i++
			value = args[i]
		}
		fn(name, value)
		if fl == nil {
			return
		}
	}
}

func isBool(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Command finds a subcommand among args after f's flags: the first
// argument f.Parse would not read as a flag or a flag's value, if it is one
// of names. It returns that name and args without it, or "" and args as
// they are (also past "--" or a flag f does not know, whose value it
// cannot tell).
func Command(f *flag.FlagSet, args []string, names ...string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if slices.Contains(names, a) {
				return a, slices.Delete(slices.Clone(args), i, i+1)
			}
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		fl := f.Lookup(name)
		if fl == nil {
			break
		}
		if !hasValue && !isBool(fl) {
			i++
		}
	}
	return "", args
}
