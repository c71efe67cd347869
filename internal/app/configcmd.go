package app

import (
	"bytes"
	"fmt"
	"io"

	flagopt "github.com/skillsvc/skillsvc/internal/options"
)

// ConfigCommand is `skillsvc config [flags]`: it loads the configuration
// from args, getenv and the config file as the server does, and writes it
// to w as a config file that loads back (a set secret left empty with a
// comment naming its variable; the "auto" defaults as what they resolve
// to). With --defaults alone it writes a config file of every
// option at its default, commented; it loads as it is.
func ConfigCommand(args []string, getenv func(string) string, w io.Writer) error {
	if len(args) > 0 && (args[0] == "--defaults" || args[0] == "-defaults") {
		if len(args) > 1 {
			return fmt.Errorf("config --defaults: unexpected argument %q", args[1])
		}
		return WriteDefaults(w)
	}
	_, f, err := load(args, getenv)
	if err != nil {
		return err
	}
	return flagopt.WriteEffective(w, f, ConfigFileFlag)
}

// Subcommand finds skillsvc's "config" subcommand in args, first or after
// the server's flags (skillsvc --config.file=f.yaml config): it returns
// "config" and args without it, else "" and args.
func Subcommand(args []string) (string, []string) {
	var c Config
	return flagopt.Command(newFlagSet(&c), args, "config")
}

const defaultsHead = `# skillsvc configuration: every option at its default, from
# "skillsvc config --defaults". Start skillsvc with --config.file=FILE (or
# SKILLSVC_CONFIG_FILE=FILE); flags and SKILLSVC_* variables override what
# it sets. Keep only what you change. Categories: basic (what a deployment
# usually sets), advanced (tuning), experimental (may change in a minor
# release).

`

// WriteDefaults writes the commented config file of every option at its
// default (skillsvc config --defaults).
func WriteDefaults(w io.Writer) error {
	var c Config
	return flagopt.WriteDefaults(w, newFlagSet(&c), defaultsHead, ConfigFileFlag)
}

const referenceHead = `# Configuration reference

<!-- Generated from the code by make docs (go test ./internal/app -run TestConfigReference -update); do not edit. -->

Every option of skillsvc is a command-line flag, an environment variable and a
key of the YAML config file that ` + "`--config.file`" + ` (or ` + "`SKILLSVC_CONFIG_FILE`" + `) names.
The file's keys are the option names split at each ` + "`.`" + ` and nested:

` + "```yaml" + `
storage: s3
s3:
  bucket: skillsvc
  endpoint: http://127.0.0.1:9000
  path-style: true
cache:
  redis:
    addrs: [127.0.0.1:6379]  # a list is the option's comma-separated form
` + "```" + `

A flag overrides the environment variable, which overrides the file, which
overrides the default. Values are read as the flag reads its command-line text
(durations such as ` + "`5s`" + `, sizes in bytes, booleans). An unknown key or a bad
value stops the start with the file, line and option named.

` + "`skillsvc --help`" + ` lists the basic options, ` + "`skillsvc --help-all`" + ` every one,
` + "`skillsvc config`" + ` prints the effective configuration as a file that loads back (a secret left out) and
` + "`skillsvc config --defaults`" + ` a complete commented config file.

Categories: **basic** options are what a deployment usually sets; **advanced**
ones are tuning most deployments leave alone; **experimental** ones may change or
go away in a minor release. A **secret** is never printed: ` + "`skillsvc config`" + ` leaves it empty with a comment
naming its environment variable, and a file giving a secret as ` + "`********`" + ` is refused.
`

// WriteReference writes docs/reference/configuration.md: every option by
// prefix, with its category, default, environment variable and help.
func WriteReference(w io.Writer) error {
	var c Config
	f := newFlagSet(&c)
	var b bytes.Buffer
	b.WriteString(referenceHead)
	if err := flagopt.WriteReference(&b, f); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}
