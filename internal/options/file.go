package options

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// EnvName is the environment variable that sets the flag name:
// SKILLSVC_ and the name in upper case with "." and "-" as "_".
func EnvName(name string) string {
	return "SKILLSVC_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(name))
}

// LoadFile sets the flags of f that the YAML file at path names: its keys
// are the flag names split at each "." and nested (a dotted key is the same
// as its nesting), each scalar is set as the flag's command-line text and a
// sequence of scalars as its comma-separated form. Unknown keys, a map where
// a value belongs and values the flag refuses are errors naming path, the
// line and the option. The flags named in skip (config.file itself) may not
// appear. It returns the names set.
func LoadFile(f *flag.FlagSet, path string, skip ...string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(f, path, data, skip...)
}

// Load is LoadFile on the content data of the file named name.
func Load(f *flag.FlagSet, name string, data []byte, skip ...string) ([]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml.v3's syntax errors already say "yaml: line N: ...".
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil // an empty file sets nothing
	}
	l := loader{f: f, file: name, seen: map[string]int{}, prefixes: Prefixes(f), skip: skip}
	root := deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, l.errorf(root, "", "want a map of options at the top")
	}
	l.mapping(root, "")
	return l.set, errors.Join(l.errs...)
}

type loader struct {
	f        *flag.FlagSet
	file     string
	seen     map[string]int // option -> line, to refuse one given twice
	prefixes map[string]bool
	skip     []string
	set      []string
	errs     []error
}

func (l *loader) errorf(n *yaml.Node, option, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if option != "" {
		msg = fmt.Sprintf("%q: %s", option, msg)
	}
	return fmt.Errorf("%s:%d: %s", l.file, n.Line, msg)
}

func (l *loader) fail(n *yaml.Node, option, format string, args ...any) {
	l.errs = append(l.errs, l.errorf(n, option, format, args...))
}

func (l *loader) mapping(m *yaml.Node, prefix string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := deref(m.Content[i]), deref(m.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			l.fail(k, "", "want an option name as the key")
			continue
		}
		name := prefix + k.Value
		if v.Kind == yaml.MappingNode {
			if l.f.Lookup(name) != nil {
				l.fail(v, name, "takes a value, not a map")
			} else if !l.prefixes[name] {
				l.fail(k, "", "unknown option %q", name)
			} else {
				l.mapping(v, name+".")
			}
			continue
		}
		fl := l.f.Lookup(name)
		if fl == nil {
			if l.prefixes[name] {
				l.fail(k, name, "is a group of options: want a map")
			} else {
				l.fail(k, "", "unknown option %q", name)
			}
			continue
		}
		if slices.Contains(l.skip, name) {
			l.fail(k, name, "cannot be set in the config file")
			continue
		}
		if line, ok := l.seen[name]; ok {
			l.fail(k, name, "given twice (first at line %d)", line)
			continue
		}
		l.seen[name] = k.Line
		text, ok := l.text(v, name)
		if !ok {
			continue
		}
		if text == Masked && IsSecret(fl) {
			l.fail(v, name, "is %q, the mask of a secret, not the secret: write the secret here, or leave it empty and set %s", Masked, EnvName(name))
			continue
		}
		if err := fl.Value.Set(text); err != nil {
			l.fail(v, name, "invalid value %q: %v", text, err)
			continue
		}
		l.set = append(l.set, name)
	}
}

// text is the command-line text of the value node v.
func (l *loader) text(v *yaml.Node, name string) (string, bool) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return "", true // "key:" alone is the empty value
		}
		return v.Value, true
	case yaml.SequenceNode:
		items := make([]string, 0, len(v.Content))
		for _, it := range v.Content {
			it = deref(it)
			if it.Kind != yaml.ScalarNode {
				l.fail(it, name, "want a list of plain values")
				return "", false
			}
			items = append(items, it.Value)
		}
		return strings.Join(items, ","), true
	default:
		l.fail(v, name, "want a value")
		return "", false
	}
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// Prefixes are the groups of f's flags: every proper dotted prefix of a
// name ("cache" and "cache.redis" for cache.redis.addrs).
func Prefixes(f *flag.FlagSet) map[string]bool {
	p := map[string]bool{}
	f.VisitAll(func(fl *flag.Flag) {
		for i, c := range fl.Name {
			if c == '.' {
				p[fl.Name[:i]] = true
			}
		}
	})
	return p
}

// CheckNames fails when a flag's name is also a group of others (s3 and
// s3.bucket), or has an empty segment: such a name has no place in the
// nested YAML file.
func CheckNames(f *flag.FlagSet) error {
	p := Prefixes(f)
	var errs []error
	f.VisitAll(func(fl *flag.Flag) {
		if p[fl.Name] {
			errs = append(errs, fmt.Errorf("option %q is also a group of options", fl.Name))
		}
		for _, seg := range strings.Split(fl.Name, ".") {
			if seg == "" {
				errs = append(errs, fmt.Errorf("option %q has an empty segment", fl.Name))
				break
			}
		}
	})
	return errors.Join(errs...)
}
