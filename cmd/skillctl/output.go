package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func stderrIsTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }

// printJSON writes m as indented protojson (lowerCamelCase names, as the
// JSON gateway answers) and a newline.
func (a *app) printJSON(m proto.Message) error {
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.jsonStdout, "%s\n", b)
	return err
}

// printJSONLine writes m as one line of JSON (watch's stream).
func (a *app) printJSONLine(m proto.Message) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.jsonStdout, "%s\n", b)
	return err
}

// Text from authors (names, descriptions, messages, comments, paths) and
// from the server (errors, problems) is inert in a terminal: every
// character a terminal acts on, or that can make text read other than it
// is, is printed as a visible escape, as strconv.Quote spells it. Human
// output reaches the terminal only through an inertWriter (app.stdout and
// app.stderr), so nothing printed can be forgotten; inert also escapes
// newlines and tabs for values printed on one line or in a table cell, so a
// value cannot forge a row or shift columns. A backslash is left as it is:
// the escapes are for eyes, not for parsing back, and escaping twice changes
// nothing. JSON output (app.jsonStdout) stays exact: its encoders escape C0
// controls, and inertJSON spells the rest as \u escapes of the same value.

// inert returns s for one line: every escapable character escaped,
// newline and tab included.
func inert(s string) string { return escapeText(s, false) }

// inertText returns s for several lines: newlines and tabs kept, every
// other escapable character escaped.
func inertText(s string) string { return escapeText(s, true) }

// escapable reports whether r is escaped: C0 controls (but newline and tab
// in multi-line text), DEL and C1 controls (CSI U+009B, OSC U+009D act like
// ESC [ and ESC ]), the bidirectional formatting characters (U+202A-U+202E,
// U+2066-U+2069 and the marks) that reorder what is shown, and the line and
// paragraph separators some terminals and editors break lines at.
func escapable(r rune, multiline bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !multiline
	case r < utf8.RuneSelf:
		return r < 0x20 || r == 0x7f
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// escapeText is inert (multiline false) or inertText (true); an invalid
// UTF-8 byte is escaped as \xNN (a lone 0x9b byte is CSI to a terminal in
// 8-bit mode).
func escapeText(s string, multiline bool) string {
	clean := true
	for i := 0; i < len(s) && clean; {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++ // printable ASCII: the common case, a byte at a time
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		clean = !(r == utf8.RuneError && n == 1) && !escapable(r, multiline)
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !escapable(r, multiline):
			b.WriteString(s[i : i+n])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// inertJSON returns JSON text s with DEL, C1 controls, bidirectional
// formatting characters and separators written as \u escapes: the same JSON
// value, inert in a terminal. They can only stand inside strings (JSON's
// syntax is ASCII), where the escape means the same character; C0 controls
// inside strings are escaped by the encoders already, and outside them are
// JSON's white space.
func inertJSON(s string) string {
	if !strings.ContainsFunc(s, jsonEscapable) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if jsonEscapable(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func jsonEscapable(r rune) bool { return r >= 0x7f && escapable(r, true) }

// inertWriter writes what it is given through escape (inertText when nil).
// A character split across two writes is held until the rest of it comes
// (or Flush).
type inertWriter struct {
	w      io.Writer
	escape func(string) string
	tail   []byte // the start of an incomplete UTF-8 sequence
}

func (iw *inertWriter) write(s string) error {
	escape := iw.escape
	if escape == nil {
		escape = inertText
	}
	_, err := io.WriteString(iw.w, escape(s))
	return err
}

func (iw *inertWriter) Write(p []byte) (int, error) {
	s := string(iw.tail) + string(p)
	iw.tail = iw.tail[:0]
	// An incomplete sequence can only be the last utf8.UTFMax-1 bytes.
	for i := len(s) - 1; i >= 0 && i > len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				iw.tail = append(iw.tail, s[i:]...)
				s = s[:i]
			}
			break
		}
	}
	if err := iw.write(s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held incomplete sequence, escaped: nothing will end it.
func (iw *inertWriter) Flush() error {
	if len(iw.tail) == 0 {
		return nil
	}
	s := string(iw.tail)
	iw.tail = iw.tail[:0]
	return iw.write(s)
}

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// printProblems writes one line per problem: severity, where (file and
// field), rule, value and message; prefix names the skill when several are
// printed.
func printProblems(w io.Writer, prefix string, ps []*skillsvcv1.SkillProblem) {
	for _, p := range ps {
		sev := "error"
		if p.GetSeverity() == skillsvcv1.SkillProblem_SEVERITY_WARNING {
			sev = "warning"
		}
		where := p.GetFile()
		if p.GetField() != "" {
			if where != "" {
				where += ": "
			}
			where += p.GetField()
		}
		if where == "" {
			where = "folder"
		}
		line := fmt.Sprintf("  %s%s [%s] %s: %s", inert(prefix), sev, inert(p.GetRule()), inert(where), inert(p.GetMessage()))
		if v := p.GetValue(); v != "" && !strings.Contains(p.GetMessage(), v) {
			line += fmt.Sprintf(" (value %q)", v)
		}
		fmt.Fprintln(w, line)
	}
}

// progress returns a bar over total bytes (-1 unknown) on stderr, or nil
// when progress is not shown: not a terminal, --quiet or --json.
func (a *app) progress(total int64, what string) *progressbar.ProgressBar {
	if !a.isTerminal || a.quiet || a.jsonOut {
		return nil
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(a.rawStderr), // its redraws are control characters
		progressbar.OptionSetDescription(inert(what)),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSpinnerType(14),
	)
}

// humanBytes renders n as B, KiB or MiB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// shortID shortens a version id to "sha256:" and 12 hex digits, the
// shortest prefix the server accepts.
func shortID(id string) string {
	hex, ok := strings.CutPrefix(id, "sha256:")
	if ok && len(hex) > 12 {
		return "sha256:" + hex[:12]
	}
	return id
}

// oneLine makes s fit a table cell: runs of white space become one space,
// then it is cut to n characters and made inert.
func oneLine(s string, n int) string {
	return inert(clip(strings.Join(strings.Fields(s), " "), n))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
