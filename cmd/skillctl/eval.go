package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

type evalOptions struct {
	dir, category             string
	k, concurrency            int
	minHitRate, minTopKRate   float64
	maxFalseRate              float64
	minHitSet, minTopSet      bool
	maxFalseSet, anyThreshold bool
}

// evalQuery is one query's outcome, as --json prints it.
type evalQuery struct {
	Query         string `json:"query"`
	ShouldTrigger bool   `json:"should_trigger"`
	// Rank is the skill's position among the results, 1 first; 0 when
	// not in the first k.
	Rank    int    `json:"rank"`
	TopPath string `json:"top_path,omitempty"` // the first result, when another skill
	TopName string `json:"top_name,omitempty"`
}

// evalSkill is one skill's report.
type evalSkill struct {
	Name string `json:"name"`
	Path string `json:"path"` // the skill's path, or the folder for --dir
	// Should-trigger queries: how many, retrieved first, in the top k.
	ShouldTrigger int `json:"should_trigger"`
	First         int `json:"first"`
	InTopK        int `json:"in_top_k"`
	// Should-not-trigger queries: how many, and how many retrieved the
	// skill first anyway (false triggers) or in the top k.
	ShouldNotTrigger int `json:"should_not_trigger"`
	FalseFirst       int `json:"false_first"`
	FalseInTopK      int `json:"false_in_top_k"`
	// Rates over those counts; null without such queries.
	HitRate   *float64 `json:"hit_rate"`
	TopKRate  *float64 `json:"top_k_rate"`
	FalseRate *float64 `json:"false_trigger_rate"`
	// Failures: should-trigger queries not retrieved first, should-not
	// ones retrieved first.
	Failures []evalQuery `json:"failures"`
	// Problems: the file's (a malformed one runs nothing) and, with --dir,
	// every warning the server found (coexistence among them).
	Problems []json.RawMessage `json:"problems"`
	Passed   bool              `json:"passed"`
	problems []*skillsvcv1.SkillProblem
}

func (a *app) evalCmd() *cobra.Command {
	var o evalOptions
	cmd := &cobra.Command{
		Use:   "eval [NAME]",
		Short: "Run skills' eval_queries.json against the library's search and report how often each is chosen",
		Long: `eval runs triggering evals: each skill's eval_queries.json, as the Agent Skills docs define it,

  [{"query": "fill in the tax form in this PDF", "should_trigger": true},
   {"query": "write a limerick about taxes", "should_trigger": false}]

against the search agents use (SearchSkills) over your real library (your own skills, your
teams' and the organization's, as the server merges them), and reports per skill how often a
query that should trigger it retrieves it first and in the top -k, and how often a query that
should not retrieves it first anyway (a false trigger), with the failing queries.

Without NAME every skill with an eval_queries.json is run; with NAME that skill only.
--dir PATH runs the folder (or every skill folder below it) before publishing: the server
validates it without publishing (PublishSkill validate_only, to --library) and runs its queries
against that library as it would be with the folder in it; its coexistence warnings (skills of
the library it competes with) are printed too. --dir looks at most ` + fmt.Sprint(skillmd.EvalDepth) + ` results deep.

Queries run --concurrency at a time (your per-user rate limit applies; a call refused for it is
retried after the delay the server asks). --json prints the report for CI. With a threshold
flag, each skill with such queries must meet it, else the exit code is 1.`,
		Example: `  skillctl eval                       # every skill with eval_queries.json
  skillctl eval pdf -k 3
  skillctl eval --dir ./pdf --library shared
  skillctl eval --json --min-hit-rate 0.8 --max-false-rate 0.1`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeSkillNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			o.minHitSet, o.minTopSet, o.maxFalseSet = f.Changed("min-hit-rate"), f.Changed("min-top-k-rate"), f.Changed("max-false-rate")
			o.anyThreshold = o.minHitSet || o.minTopSet || o.maxFalseSet
			switch {
			case o.k < 1:
				return usageErr(errors.New("-k must be at least 1"))
			case o.dir != "" && o.k > skillmd.EvalDepth:
				return usageErr(fmt.Errorf("-k is at most %d with --dir (the server's eval depth)", skillmd.EvalDepth))
			case o.dir != "" && len(args) > 0:
				return usageErr(errors.New("give NAME or --dir, not both"))
			case o.concurrency < 1 || o.concurrency > maxEvalConcurrency:
				return usageErr(fmt.Errorf("--concurrency must be 1..%d", maxEvalConcurrency))
			}
			for _, r := range []float64{o.minHitRate, o.minTopKRate, o.maxFalseRate} {
				if !(r >= 0 && r <= 1) {
					return usageErr(errors.New("the rates must be 0..1"))
				}
			}
			var report []evalSkill
			var err error
			if o.dir != "" {
				report, err = a.evalDir(cmd, o)
			} else {
				name := ""
				if len(args) == 1 {
					name = args[0]
				}
				report, err = a.evalLibrary(cmd, name, o)
			}
			if err != nil {
				return err
			}
			return a.printEval(report, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "run the skill folder (or every one below it) before publishing, through the server's validate-only publish to --library")
	f.StringVar(&o.category, "category", "", "with --dir: the category the folder would be pushed to (a library's category folders name their own)")
	f.IntVarP(&o.k, "k", "k", 5, "how deep a query that should trigger the skill may find it and still count as in the top k")
	f.IntVar(&o.concurrency, "concurrency", 4, "searches in flight at once")
	f.Float64Var(&o.minHitRate, "min-hit-rate", 0, "fail (exit 1) when a skill's should-trigger queries retrieve it first less often than this, 0..1")
	f.Float64Var(&o.minTopKRate, "min-top-k-rate", 0, "fail (exit 1) when a skill's should-trigger queries find it in the top k less often than this, 0..1")
	f.Float64Var(&o.maxFalseRate, "max-false-rate", 0, "fail (exit 1) when a skill's should-not-trigger queries retrieve it first more often than this, 0..1")
	return cmd
}

// maxEvalConcurrency bounds --concurrency: the server's per-user limits
// would refuse more.
const maxEvalConcurrency = 16

// evalLibrary runs the queries of every skill of the caller's library that
// has an eval_queries.json (or of the skill name) through SearchSkills.
func (a *app) evalLibrary(cmd *cobra.Command, name string, o evalOptions) ([]evalSkill, error) {
	if err := a.connect(cmd); err != nil {
		return nil, err
	}
	ctx := cmd.Context()
	list, err := a.listAll(ctx, &skillsvcv1.ListSkillsRequest{View: skillsvcv1.SkillView_SKILL_VIEW_FULL})
	if err != nil {
		return nil, err
	}
	var picked []*skillsvcv1.SkillSummary
	for _, s := range list.GetSkills() {
		if name != "" && s.GetName() != name && s.GetPath() != name && strings.TrimPrefix(s.GetPath(), "/skills/") != name {
			continue
		}
		for _, f := range s.GetManifest().GetFiles() {
			if f.GetPath() == s.GetPath()+"/"+skillmd.EvalQueriesFile { // virtual paths
				picked = append(picked, s)
				break
			}
		}
	}
	if name != "" && len(picked) == 0 {
		return nil, &exitError{code: exitNotFound, err: fmt.Errorf("no skill %q with an %s in your library", name, skillmd.EvalQueriesFile)}
	}
	report := make([]evalSkill, len(picked))
	queries := make([][]skillmd.EvalQuery, len(picked))
	for i, s := range picked {
		report[i] = evalSkill{Name: s.GetName(), Path: s.GetPath()}
		cctx, cancel, err := a.callCtx(ctx, true)
		if err != nil {
			return nil, err
		}
		var resp *skillsvcv1.ReadSkillFileResponse
		err = retryLimited(cctx, func() error {
			var err error
			resp, err = a.skills().ReadSkillFile(cctx, &skillsvcv1.ReadSkillFileRequest{Path: s.GetPath(), File: skillmd.EvalQueriesFile})
			return err
		})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.GetPath(), err)
		}
		qs, ps := skillmd.ParseEvalQueries([]byte(resp.GetContent()))
		queries[i] = qs
		for _, p := range ps {
			report[i].problems = append(report[i].problems, problemProto(p))
		}
	}
	// Every query of every skill, --concurrency at a time.
	type job struct{ skill, query int }
	var jobs []job
	for i, qs := range queries {
		for j := range qs {
			jobs = append(jobs, job{i, j})
		}
	}
	results := make([][]evalQuery, len(picked))
	for i, qs := range queries {
		results[i] = make([]evalQuery, len(qs))
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.concurrency)
	for _, jb := range jobs {
		g.Go(func() error {
			q := queries[jb.skill][jb.query]
			cctx, cancel, err := a.callCtx(gctx, true)
			if err != nil {
				return err
			}
			defer cancel()
			var resp *skillsvcv1.SearchSkillsResponse
			err = retryLimited(cctx, func() error {
				var err error
				resp, err = a.skills().SearchSkills(cctx, &skillsvcv1.SearchSkillsRequest{Query: q.Query, Limit: int32(o.k)})
				return err
			})
			if err != nil {
				return fmt.Errorf("%s: query %q: %w", picked[jb.skill].GetPath(), clip(q.Query, 60), err)
			}
			results[jb.skill][jb.query] = rankOf(picked[jb.skill].GetPath(), q, resp.GetResults())
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i := range report {
		report[i].tally(results[i], o)
	}
	return report, nil
}

// rankOf is where the skill at path came among hits (a copy collapsed into
// a hit counts as the hit).
func rankOf(path string, q skillmd.EvalQuery, hits []*skillsvcv1.ScoredSkill) evalQuery {
	out := evalQuery{Query: q.Query, ShouldTrigger: q.ShouldTrigger}
	for i, h := range hits {
		self := h.GetSkill().GetPath() == path
		for _, alt := range h.GetAlternates() {
			self = self || alt.GetPath() == path
		}
		if self && out.Rank == 0 {
			out.Rank = i + 1
		}
		if i == 0 && !self {
			out.TopPath, out.TopName = h.GetSkill().GetPath(), h.GetSkill().GetName()
		}
	}
	return out
}

// evalDir runs each skill folder below o.dir through a validate-only
// publish, which runs its queries on the server.
func (a *app) evalDir(cmd *cobra.Command, o evalOptions) ([]evalSkill, error) {
	dirs, err := findSkills(o.dir)
	if err != nil {
		return nil, usageErr(err)
	}
	if err := a.connect(cmd); err != nil {
		return nil, err
	}
	var report []evalSkill
	for _, dir := range dirs {
		s, err := readSkillDir(cmd.Context(), dir)
		if err != nil {
			return nil, usageErr(err)
		}
		ps, err := checkLocal(s)
		if err != nil {
			return nil, usageErr(err)
		}
		if hasErrors(ps) {
			fmt.Fprintf(a.stderr, "skillctl: %s breaks the publishing rules; nothing was sent:\n", inert(s.Name))
			printProblems(a.stderr, "", ps)
			return nil, &exitError{code: exitInvalid}
		}
		ctx, cancel, err := a.callCtx(cmd.Context(), true)
		if err != nil {
			return nil, err
		}
		resp, err := a.publish(ctx, s, &skillsvcv1.PublishSkillHeader{Library: a.libraryRef(), Category: categoryOf(o.dir, dir, o.category), Name: s.Name, ValidateOnly: true}, nil)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		r := evalSkill{Name: s.Name, Path: dir, problems: resp.GetProblems()}
		r.tally(evalQueries(resp.GetEvals(), o.k), o)
		report = append(report, r)
	}
	return report, nil
}

// tally counts the skill's outcomes and judges them against the
// thresholds.
func (r *evalSkill) tally(qs []evalQuery, o evalOptions) {
	r.Failures = []evalQuery{}
	for _, q := range qs {
		if q.ShouldTrigger {
			r.ShouldTrigger++
			if q.Rank == 1 {
				r.First++
			}
			if q.Rank >= 1 && q.Rank <= o.k {
				r.InTopK++
			}
			if q.Rank != 1 {
				r.Failures = append(r.Failures, q)
			}
			continue
		}
		r.ShouldNotTrigger++
		if q.Rank == 1 {
			r.FalseFirst++
			r.Failures = append(r.Failures, q)
		}
		if q.Rank >= 1 && q.Rank <= o.k {
			r.FalseInTopK++
		}
	}
	rate := func(n, of int) *float64 {
		if of == 0 {
			return nil
		}
		v := float64(n) / float64(of)
		return &v
	}
	r.HitRate, r.TopKRate, r.FalseRate = rate(r.First, r.ShouldTrigger), rate(r.InTopK, r.ShouldTrigger), rate(r.FalseFirst, r.ShouldNotTrigger)
	r.Passed = !(o.minHitSet && r.HitRate != nil && *r.HitRate < o.minHitRate) &&
		!(o.minTopSet && r.TopKRate != nil && *r.TopKRate < o.minTopKRate) &&
		!(o.maxFalseSet && r.FalseRate != nil && *r.FalseRate > o.maxFalseRate)
}

func (a *app) printEval(report []evalSkill, o evalOptions) error {
	passed := true
	for i := range report {
		passed = passed && report[i].Passed
		report[i].Problems = []json.RawMessage{}
		for _, p := range report[i].problems {
			b, err := protojson.Marshal(p)
			if err != nil {
				return err
			}
			report[i].Problems = append(report[i].Problems, b)
		}
	}
	if a.jsonOut {
		enc := json.NewEncoder(a.jsonStdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			K      int         `json:"k"`
			Passed bool        `json:"passed"`
			Skills []evalSkill `json:"skills"`
		}{o.k, passed, report}); err != nil {
			return err
		}
	} else {
		a.printEvalTable(report, o)
	}
	if o.anyThreshold && !passed {
		return &exitError{code: exitInvalid}
	}
	return nil
}

func (a *app) printEvalTable(report []evalSkill, o evalOptions) {
	if len(report) == 0 {
		fmt.Fprintf(a.stdout, "no skill with an %s\n", skillmd.EvalQueriesFile)
		return
	}
	tw := newTable(a.stdout)
	fmt.Fprintf(tw, "SKILL\tSHOULD TRIGGER\tFIRST\tTOP %d\tSHOULD NOT\tFALSE TRIGGERS\tRESULT\n", o.k)
	for _, r := range report {
		result := "ok"
		if !r.Passed {
			result = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s\t%s\n", inert(r.Name), r.ShouldTrigger, ratio(r.First, r.ShouldTrigger), ratio(r.InTopK, r.ShouldTrigger),
			r.ShouldNotTrigger, ratio(r.FalseFirst, r.ShouldNotTrigger), result)
	}
	tw.Flush()
	for _, r := range report {
		if a.quiet || (len(r.Failures) == 0 && len(r.problems) == 0) {
			continue
		}
		fmt.Fprintf(a.stdout, "\n%s (%s):\n", inert(r.Name), inert(r.Path))
		printProblems(a.stdout, "", r.problems)
		for _, q := range r.Failures {
			printFailure(a.stdout, q, o.k)
		}
	}
}

func printFailure(w io.Writer, q evalQuery, k int) {
	line := fmt.Sprintf("  false trigger %q: retrieved first", q.Query)
	if q.ShouldTrigger {
		where := fmt.Sprintf("not in the top %d", k)
		if q.Rank > 0 {
			where = fmt.Sprintf("rank %d", q.Rank)
		}
		line = fmt.Sprintf("  miss %q: %s", q.Query, where)
		if q.TopPath != "" {
			line += fmt.Sprintf(", first %s (%s)", q.TopName, q.TopPath)
		}
	}
	fmt.Fprintln(w, inert(line))
}

// printEvals sums up a publish's triggering evals (eval_queries.json run
// against the library with the new version), with the failing queries.
func (a *app) printEvals(evals []*skillsvcv1.TriggerEval) {
	if len(evals) == 0 {
		return
	}
	var r evalSkill
	r.tally(evalQueries(evals, skillmd.EvalDepth), evalOptions{k: skillmd.EvalDepth})
	fmt.Fprintf(a.stdout, "evals: should trigger %s first, %s in the top %d; should not %s first\n",
		ratio(r.First, r.ShouldTrigger), ratio(r.InTopK, r.ShouldTrigger), skillmd.EvalDepth, ratio(r.FalseFirst, r.ShouldNotTrigger))
	for _, q := range r.Failures {
		printFailure(a.stdout, q, skillmd.EvalDepth)
	}
}

// evalQueries converts a publish's evals, a rank past k as none.
func evalQueries(evals []*skillsvcv1.TriggerEval, k int) []evalQuery {
	var qs []evalQuery
	for _, e := range evals {
		q := evalQuery{Query: e.GetQuery(), ShouldTrigger: e.GetShouldTrigger(), TopPath: e.GetTopPath(), TopName: e.GetTopName()}
		if rk := int(e.GetRank()); rk <= k {
			q.Rank = rk
		}
		qs = append(qs, q)
	}
	return qs
}

// ratio prints n of of, with the rate; "-" when there is nothing to count.
func ratio(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d %.2f", n, of, float64(n)/float64(of))
}

// retryLimited runs call again while the server refuses it for the
// caller's rate limit (RESOURCE_EXHAUSTED), after the delay the server asks
// (RetryInfo), at most a few times.
func retryLimited(ctx context.Context, call func() error) error {
	wait := 200 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := call()
		st, ok := status.FromError(err)
		if err == nil || !ok || st.Code() != codes.ResourceExhausted || attempt == 4 {
			return err
		}
		d := wait
		for _, det := range st.Details() {
			if ri, ok := det.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
				d = min(ri.GetRetryDelay().AsDuration(), 10*time.Second)
			}
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait *= 2
	}
}

func problemProto(p skillmd.Problem) *skillsvcv1.SkillProblem {
	return &skillsvcv1.SkillProblem{Severity: skillsvcv1.SkillProblem_Severity(p.Severity), File: p.File, Field: p.Field, Rule: p.Rule, Value: p.Value, Message: p.Message}
}
