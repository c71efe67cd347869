package doctest

import (
	"errors"
	"fmt"
	"net"
	"path"
	"regexp"
	"strings"
)

// Page is one Markdown page: the servers its directive asks for and its
// fenced code blocks in order.
type Page struct {
	Path   string // as the caller named it, for messages
	Server bool   // skillsvc with its defaults
	MinIO  bool   // MinIO on 127.0.0.1:9000 with bucket skillsvc
	Redis  bool   // redis-server on 127.0.0.1:6379
	Blocks []Block
}

// Block is one fenced code block and its attributes.
type Block struct {
	Line       int    // the line of the opening fence, 1-based
	Lang       string // the info string's first word, lower case ("" when none)
	Text       string // the content, each line ending in "\n"
	Skip       string // the reason it never runs
	File       string // where its content is written instead of running it
	Background bool   // left running until the page ends
	Ready      string // HOST:PORT a background block listens on
	Fails      bool   // must exit non-zero
}

// runner is how a language runs: "sh", "python", "ts", or "" for shown only.
func runner(lang string) string {
	switch lang {
	case "sh", "bash", "shell":
		return "sh"
	case "python":
		return "python"
	case "ts", "typescript":
		return "ts"
	}
	return ""
}

// Runs reports whether the harness runs the block (rather than showing it,
// skipping it or writing it to a file).
func (b Block) Runs() bool { return runner(b.Lang) != "" && b.Skip == "" && b.File == "" }

// aliases are languages that look runnable but are not in the contract:
// refused with the name to use, so a block is never shown-only by accident.
var aliases = map[string]string{"py": "python", "python3": "python", "zsh": "sh"}

var (
	directiveRe = regexp.MustCompile(`^\s*<!--\s*doctest:(.*?)-->\s*$`)
	fenceRe     = regexp.MustCompile("^( *)(`{3,}|~{3,})(.*)$")
)

// Parse reads a page. Every mistake in its blocks' attributes or directive
// is an error naming the page and line; they are all reported at once.
func Parse(name string, src []byte) (*Page, error) {
	p := &Page{Path: name}
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...)))
	}
	lines := strings.Split(string(src), "\n")
	directive := 0
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSuffix(lines[i], "\r")
		if m := directiveRe.FindStringSubmatch(line); m != nil || strings.HasPrefix(strings.TrimSpace(line), "<!-- doctest") {
			switch {
			case m == nil:
				fail(i+1, "malformed directive: write <!-- doctest: server minio redis --> on one line")
			case len(p.Blocks) > 0:
				fail(i+1, "the doctest directive must come before the first code block")
			case directive != 0:
				fail(i+1, "a second doctest directive (the first is on line %d)", directive)
			default:
				directive = i + 1
				for _, w := range strings.Fields(m[1]) {
					switch w {
					case "server":
						p.Server = true
					case "minio":
						p.MinIO = true
					case "redis":
						p.Redis = true
					default:
						fail(i+1, "unknown doctest directive %q (known: server, minio, redis)", w)
					}
				}
			}
			continue
		}
		m := fenceRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent, fence, info := len(m[1]), m[2], m[3]
		if fence[0] == '`' && strings.Contains(info, "`") {
			continue // an inline code span, not a fence
		}
		b := Block{Line: i + 1}
		if err := parseInfo(info, &b); err != nil {
			fail(b.Line, "%v", err)
		}
		var text strings.Builder
		closed := false
		for i++; i < len(lines); i++ {
			l := strings.TrimSuffix(lines[i], "\r")
			t := strings.TrimLeft(l, " ")
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" \t") == "" {
				closed = true
				break
			}
			// Content is indented like its fence (a block inside a list item).
			for n := 0; n < indent && strings.HasPrefix(l, " "); n++ {
				l = l[1:]
			}
			text.WriteString(l)
			text.WriteByte('\n')
		}
		if !closed {
			fail(b.Line, "code block never closed (no %s line after it)", fence)
		}
		b.Text = text.String()
		p.Blocks = append(p.Blocks, b)
	}
	return p, errors.Join(errs...)
}

// parseInfo reads an info string: the language, then space-separated
// attributes, each a name or name=value with value bare, "double" or
// 'single' quoted.
func parseInfo(info string, b *Block) error {
	info = strings.TrimSpace(info)
	lang, rest, _ := strings.Cut(info, " ")
	b.Lang = strings.ToLower(lang)
	if use, ok := aliases[b.Lang]; ok {
		return fmt.Errorf("%q blocks: write %q (or another language to show it only)", lang, use)
	}
	seen := map[string]bool{}
	rest = strings.TrimSpace(rest)
	for rest != "" {
		n := strings.IndexAny(rest, "= \t")
		if n < 0 {
			n = len(rest)
		}
		name, value, hasValue := rest[:n], "", false
		rest = rest[n:]
		if strings.HasPrefix(rest, "=") {
			hasValue = true
			rest = rest[1:]
			if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
				end := strings.IndexByte(rest[1:], rest[0])
				if end < 0 {
					return fmt.Errorf("attribute %s: unterminated quote", name)
				}
				value, rest = rest[1:end+1], rest[end+2:]
				if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
					return fmt.Errorf("attribute %s: a space must follow the closing quote", name)
				}
			} else {
				end := strings.IndexAny(rest, " \t")
				if end < 0 {
					end = len(rest)
				}
				value, rest = rest[:end], rest[end:]
			}
		}
		rest = strings.TrimLeft(rest, " \t")
		if seen[name] {
			return fmt.Errorf("attribute %s given twice", name)
		}
		seen[name] = true
		flag := func() error {
			if hasValue {
				return fmt.Errorf("attribute %s takes no value", name)
			}
			return nil
		}
		switch name {
		case "skip":
			if strings.TrimSpace(value) == "" {
				return errors.New(`skip needs the reason the block cannot run: skip="needs a Kubernetes cluster"`)
			}
			b.Skip = value
		case "file":
			if err := checkFilePath(value); err != nil {
				return err
			}
			b.File = value
		case "background":
			if err := flag(); err != nil {
				return err
			}
			b.Background = true
		case "fails":
			if err := flag(); err != nil {
				return err
			}
			b.Fails = true
		case "ready":
			if _, _, err := net.SplitHostPort(value); err != nil || !hasValue {
				return fmt.Errorf("ready=%q: want ready=HOST:PORT", value)
			}
			b.Ready = value
		default:
			return fmt.Errorf("unknown attribute %q (known: skip=\"reason\", file=PATH, background, ready=HOST:PORT, fails)", name)
		}
	}
	return checkCombination(*b)
}

// checkCombination refuses attributes that cannot apply together, so a
// block never silently does less than its attributes say.
func checkCombination(b Block) error {
	runs := runner(b.Lang) != ""
	switch {
	case b.Skip != "" && (b.File != "" || b.Background || b.Fails || b.Ready != ""):
		return errors.New("skip goes alone: a skipped block is neither written, started nor checked")
	case b.File != "" && (b.Background || b.Fails || b.Ready != ""):
		return errors.New("a file= block is written, not run: background, ready and fails do not apply")
	case b.Background && runner(b.Lang) != "sh":
		return fmt.Errorf("background applies to sh blocks, not %q", b.Lang)
	case b.Ready != "" && !b.Background:
		return errors.New("ready= applies to background blocks")
	case b.Background && b.Fails:
		return errors.New("a background block cannot be checked to fail")
	case b.Fails && !runs:
		return fmt.Errorf("fails applies to blocks that run (sh, python, ts), not %q", b.Lang)
	}
	return nil
}

// checkFilePath accepts a relative path that stays inside the page's
// directory.
func checkFilePath(p string) error {
	switch {
	case p == "":
		return errors.New("file= needs a path")
	case path.IsAbs(p):
		return fmt.Errorf("file=%s: the path must be relative to the page's directory", p)
	case path.Clean(p) == ".." || strings.HasPrefix(path.Clean(p), "../") || path.Clean(p) == ".":
		return fmt.Errorf("file=%s: the path must stay inside the page's directory", p)
	}
	return nil
}
