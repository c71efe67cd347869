// Command bench-selection measures skill selection: whether the skill a
// user's request needs reaches the agent. It downloads the pinned registry
// packages of test/selection/registry.json (once, into a cache; package
// internal/selection/corpus), lays their skills out as a shared library, the 17 public
// anthropics/skills under one category and the 10,000 public SKILL.md files
// under categories named for their sources, starts the real skillsvc binary
// on it with its defaults (local directory, in-process cache), and runs
// every request of test/selection/queries.json through SearchSkills (limit
// 10) and the query-aware FormatSkills (12,000 characters): once on the 17
// alone, once on the 17 beside the corpus. It prints a markdown table of
// Hit@1, Recall@3, Recall@10, MRR@10 and block inclusion per split, the
// warm p50/p99 of both calls, the search index's memory per skill (when the
// server exports skillsvc_search_index_bytes) and the machine; -json writes
// the same with every request's outcome. `make bench-selection` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/selection/corpus"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

type options struct {
	list        string
	queries     string
	jsonOut     string
	skillsvcBin string
	skillsvcLog string
	size        int
	cacheDir    string
	// embeddingsURL and embeddingsModel turn on skillsvc's semantic
	// stage (--search.embeddings.*); empty measures the default binary.
	embeddingsURL   string
	embeddingsModel string
	// usageHistory measures with recorded use (usage.go): each library
	// on a server ordering by use and on one that does not.
	usageHistory    bool
	usageSeed       uint64
	usageBackground int
	// flushInterval is skillsvc's --usage.flush-interval; empty keeps its
	// default.
	flushInterval string
	// load replaces loadLibrary in tests.
	load func(context.Context, options) (targets, skills []skill, note string, err error)
}

func parseOptions(args []string) (options, error) {
	var o options
	f := flag.NewFlagSet("bench-selection", flag.ContinueOnError)
	f.StringVar(&o.list, "list", "test/selection/registry.json", "The pinned registry packages the targets and the corpus come from (test/selection/SOURCES.md).")
	f.StringVar(&o.queries, "queries", "test/selection/queries.json", "The requests, each with its target skill's folder in the library and its split.")
	f.StringVar(&o.jsonOut, "json", "", "Also write the figures and every request's outcome to this JSON file.")
	f.StringVar(&o.skillsvcBin, "skillsvc-bin", "", "skillsvc binary to run; empty builds ./cmd/skillsvc.")
	f.StringVar(&o.skillsvcLog, "skillsvc-log", "", "Append skillsvc's log to this file (it names each skill it refuses).")
	f.IntVar(&o.size, "size", 10000, "Corpus skills beside the targets: the list's first N distinct ones; 0 for all.")
	f.StringVar(&o.cacheDir, "cache-dir", corpus.DefaultCacheDir(), "Where the downloaded packages are kept between runs (about 500 MB for the whole list; $"+corpus.CacheEnv+" sets the default).")
	f.StringVar(&o.embeddingsURL, "embeddings-url", "", "Measure with skillsvc's optional semantic stage: its --search.embeddings.url (an OpenAI-compatible endpoint). Each library's skills are embedded before the timed pass.")
	f.StringVar(&o.embeddingsModel, "embeddings-model", "all-MiniLM-L6-v2", "The --search.embeddings.model with -embeddings-url.")
	f.BoolVar(&o.usageHistory, "usage-history", false, "Model recorded use: activate the targets of a seeded earlier half of the requests (and background skills, by other users) through GetSkill, then measure the other half on a server ordering by use (the defaults) and on one with --skills.search-use-prior=false --skills.order-by-use=false, side by side.")
	f.Uint64Var(&o.usageSeed, "usage-seed", 1, "With -usage-history: the seed of the split into earlier and measured requests and of the background use.")
	f.IntVar(&o.usageBackground, "usage-background", -1, "With -usage-history: background activations of skills no request is about, by other users; -1 for as many as the earlier requests' activations.")
	f.StringVar(&o.flushInterval, "usage-flush-interval", "", "skillsvc's --usage.flush-interval (empty: its default, 10s): with -usage-history the history is counted, and the block ordered by it, within a few intervals.")
	f.Usage = func() {
		fmt.Fprintf(f.Output(), "Usage: go run ./cmd/bench-selection [flags]\n\n"+
			"Starts skillsvc with its defaults on the benchmark library and prints a table of skill\n"+
			"selection figures (Hit@1, Recall, MRR, prompt-block inclusion, latencies).\n\n")
		f.PrintDefaults()
	}
	if err := f.Parse(args); err != nil {
		return o, err
	}
	if f.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", f.Args())
	}
	return o, nil
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-selection:", err)
		os.Exit(2)
	}
	loadbench.Main("bench-selection", func(cl *loadbench.Cleanups) int {
		if err := run(context.Background(), o, cl, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "bench-selection:", err)
			return 1
		}
		return 0
	})
}

type bench struct {
	log io.Writer
	// serverLog receives skillsvc's log; nil discards it.
	serverLog io.Writer
	dir       string
	bin       string
	// embeddings are skillsvc's --search.embeddings.* flags; none for the
	// default binary.
	embeddings []string
	// flushInterval is skillsvc's --usage.flush-interval, "" its default.
	flushInterval string
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "bench-selection: "+format+"\n", args...)
}

// run measures the library of the targets alone, then beside the corpus,
// and prints the table.
func run(ctx context.Context, o options, cl *loadbench.Cleanups, out, log io.Writer) error {
	b := &bench{log: log, flushInterval: o.flushInterval}
	load := o.load
	if load == nil {
		load = loadLibrary
	}
	b.logf("loading the library from %s (packages cached in %s)", o.list, o.cacheDir)
	targets, corpus, loadNote, err := load(ctx, o)
	if err != nil {
		return err
	}
	var notes []string
	if loadNote != "" {
		notes = append(notes, loadNote)
	}
	qs, err := loadQueries(o.queries)
	if err != nil {
		return err
	}
	if o.skillsvcLog != "" {
		f, err := os.OpenFile(o.skillsvcLog, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		b.serverLog = f
	}
	if b.dir, err = os.MkdirTemp("", "skillsvc-bench-selection-"); err != nil {
		return err
	}
	cl.Add(func() { os.RemoveAll(b.dir) })
	if o.embeddingsURL != "" {
		b.embeddings = []string{"--search.embeddings.url=" + o.embeddingsURL, "--search.embeddings.model=" + o.embeddingsModel}
		notes = append(notes, fmt.Sprintf("With the semantic stage: %s embedded by %s.", o.embeddingsModel, o.embeddingsURL))
	}
	if b.bin = o.skillsvcBin; b.bin == "" {
		b.logf("building ./cmd/skillsvc")
		if b.bin, err = testserver.BuildSkillsvc(ctx, b.dir); err != nil {
			return err
		}
	}

	measured := qs
	var earlier []query
	if o.usageHistory {
		earlier, measured = splitRequests(qs, o.usageSeed)
		notes = append(notes, fmt.Sprintf("With use: %d earlier requests (seed %d) made the history, the other %d are measured.", len(earlier), o.usageSeed, len(measured)))
	}
	alone := &library{Name: fmt.Sprintf("the %d targets alone", len(targets)), skills: targets}
	beside := &library{Name: fmt.Sprintf("the %d beside %s", len(targets), loadbench.Count(float64(len(corpus)))), skills: append(append([]skill(nil), targets...), corpus...)}
	libs := []*library{alone, beside}
	for _, lib := range libs {
		have := map[string]bool{}
		for _, s := range lib.skills {
			have[s.Dir] = true
		}
		missing := 0
		for _, q := range measured {
			if have[q.Target] {
				lib.queries = append(lib.queries, q)
			} else if lib == beside {
				missing++
			}
		}
		if missing > 0 {
			notes = append(notes, fmt.Sprintf("%d requests whose target is not in the library are left out.", missing))
		}
		if len(lib.queries) == 0 {
			return fmt.Errorf("%s: %w", lib.Name, errNoQueries)
		}
	}
	if o.usageHistory {
		libs = nil
		for _, lib := range []*library{alone, beside} {
			h := libraryHistory(lib.skills, qs, earlier, o.usageBackground, o.usageSeed)
			for _, use := range []string{useOff, useOn} {
				v, hv := *lib, h
				v.Use, v.History = use, &hv
				libs = append(libs, &v)
			}
		}
	}
	for _, lib := range libs {
		if err := b.measure(ctx, lib); err != nil {
			return err
		}
	}
	note := strings.Join(notes, " ")
	printTable(out, libs, note)
	printEffects(out, libs)
	if o.jsonOut != "" {
		return writeJSON(o.jsonOut, libs, note)
	}
	return nil
}
