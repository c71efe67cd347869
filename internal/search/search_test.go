package search

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func build(w Weights, docs ...Doc) *Index {
	b := NewBuilder(w)
	for _, d := range docs {
		b.Add(Analyze(d))
	}
	return b.Build()
}

func refs(hs []Hit) []Ref {
	out := make([]Ref, len(hs))
	for i, h := range hs {
		out[i] = h.Ref
	}
	return out
}

func TestAnalyze(t *testing.T) {
	for _, tc := range []struct {
		name  string
		doc   Doc
		lang  string
		has   []string
		hasNo []string
	}{
		{
			name: "english stems and drops stop words",
			doc:  Doc{Description: "Extracting tables from the PDF files and filling forms"},
			lang: "en", has: []string{"extract", "tabl", "pdf", "file", "fill", "form"}, hasNo: []string{"the", "from", "and", "files"},
		},
		{
			name: "spanish detected, stemmed, accents folded after stemming",
			doc:  Doc{Description: "Redacción de los contratos de arrendamiento y las cláusulas para la revisión de un abogado"},
			lang: "es", has: []string{"redaccion", "contrat", "arrend", "clausul", "revision", "abog"}, hasNo: []string{"de", "los", "las", "para", "la"},
		},
		{
			name: "a hint wins over detection",
			doc:  Doc{Description: "de la que el en y a los del se las por un para", Lang: "en"},
			lang: "en", has: []string{"de", "la", "el", "los"},
		},
		{
			name: "names and files split on punctuation and camelCase",
			doc:  Doc{Name: "pdf-form_filler", DisplayName: "PdfEditor", Files: []string{"scripts/fillForm.py", "reference/XMLParser.md"}},
			lang: "en", has: []string{"pdf", "form", "filler", "editor", "pdfeditor", "script", "fill", "py", "xml", "parser", "refer"},
		},
		{
			name: "mixed: english body with spanish words stays english",
			doc:  Doc{Description: "Create a presentation", Body: "Use this skill to create slides for the team. Título de la presentación."},
			lang: "en", has: []string{"creat", "present", "slide", "titulo"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Analyze(tc.doc)
			if a.Lang() != tc.lang {
				t.Errorf("Lang() = %q, want %q", a.Lang(), tc.lang)
			}
			terms := a.Terms()
			for _, w := range tc.has {
				if !slices.Contains(terms, w) {
					t.Errorf("terms %q lack %q", terms, w)
				}
			}
			for _, w := range tc.hasNo {
				if slices.Contains(terms, w) {
					t.Errorf("terms %q have %q", terms, w)
				}
			}
		})
	}
}

func TestHeadingsAreTheirOwnField(t *testing.T) {
	a := Analyze(Doc{Body: "# Invoices\n\ntext about ledgers\n```\n# not a heading\n```\n## Reconciliation steps\n"})
	fieldOf := func(term string) []Field {
		i, ok := slices.BinarySearch(a.terms, term)
		if !ok {
			return nil
		}
		var fs []Field
		for _, o := range a.occ {
			if o.term == uint32(i) {
				fs = append(fs, o.field)
			}
		}
		return fs
	}
	for term, want := range map[string][]Field{
		"invoic": {FieldHeadings}, "reconcili": {FieldHeadings}, "ledger": {FieldBody}, "head": {FieldBody},
	} {
		if got := fieldOf(term); !slices.Equal(got, want) {
			t.Errorf("%q in %v, want %v", term, got, want)
		}
	}
}

func TestSearchQueryInEitherLanguage(t *testing.T) {
	x := build(DefaultWeights,
		Doc{Name: "contratos", Description: "Redacta y revisa contratos de arrendamiento para abogados y clientes"},
		Doc{Name: "leases", Description: "Draft and review lease contracts for lawyers and their clients"},
		Doc{Name: "slides", Description: "Build slide decks and presentations"},
	)
	for q, want := range map[string]int{
		"revisar un contrato de arrendamiento": 0,
		"review my lease contract":             1,
		"make a presentation":                  2,
	} {
		hs := Search([]Layer{{X: x}}, Query{Text: q, Limit: 3})
		if len(hs) == 0 || hs[0].Doc != want {
			t.Errorf("%q: hits %v, want doc %d first", q, hs, want)
		}
		if len(hs) > 0 && (hs[0].Relevance <= 0 || hs[0].Relevance > 1) {
			t.Errorf("%q: relevance %v", q, hs[0].Relevance)
		}
	}
}

func TestFieldWeights(t *testing.T) {
	docs := []Doc{
		{Name: "alpha", Description: "general helper", Body: "mentions invoices once among many other words here"},
		{Name: "invoices", Description: "general helper", Body: "mentions nothing relevant among many other words here"},
	}
	w := DefaultWeights
	w.Fields[FieldName].Weight, w.Fields[FieldBody].Weight = 5, 0.1
	if hs := Search([]Layer{{X: build(w, docs...)}}, Query{Text: "invoices"}); len(hs) != 2 || hs[0].Doc != 1 {
		t.Errorf("name weighted: %v, want doc 1 first", hs)
	}
	w.Fields[FieldName].Weight, w.Fields[FieldBody].Weight = 0.1, 5
	if hs := Search([]Layer{{X: build(w, docs...)}}, Query{Text: "invoices"}); len(hs) != 2 || hs[0].Doc != 0 {
		t.Errorf("body weighted: %v, want doc 0 first", hs)
	}
}

func TestLengthNormalization(t *testing.T) {
	long := "invoices"
	for i := range 300 {
		long += fmt.Sprintf(" filler%d", i)
	}
	x := build(DefaultWeights, Doc{Name: "a", Body: long}, Doc{Name: "b", Body: "invoices and ledgers"})
	if hs := Search([]Layer{{X: x}}, Query{Text: "invoices"}); len(hs) != 2 || hs[0].Doc != 1 {
		t.Errorf("hits %v: the short body should win", hs)
	}
}

func TestGlobalStatsAndSkip(t *testing.T) {
	// "report" is rare in the caller's layer but everywhere in the
	// organization's: "quarterly" decides.
	own := build(DefaultWeights, Doc{Name: "r1", Description: "report writer"}, Doc{Name: "q1", Description: "quarterly numbers"})
	var org []Doc
	for i := range 20 {
		org = append(org, Doc{Name: fmt.Sprintf("o%d", i), Description: "report tool"})
	}
	orgX := build(DefaultWeights, org...)
	layers := []Layer{{X: own, Rank: 0}, {X: orgX, Rank: 2}}
	hs := Search(layers, Query{Text: "quarterly report", Limit: 3})
	if len(hs) == 0 || hs[0].Ref != (Ref{0, 1}) {
		t.Fatalf("hits %v, want own q1 first (report is common globally)", hs)
	}
	alone := Search(layers[:1], Query{Text: "quarterly report", Limit: 3})
	if alone[0].Score == hs[0].Score {
		t.Errorf("scores ignore the other layer's frequencies")
	}
	layers[0].Skip = func(doc int) bool { return doc == 1 }
	for _, h := range Search(layers, Query{Text: "quarterly report", Limit: 30}) {
		if h.Ref == (Ref{0, 1}) {
			t.Errorf("skipped doc returned: %v", h)
		}
	}
}

func TestLayerPreferenceAtEqualRelevance(t *testing.T) {
	d := Doc{Name: "budget", Description: "plan a household budget"}
	org := build(DefaultWeights, d)
	team := build(DefaultWeights, Doc{Name: "budget-team", Description: "plan a household budget"})
	own := build(DefaultWeights, Doc{Name: "budget-own", Description: "plan a household budget"})
	hs := Search([]Layer{{X: org, Rank: 2}, {X: team, Rank: 1}, {X: own, Rank: 0}}, Query{Text: "household budget"})
	if got, want := refs(hs), []Ref{{2, 0}, {1, 0}, {0, 0}}; !slices.Equal(got, want) {
		t.Errorf("order %v, want own, team, org", got)
	}
	// A clearly better farther hit still wins.
	far := build(DefaultWeights, Doc{Name: "household-budget", Description: "household budget planner for a household budget"})
	hs = Search([]Layer{{X: own, Rank: 0}, {X: far, Rank: 2}}, Query{Text: "household budget"})
	if hs[0].Ref != (Ref{1, 0}) {
		t.Errorf("order %v: the much better organization hit should lead", refs(hs))
	}
}

func TestCollapse(t *testing.T) {
	body := "Fill PDF forms: read the fields with the script, then write values and flatten the document before sending it."
	for i := range 60 {
		body += fmt.Sprintf(" Step %d checks field %d against the schema.", i, i*7)
	}
	org := build(DefaultWeights,
		Doc{Name: "pdf", Description: "PDF forms", Body: body},
		Doc{Name: "pdf-copy", Description: "PDF forms (copy)", Body: body},
		Doc{Name: "pdf", Description: "PDF forms", Body: body + " Also more."},
		Doc{Name: "pdf", Description: "PDF merging", Body: "Merge and split PDF files with another tool entirely; nothing about forms here at all."},
	)
	own := build(DefaultWeights, Doc{Name: "pdf", Description: "PDF forms", Body: body})
	layers := []Layer{{X: org, Rank: 2}, {X: own, Rank: 0}}
	hs := Search(layers, Query{Text: "fill pdf forms", Limit: 2, Collapse: true})
	if len(hs) != 2 {
		t.Fatalf("hits %v, want 2 groups", hs)
	}
	if hs[0].Ref != (Ref{1, 0}) {
		t.Errorf("representative %v, want the caller's own copy", hs[0].Ref)
	}
	alts := slices.Clone(hs[0].Alternates)
	slices.SortFunc(alts, func(a, b Ref) int { return a.Doc - b.Doc })
	if want := []Ref{{0, 0}, {0, 1}, {0, 2}}; !slices.Equal(alts, want) {
		t.Errorf("alternates %v, want %v", alts, want)
	}
	if hs[1].Ref != (Ref{0, 3}) {
		t.Errorf("second hit %v, want the distinct merging skill", hs[1].Ref)
	}
	if !NearDuplicate(org, own, 0, 0) || !NearDuplicate(org, org, 0, 1) || NearDuplicate(org, org, 0, 3) || NearDuplicate(org, own, 9, 0) {
		t.Errorf("NearDuplicate wrong")
	}
	flat := Search(layers, Query{Text: "fill pdf forms", Limit: 5})
	if len(flat) != 5 {
		t.Errorf("without collapse: %d hits, want 5", len(flat))
	}
}

func TestCodecs(t *testing.T) {
	docs := []Doc{
		{Name: "pdf", Description: "Fill PDF forms", Body: "# Steps\nread fields", Files: []string{"a.py"}, Labels: []string{"pdf"}},
		{Name: "contratos", Description: "Redacta contratos de arrendamiento para los abogados", Category: "legal"},
	}
	x := build(DefaultWeights, docs...)
	b, err := x.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	y, err := UnmarshalIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"pdf forms", "contrato"} {
		if a, b := Search([]Layer{{X: x}}, Query{Text: q}), Search([]Layer{{X: y}}, Query{Text: q}); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%q: %v after round trip, want %v", q, b, a)
		}
	}
	for _, d := range docs {
		a := Analyze(d)
		ab, _ := a.MarshalBinary()
		a2, err := UnmarshalAnalyzed(ab)
		if err != nil {
			t.Fatal(err)
		}
		ab2, _ := a2.MarshalBinary()
		if !bytes.Equal(ab, ab2) {
			t.Errorf("Analyzed round trip differs")
		}
		if _, err := UnmarshalIndex(ab); !errors.Is(err, ErrCorrupt) {
			t.Errorf("an Analyzed decoded as an Index: %v", err)
		}
	}
	for i := range b {
		c := slices.Clone(b)
		c[i] ^= 0x40
		if _, err := UnmarshalIndex(c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipped byte %d: err %v", i, err)
		}
	}
	if _, err := UnmarshalIndex(b[:len(b)-1]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: %v", err)
	}
}

func TestReuseAnswersAsFresh(t *testing.T) {
	docs := []Doc{
		{Name: "pdf", Description: "Fill PDF forms", Body: "read fields and write values"},
		{Name: "xlsx", Description: "Spreadsheet formulas and charts"},
		{Name: "contratos", Description: "Redacta contratos de arrendamiento para los abogados"},
		{Name: "slides", Description: "Presentations and slide decks"},
	}
	prev := build(DefaultWeights, docs...)
	// The next state: slides removed, pdf kept, a new skill, xlsx and
	// contratos kept in another order.
	next := []Doc{docs[0], {Name: "docx", Description: "Word documents with tracked changes"}, docs[2], docs[1]}
	fresh := build(DefaultWeights, next...)
	b := NewBuilder(DefaultWeights)
	b.Reuse(prev, 0)
	b.Add(Analyze(next[1]))
	b.Reuse(prev, 2)
	b.Reuse(prev, 1)
	reused := b.Build()
	fb, _ := fresh.MarshalBinary()
	rb, _ := reused.MarshalBinary()
	if !bytes.Equal(fb, rb) {
		t.Errorf("index built with Reuse differs from one built fresh")
	}
}
