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
	NoQuery float64 `json:"block_without_query_inclusion"`
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
		if o.NoQuery {
			s.NoQuery++
		}
	}
	n := float64(len(os))
	s.Hit1, s.Recall3, s.Recall, s.MRR, s.Block, s.NoQuery = s.Hit1/n, s.Recall3/n, s.Recall/n, s.MRR/n, s.Block/n, s.NoQuery/n
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
// With -usage-history each library has a row per use variant.
func printTable(w io.Writer, libs []*library, note string) {
	withUse := slices.ContainsFunc(libs, func(l *library) bool { return l.Use != "" })
	head := []string{"library", "requests", "n", "Hit@1", "Recall@3", "Recall@10", "MRR@10", "in block", "in block w/o query", "SearchSkills p50 / p99", "FormatSkills p50 / p99", "index / skill"}
	if withUse {
		head = slices.Insert(head, 1, "use")
	}
	rows := [][]string{head}
	for _, lib := range libs {
		sp50, sp99 := percentiles(lib.searchLat)
		fp50, fp99 := percentiles(lib.formatLat)
		for i, s := range lib.rows() {
			name, use, lat1, lat2, mem := "", "", "", "", ""
			if i == 0 {
				name, use = lib.Name, lib.Use
				lat1 = loadbench.Duration(sp50) + " / " + loadbench.Duration(sp99)
				lat2 = loadbench.Duration(fp50) + " / " + loadbench.Duration(fp99)
				mem = lib.perSkill()
			}
			row := []string{name, s.Subset, fmt.Sprint(s.N), f2(s.Hit1), f2(s.Recall3), f2(s.Recall), f2(s.MRR), f2(s.Block), f2(s.NoQuery), lat1, lat2, mem}
			if withUse {
				row = slices.Insert(row, 1, use)
			}
			rows = append(rows, row)
		}
	}
	loadbench.WriteTable(w, rows)
	fmt.Fprintf(w, "\nMachine: %s; skillsvc with its defaults (local directory, in-process cache). Run: %s.\n", loadbench.Machine(), time.Now().UTC().Format("2006-01-02"))
	if note != "" {
		fmt.Fprintln(w, note)
	}
}

// effect is what use changed in one library: the figures with use less
// those without, per subset, and how many measured requests it moved.
type effect struct {
	Library string   `json:"library"`
	History history  `json:"history"`
	Rows    []scores `json:"difference"` // on − off
	// Requests whose target ranks higher (better) or lower or out of the
	// top 10 (worse) with use; whose query-aware block and block without
	// a query changed in holding it.
	Better         int `json:"rank_better"`
	Worse          int `json:"rank_worse"`
	BlockChanged   int `json:"block_changed"`
	NoQueryChanged int `json:"block_without_query_changed"`
}

// effects pairs each library's variants without and with use.
func effects(libs []*library) []effect {
	var out []effect
	for i, off := range libs {
		if off.Use != useOff || i+1 >= len(libs) || libs[i+1].Use != useOn || libs[i+1].Name != off.Name {
			continue
		}
		on := libs[i+1]
		e := effect{Library: off.Name}
		if on.History != nil {
			e.History = *on.History
		}
		a, b := off.rows(), on.rows()
		for j := range a {
			e.Rows = append(e.Rows, scores{Subset: a[j].Subset, N: a[j].N, Hit1: b[j].Hit1 - a[j].Hit1, Recall3: b[j].Recall3 - a[j].Recall3,
				Recall: b[j].Recall - a[j].Recall, MRR: b[j].MRR - a[j].MRR, Block: b[j].Block - a[j].Block, NoQuery: b[j].NoQuery - a[j].NoQuery})
		}
		withUse := map[string]outcome{}
		for _, o := range on.Outcomes {
			withUse[o.ID] = o
		}
		for _, o := range off.Outcomes {
			u := withUse[o.ID]
			switch {
			case u.Rank == o.Rank:
			case u.Rank != 0 && (o.Rank == 0 || u.Rank < o.Rank):
				e.Better++
			default:
				e.Worse++
			}
			if u.Block != o.Block {
				e.BlockChanged++
			}
			if u.NoQuery != o.NoQuery {
				e.NoQueryChanged++
			}
		}
		out = append(out, e)
	}
	return out
}

// printEffects writes, with -usage-history, the difference use made.
func printEffects(w io.Writer, libs []*library) {
	es := effects(libs)
	if len(es) == 0 {
		return
	}
	fmt.Fprintln(w, "\nEffect of use (on − off):")
	fmt.Fprintln(w)
	rows := [][]string{{"library", "history", "requests", "n", "Hit@1", "Recall@3", "Recall@10", "MRR@10", "in block", "in block w/o query", "ranks better / worse"}}
	for _, e := range es {
		for i, s := range e.Rows {
			name, hist, moved := "", "", ""
			if i == 0 {
				name = e.Library
				hist = fmt.Sprintf("%d + %d background", e.History.Targets, e.History.Background)
				moved = fmt.Sprintf("%d / %d", e.Better, e.Worse)
			}
			rows = append(rows, []string{name, hist, s.Subset, fmt.Sprint(s.N), d2(s.Hit1), d2(s.Recall3), d2(s.Recall), d2(s.MRR), d2(s.Block), d2(s.NoQuery), moved})
		}
	}
	loadbench.WriteTable(w, rows)
}

// d2 is a signed difference to two places; a rounding of zero is "0.00".
func d2(f float64) string {
	s := fmt.Sprintf("%+.2f", f)
	if s == "+0.00" || s == "-0.00" {
		return "0.00"
	}
	return s
}

func f2(f float64) string { return fmt.Sprintf("%.2f", f) }

// report is the JSON written with -json.
type report struct {
	Machine   string          `json:"machine"`
	Date      string          `json:"date"`
	Note      string          `json:"note,omitempty"`
	Libraries []libraryReport `json:"libraries"`
	// Effects, with -usage-history: each library with use less without.
	Effects []effect `json:"effects,omitempty"`
}

type libraryReport struct {
	Name          string    `json:"name"`
	Use           string    `json:"use,omitempty"` // with -usage-history: "off" or "on"
	History       *history  `json:"history,omitempty"`
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
		lr := libraryReport{Name: lib.Name, Use: lib.Use, History: lib.History, Skills: lib.Skills, Rows: lib.rows(), SearchP50MS: ms(sp50), SearchP99MS: ms(sp99),
			FormatP50MS: ms(fp50), FormatP99MS: ms(fp99), IndexBytes: lib.IndexBytes, Outcomes: lib.Outcomes}
		if lib.IndexBytes >= 0 && lib.Skills > 0 {
			lr.IndexPerSkill = float64(lib.IndexBytes) / float64(lib.Skills)
		}
		r.Libraries = append(r.Libraries, lr)
	}
	r.Effects = effects(libs)
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}
