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
	_, err = fmt.Fprintf(a.stdout, "%s\n", b)
	return err
}

// printJSONLine writes m as one line of JSON (watch's stream).
func (a *app) printJSONLine(m proto.Message) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "%s\n", b)
	return err
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
		line := fmt.Sprintf("  %s%s [%s] %s: %s", prefix, sev, p.GetRule(), where, p.GetMessage())
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
		progressbar.OptionSetWriter(a.stderr),
		progressbar.OptionSetDescription(what),
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

// oneLine makes s fit a table cell.
func oneLine(s string, n int) string {
	return clip(strings.Join(strings.Fields(s), " "), n)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
