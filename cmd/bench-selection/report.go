package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/loadbench"
)

// scores are the selection figures of a set of outcomes.
type scores struct {
	Subset  string  `json:"subset"`
	N       int     `json:"requests"`
	Hit1    float64 `json:"hit_at_1"`
	Recall3 float64 `json:"recall_at_3"`
	Recall  float64 `json:"recall_at_10"`
	MRR     float64 `json:"mrr_at_10"`
	Block   float64 `json:"block_inclusion"`
}

func score(subset string, os []outcome) scores {
	s := scores{Subset: subset, N: len(os)}
	if len(os) == 0 {
		return s
	}
	for _, o := range os {
		if o.Rank == 1 {
			s.Hit1++
		}
		if o.Rank >= 1 && o.Rank <= 3 {
			s.Recall3++
		}
		if o.Rank >= 1 {
			s.Recall++
			s.MRR += 1 / float64(o.Rank)
		}
		if o.Block {
			s.Block++
		}
	}
	n := float64(len(os))
	s.Hit1, s.Recall3, s.Recall, s.MRR, s.Block = s.Hit1/n, s.Recall3/n, s.Recall/n, s.MRR/n, s.Block/n
	return s
}

// rows are a library's figures: per split and overall, and, beside the
// corpus, the 17 targets' requests alone (comparable with the library of
// the 17).
func (lib *library) rows() []scores {
	pick := func(f func(outcome) bool) []outcome {
		var out []outcome
		for _, o := range lib.Outcomes {
			if f(o) {
				out = append(out, o)
			}
		}
		return out
	}
	out := []scores{
		score("tune", pick(func(o outcome) bool { return o.Split == "tune" })),
		score("holdout", pick(func(o outcome) bool { return o.Split == "holdout" })),
		score("all", lib.Outcomes),
	}
	if t := pick(func(o outcome) bool { return strings.HasPrefix(o.Target, targetCategory+"/") }); len(t) < len(lib.Outcomes) {
		out = append(out, score("the 17's requests", t))
		out = append(out, score("Spanish requests", pick(func(o outcome) bool { return o.Lang == "es" })))
	}
	return out
}

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	return loadbench.Percentile(s, 50), loadbench.Percentile(s, 99)
}

func (lib *library) perSkill() string {
	if lib.IndexBytes < 0 || lib.Skills == 0 {
		return "—"
	}
	return loadbench.Bytes(lib.IndexBytes / int64(lib.Skills))
}

// printTable writes the markdown table the README shows, and the machine.
func printTable(w io.Writer, libs []*library, note string) {
	rows := [][]string{{"library", "requests", "n", "Hit@1", "Recall@3", "Recall@10", "MRR@10", "in block", "SearchSkills p50 / p99", "FormatSkills p50 / p99", "index / skill"}}
	for _, lib := range libs {
		sp50, sp99 := percentiles(lib.searchLat)
		fp50, fp99 := percentiles(lib.formatLat)
		for i, s := range lib.rows() {
			name, lat1, lat2, mem := "", "", "", ""
			if i == 0 {
				name = lib.Name
				lat1 = loadbench.Duration(sp50) + " / " + loadbench.Duration(sp99)
				lat2 = loadbench.Duration(fp50) + " / " + loadbench.Duration(fp99)
				mem = lib.perSkill()
			}
			rows = append(rows, []string{name, s.Subset, fmt.Sprint(s.N), f2(s.Hit1), f2(s.Recall3), f2(s.Recall), f2(s.MRR), f2(s.Block), lat1, lat2, mem})
		}
	}
	loadbench.WriteTable(w, rows)
	fmt.Fprintf(w, "\nMachine: %s; skillsvc with its defaults (local directory, in-process cache). Run: %s.\n", loadbench.Machine(), time.Now().UTC().Format("2006-01-02"))
	if note != "" {
		fmt.Fprintln(w, note)
	}
}

func f2(f float64) string { return fmt.Sprintf("%.2f", f) }

// report is the JSON written with -json.
type report struct {
	Machine   string          `json:"machine"`
	Date      string          `json:"date"`
	Note      string          `json:"note,omitempty"`
	Libraries []libraryReport `json:"libraries"`
}

type libraryReport struct {
	Name          string    `json:"name"`
	Skills        int       `json:"skills"`
	Rows          []scores  `json:"rows"`
	SearchP50MS   float64   `json:"search_p50_ms"`
	SearchP99MS   float64   `json:"search_p99_ms"`
	FormatP50MS   float64   `json:"format_p50_ms"`
	FormatP99MS   float64   `json:"format_p99_ms"`
	IndexBytes    int64     `json:"index_bytes"` // -1: not exposed
	IndexPerSkill float64   `json:"index_bytes_per_skill,omitempty"`
	Outcomes      []outcome `json:"outcomes"`
}

func writeJSON(file string, libs []*library, note string) error {
	r := report{Machine: loadbench.Machine(), Date: time.Now().UTC().Format("2006-01-02"), Note: note}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, lib := range libs {
		sp50, sp99 := percentiles(lib.searchLat)
		fp50, fp99 := percentiles(lib.formatLat)
		lr := libraryReport{Name: lib.Name, Skills: lib.Skills, Rows: lib.rows(), SearchP50MS: ms(sp50), SearchP99MS: ms(sp99),
			FormatP50MS: ms(fp50), FormatP99MS: ms(fp99), IndexBytes: lib.IndexBytes, Outcomes: lib.Outcomes}
		if lib.IndexBytes >= 0 && lib.Skills > 0 {
			lr.IndexPerSkill = float64(lib.IndexBytes) / float64(lib.Skills)
		}
		r.Libraries = append(r.Libraries, lr)
	}
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}
