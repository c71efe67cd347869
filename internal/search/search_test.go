package search

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/skillsvc/skillsvc/internal/alloctest"
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
	weak := build(DefaultWeights, Doc{Name: "planner", Description: "plan a budget"})
	hs = Search([]Layer{{X: weak, Rank: 0}, {X: far, Rank: 2}}, Query{Text: "household budget"})
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
	// One value, one encoding: an overlong varint is refused, so accepted
	// bytes re-encode to themselves (the fuzz targets' property).
	if _, k := canonicalUvarint([]byte{0x80, 0x00}); k > 0 {
		t.Errorf("overlong varint accepted")
	}
	if v, k := canonicalUvarint([]byte{0x80, 0x01}); v != 128 || k != 2 {
		t.Errorf("canonicalUvarint(128) = %d, %d", v, k)
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
	w := DefaultWeights
	w.K1++
	if NewBuilder(w).Reuse(prev, 0) {
		t.Errorf("reused a document weighted otherwise")
	}
	if b := NewBuilder(DefaultWeights); b.Reuse(prev, 4) || b.Reuse(prev, -1) || b.Reuse(nil, 0) || b.Build().Len() != 0 {
		t.Errorf("reused a document out of range")
	}
}

func TestAnalyzerFoldsForms(t *testing.T) {
	for _, tc := range []struct {
		lang string
		same []string // words that must meet on one term
	}{
		{"en", []string{"spreadsheets", "spreadsheet"}},
		{"en", []string{"presentations", "presentation", "Presentation"}},
		{"en", []string{"running", "runs", "run"}},
		{"en", []string{"naïve", "naive"}},
		{"es", []string{"contratos", "contrato", "Contrato"}},
		{"es", []string{"facturación", "facturacion", "FACTURACIÓN"}},
		{"es", []string{"revisión", "revision", "revisiones"}},
		{"es", []string{"canción", "canciones", "cancion"}},
		{"es", []string{"tecnología", "tecnologia", "tecnologías"}},
	} {
		t.Run(tc.lang+"/"+tc.same[0], func(t *testing.T) {
			l := langEN
			if tc.lang == "es" {
				l = langES
			}
			want := term(l, tc.same[0])
			for _, w := range tc.same[1:] {
				if got := term(l, w); got != want || got == "" {
					t.Errorf("term(%q) = %q, term(%q) = %q", w, got, tc.same[0], want)
				}
			}
		})
	}
	for _, tc := range []struct {
		lang lang
		word string
	}{{langEN, "the"}, {langEN, "with"}, {langES, "para"}, {langES, "los"}, {langES, "también"}, {langEN, "x"}} {
		if got := term(tc.lang, tc.word); got != "" {
			t.Errorf("stop word %q indexed as %q", tc.word, got)
		}
	}
}

func TestQueryMeetsSpanishDocWithoutAccents(t *testing.T) {
	x := build(DefaultWeights,
		Doc{Name: "facturas", Description: "Genera la facturación mensual de los clientes y revisa las facturas emitidas"},
		Doc{Name: "invoices", Description: "Generate monthly invoices for customers"},
	)
	for _, q := range []string{"facturacion mensual", "necesito revisar una factura"} {
		hs := Search([]Layer{{X: x}}, Query{Text: q})
		if len(hs) == 0 || hs[0].Doc != 0 {
			t.Errorf("%q: hits %v, want the Spanish skill first", q, hs)
		}
	}
}

func TestLayerTieWithinEpsilon(t *testing.T) {
	// The same words, the organization's a little shorter, so a little
	// better: within LayerTie the caller's own still ranks first.
	own := build(DefaultWeights, Doc{Name: "notes", Description: "meeting notes summary for the weekly team meeting today"})
	org := build(DefaultWeights, Doc{Name: "notes", Description: "meeting notes summary for the weekly team meeting"})
	hs := Search([]Layer{{X: org, Rank: 2}, {X: own, Rank: 0}}, Query{Text: "meeting notes summary"})
	if len(hs) != 2 {
		t.Fatalf("hits %v", hs)
	}
	if hs[0].Layer != 1 {
		t.Fatalf("hits %+v: the own layer should lead at near-equal scores", hs)
	}
	if !(hs[0].Score < hs[1].Score && hs[1].Score < hs[0].Score*(1+LayerTie)) {
		t.Errorf("scores %.4f (own) and %.4f (org): the test needs the org's a little better", hs[0].Score, hs[1].Score)
	}
	if hs[1].Relevance > hs[0].Relevance {
		t.Errorf("relevance %v then %v: hits must come in non-increasing relevance", hs[0].Relevance, hs[1].Relevance)
	}
}

func TestCollapseLooksDeepEnough(t *testing.T) {
	body := "Convert audio recordings to text transcripts with timestamps and speaker labels."
	for i := range 40 {
		body += fmt.Sprintf(" Option %d sets the model parameter %d.", i, i)
	}
	var docs []Doc
	for i := range 30 {
		docs = append(docs, Doc{Name: fmt.Sprintf("transcribe-%d", i), Description: "Transcribe audio", Body: body})
	}
	docs = append(docs,
		Doc{Name: "subtitles", Description: "Make subtitles from audio transcripts"},
		Doc{Name: "podcast", Description: "Edit podcast audio"},
	)
	x := build(DefaultWeights, docs...)
	hs := Search([]Layer{{X: x}}, Query{Text: "transcribe audio", Limit: 3, Collapse: true})
	if len(hs) != 3 {
		t.Fatalf("%d hits, want 3 distinct", len(hs))
	}
	if len(hs[0].Alternates) != 29 {
		t.Errorf("first hit has %d alternates, want 29", len(hs[0].Alternates))
	}
	if hs[0].Doc != 0 {
		t.Errorf("representative %v, want the best-scored copy (doc 0: equal scores, first)", hs[0].Ref)
	}
	if got := []int{hs[1].Doc, hs[2].Doc}; !slices.Contains(got, 30) || !slices.Contains(got, 31) {
		t.Errorf("hits %v, want subtitles and podcast after the group", refs(hs))
	}
}

func TestSearchEdges(t *testing.T) {
	x := build(DefaultWeights, Doc{Name: "pdf", Description: "Fill PDF forms"})
	empty := NewBuilder(DefaultWeights).Build()
	for name, tc := range map[string]struct {
		layers []Layer
		q      Query
		want   int
	}{
		"no layers":            {nil, Query{Text: "pdf"}, 0},
		"nil and empty layers": {[]Layer{{X: nil}, {X: empty}, {X: x, Rank: 2}}, Query{Text: "pdf"}, 1},
		"only stop words":      {[]Layer{{X: x}}, Query{Text: "the and of"}, 0},
		"empty query":          {[]Layer{{X: x}}, Query{Text: ""}, 0},
		"no match":             {[]Layer{{X: x}}, Query{Text: "zebra"}, 0},
		"huge limit":           {[]Layer{{X: x}}, Query{Text: "pdf", Limit: 1 << 30, Collapse: true}, 1},
	} {
		hs := Search(tc.layers, tc.q)
		if len(hs) != tc.want {
			t.Errorf("%s: %d hits, want %d", name, len(hs), tc.want)
		}
		if tc.want == 1 && hs[0].Ref != (Ref{Layer: len(tc.layers) - 1}) {
			t.Errorf("%s: hit %v", name, hs[0].Ref)
		}
	}
}

// TestAnalyzeConcurrently: the catalog analyzes skills in parallel; the
// accent folding must not share state (run with -race).
func TestAnalyzeConcurrently(t *testing.T) {
	words := []string{"café", "naïve", "résumé", "façade", "über", "señor", "déjà", "crème"}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 400 {
				w := words[(i+g)%len(words)]
				want := term(langEN, w) // cached
				if got := analyzeWord(langEN, w); got != want {
					t.Errorf("analyzeWord(%q) = %q, want %q", w, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestBytesEstimate: the catalog charges Bytes against the replica's
// memory budget, so it must be what an index holds. A decoded index
// allocates exactly its arrays.
func TestBytesEstimate(t *testing.T) {
	x := build(DefaultWeights, syntheticDocs(200)...)
	data, _ := x.MarshalBinary()
	var y *Index
	got := alloctest.Bytes(func() { y, _ = UnmarshalIndex(data) })
	if y == nil {
		t.Fatal("no index")
	}
	if est := uint64(y.Bytes()); est < got*85/100 || est > got*115/100 {
		t.Errorf("Bytes() = %d, decoding allocated %d", est, got)
	}
}

// TestCopyBoost: a skill with copies across the library outranks a single
// skill a little more relevant, when collapsing; its Relevance is not
// raised.
func TestCopyBoost(t *testing.T) {
	body := "Turn meeting notes into minutes: decisions, owners and deadlines."
	for i := range 40 {
		body += fmt.Sprintf(" Rule %d keeps item %d.", i, i)
	}
	docs := []Doc{{Name: "scribe", Description: "write the minutes of a meeting", Body: body + " Meeting notes."}}
	for i := range 3 {
		docs = append(docs, Doc{Name: fmt.Sprintf("notes-%d", i), Description: "meeting minutes helper for teams, projects and weekly calls", Body: body})
	}
	for _, tc := range []struct {
		boost float64
		first int
	}{{0, 0}, {DefaultWeights.CopyBoost, 1}} {
		w := DefaultWeights
		w.CopyBoost = tc.boost
		x := build(w, docs...)
		hs := Search([]Layer{{X: x}}, Query{Text: "meeting minutes", Limit: 2, Collapse: true})
		if len(hs) != 2 || hs[0].Doc != tc.first {
			t.Fatalf("boost %v: hits %+v, want doc %d first", tc.boost, hs, tc.first)
		}
		if tc.boost > 0 && !(hs[0].Score < hs[1].Score && hs[0].Relevance == hs[1].Relevance) {
			t.Errorf("boost %v: scores %v then %v, relevance %v then %v: the copied skill should score a little less, lead, and the next hit report no more relevance",
				tc.boost, hs[0].Score, hs[1].Score, hs[0].Relevance, hs[1].Relevance)
		}
		if len(hs[0].Alternates)+len(hs[1].Alternates) != 2 {
			t.Errorf("boost %v: alternates %v %v", tc.boost, hs[0].Alternates, hs[1].Alternates)
		}
	}
}
