package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// usageOpts are the flags every usage subcommand takes.
type usageOpts struct {
	days  int
	limit int
	ascii bool
}

func (a *app) usageCmd() *cobra.Command {
	o := &usageOpts{}
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Show which skills of a library are used, and which are not",
		Long: `usage reads a library's skill usage (UsageService.GetUsage): activations (GetSkill,
RenderSkill, load_skill, a SKILL.md read), file reads, distinct users and threads, versions,
daily totals, unused skills and searches that found nothing or led nowhere.

--library picks the library: "own" (the default), "team:ID" or "org" (the organization's
shared library; also "shared"). You read your own library's usage; a team's if you are a
member who may change its library (an admin); the organization's if you are an admin.
--days N is the range, today (UTC) included. --json prints the GetUsageResponse.`,
		Example: `  skillctl usage top
  skillctl usage unused --days 90 --library org
  skillctl usage versions pdf --library team:legal
  skillctl usage searches --json`,
	}
	pf := cmd.PersistentFlags()
	pf.IntVar(&o.days, "days", 30, "the last N days, today (UTC) included")
	pf.BoolVar(&o.ascii, "ascii", false, "draw the chart in plain ASCII (the default where the locale is not UTF-8)")
	top := &cobra.Command{
		Use:   "top",
		Short: "The most activated skills, and a chart of daily use",
		Long: `top lists the library's skills most activated over the range: activations, file reads,
distinct users and threads, the surfaces they came through and the last day of use; then a
chart of the library's daily activations.`,
		Example: "  skillctl usage top --days 7 --limit 5",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return a.usageTop(cmd, o) },
	}
	top.Flags().IntVar(&o.limit, "limit", 20, "at most this many skills")
	unused := &cobra.Command{
		Use:   "unused",
		Short: "The library's skills with no activation in the range, with their age",
		Long: `unused lists the library's skills not activated over the range, the longest idle first:
the last day each was used (within the 90 days before the range), else when it appeared (its
SKILL.md's last write), and the days since. Candidates to retire.`,
		Example: "  skillctl usage unused --days 90",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.usageRun(cmd, o, "", func(w io.Writer, r *skillsvcv1.GetUsageResponse) {
				tw := newTable(w)
				fmt.Fprintln(tw, "SKILL\tDIR\tLAST USED\tADDED\tIDLE")
				for _, u := range r.GetUnused() {
					added := "-"
					if t := u.GetAdded(); t != nil {
						added = t.AsTime().UTC().Format(time.DateOnly)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%dd\n", inert(u.GetName()), inert(u.GetDir()), dash(u.GetLastUsedDay()), added, u.GetAgeDays())
				}
				_ = tw.Flush()
			})
		},
	}
	versions := &cobra.Command{
		Use:   "versions NAME",
		Short: "A skill's use by version",
		Long: `versions lists skill NAME's activations and file reads over the range by version (the
published version id, or the content digest of an unpublished copy), most activated first.`,
		Example:           "  skillctl usage versions pdf --days 14",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.usageRun(cmd, o, args[0], func(w io.Writer, r *skillsvcv1.GetUsageResponse) {
				if len(r.GetSkills()) == 0 {
					fmt.Fprintf(w, "%s: no use from %s to %s\n", inert(args[0]), r.GetFrom(), r.GetTo())
					return
				}
				tw := newTable(w)
				fmt.Fprintln(tw, "VERSION\tACTIVATIONS\tFILE READS")
				for _, v := range r.GetSkills()[0].GetVersions() {
					fmt.Fprintf(tw, "%s\t%d\t%d\n", inert(shortID(v.GetVersion())), v.GetActivations(), v.GetFileReads())
				}
				_ = tw.Flush()
			})
		},
	}
	searches := &cobra.Command{
		Use:   "searches",
		Short: "Search terms that found nothing or led nowhere",
		Long: `searches lists the queries searched in the library over the range that returned nothing
(EMPTY) or whose results were not then activated in the same thread (NOWHERE), most searched
first: skills to write, or descriptions to improve. Searches are counted under the searcher's
own library, their teams' and the organization's. Your own library shows all your queries; a
team's or the organization's shows a query's text only once enough distinct users searched it
(the server's --usage.query-min-users, 5 by default), and sums the rest into one last row,
"(other queries)", without their text.`,
		Example: "  skillctl usage searches --library org",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.usageRun(cmd, o, "", searchesTable)
		},
	}
	daily := &cobra.Command{
		Use:     "daily",
		Short:   "A chart of the library's daily use",
		Long:    `daily draws one bar per day of the range: activations, with file reads, searches and distinct users.`,
		Example: "  skillctl usage daily --days 14 --ascii",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.usageRun(cmd, o, "", func(w io.Writer, r *skillsvcv1.GetUsageResponse) {
				days := fillDays(r)
				var most int64
				for _, d := range days {
					most = max(most, d.GetActivations())
				}
				for _, d := range days {
					fmt.Fprintf(w, "%s %-30s %5d  (%d file reads, %d searches, %d users)\n", d.GetDay(), bar(d.GetActivations(), most, 30, a.usageASCII(o)),
						d.GetActivations(), d.GetFileReads(), d.GetSearches(), d.GetUsers())
				}
			})
		},
	}
	cmd.AddCommand(top, unused, versions, searches, daily)
	return cmd
}

// usageTop prints the top skills and the sparkline of daily activations.
func (a *app) usageTop(cmd *cobra.Command, o *usageOpts) error {
	return a.usageRun(cmd, o, "", func(w io.Writer, r *skillsvcv1.GetUsageResponse) {
		tw := newTable(w)
		fmt.Fprintln(tw, "#\tSKILL\tACTIVATIONS\tFILE READS\tUSERS\tTHREADS\tSURFACES\tLAST")
		for i, s := range r.GetSkills() {
			if o.limit > 0 && i == o.limit {
				break
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", i+1, inert(s.GetName()), s.GetActivations(), s.GetFileReads(),
				s.GetUsers(), s.GetThreads(), surfaces(s.GetSurfaces()), s.GetLastDay())
		}
		_ = tw.Flush()
		days := fillDays(r)
		counts := make([]int64, len(days))
		var total int64
		for i, d := range days {
			counts[i] = d.GetActivations()
			total += counts[i]
		}
		fmt.Fprintf(w, "\nactivations %s..%s  %s  (%d)\n", r.GetFrom(), r.GetTo(), sparkline(counts, a.usageASCII(o)), total)
	})
}

// usageRun makes the call and prints its JSON, or what text prints.
func (a *app) usageRun(cmd *cobra.Command, o *usageOpts, skill string, text func(io.Writer, *skillsvcv1.GetUsageResponse)) error {
	if o.days < 1 {
		return usageErr(fmt.Errorf("--days %d: want at least 1", o.days))
	}
	ctx, cancel, err := a.open(cmd, true)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := skillsvcv1.NewUsageServiceClient(a.conn).GetUsage(ctx, &skillsvcv1.GetUsageRequest{Library: a.usageLibrary(), Days: int32(min(o.days, 1<<20)), Skill: skill})
	if err != nil {
		return err
	}
	if a.jsonOut {
		return a.printJSON(resp)
	}
	text(a.stdout, resp)
	return nil
}

// usageLibrary is --library as usage spells it: "own" and "org" besides
// what every command takes.
func (a *app) usageLibrary() *skillsvcv1.LibraryRef {
	switch a.set.Library {
	case "own":
		return nil
	case "org", "organization":
		return &skillsvcv1.LibraryRef{Shared: true}
	}
	return a.libraryRef()
}

// usageASCII reports whether charts are drawn in ASCII: asked, or the
// locale is not UTF-8.
func (a *app) usageASCII(o *usageOpts) bool {
	if o.ascii {
		return true
	}
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := a.getenv(k); v != "" {
			v = strings.ToLower(v)
			return !strings.Contains(v, "utf-8") && !strings.Contains(v, "utf8")
		}
	}
	return true
}

// fillDays is every day of r's range, those without use zero.
func fillDays(r *skillsvcv1.GetUsageResponse) []*skillsvcv1.DailyUsage {
	from, err1 := time.Parse(time.DateOnly, r.GetFrom())
	to, err2 := time.Parse(time.DateOnly, r.GetTo())
	if err1 != nil || err2 != nil || to.Before(from) || to.Sub(from) > 5000*24*time.Hour {
		return r.GetDays()
	}
	byDay := make(map[string]*skillsvcv1.DailyUsage, len(r.GetDays()))
	for _, d := range r.GetDays() {
		byDay[d.GetDay()] = d
	}
	var out []*skillsvcv1.DailyUsage
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		if u, ok := byDay[day]; ok {
			out = append(out, u)
		} else {
			out = append(out, &skillsvcv1.DailyUsage{Day: day})
		}
	}
	return out
}

// Sparkline levels, lowest first.
var (
	sparkUnicode = []rune("▁▂▃▄▅▆▇█")
	sparkASCII   = []rune("_.-=+*#@")
)

// sparkline draws counts as one character each, scaled to the largest; a
// zero is the lowest level.
func sparkline(counts []int64, ascii bool) string {
	levels := sparkUnicode
	if ascii {
		levels = sparkASCII
	}
	var most int64
	for _, c := range counts {
		most = max(most, c)
	}
	var b strings.Builder
	for _, c := range counts {
		i := 0
		if most > 0 && c > 0 {
			i = int((c*int64(len(levels)-1) + most - 1) / most)
		}
		b.WriteRune(levels[i])
	}
	return b.String()
}

// bar is n of most as a bar width characters wide at most.
func bar(n, most int64, width int, ascii bool) string {
	if most <= 0 || n <= 0 {
		return ""
	}
	w := int((n*int64(width) + most - 1) / most)
	if ascii {
		return strings.Repeat("#", w)
	}
	return strings.Repeat("█", w)
}

// surfaces is "grpc:3 mcp:1", by surface name.
func surfaces(m map[string]int64) string {
	var parts []string
	for _, k := range []string{"grpc", "json", "mcp", "vfs"} {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", k, m[k]))
		}
	}
	for k, n := range m {
		if k != "grpc" && k != "json" && k != "mcp" && k != "vfs" && n > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", inert(k), n))
		}
	}
	return dash(strings.Join(parts, " "))
}

// searchesTable prints a report's searches, and last the sum of those
// whose text the server withheld.
func searchesTable(w io.Writer, r *skillsvcv1.GetUsageResponse) {
	tw := newTable(w)
	fmt.Fprintln(tw, "QUERY\tSEARCHES\tEMPTY\tNOWHERE")
	row := func(query string, q *skillsvcv1.SearchUsage) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", query, q.GetSearches(), q.GetEmpty(), q.GetSearches()-q.GetEmpty()-q.GetLed())
	}
	for _, q := range r.GetSearches() {
		row(inert(oneLine(q.GetQuery(), 60)), q)
	}
	if o := r.GetOtherSearches(); o != nil {
		row(fmt.Sprintf("(other queries, each by fewer than %d users)", r.GetQueryMinUsers()), o)
	}
	_ = tw.Flush()
}
