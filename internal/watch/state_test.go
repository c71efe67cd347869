package watch

import (
	"reflect"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	pdf := Entry{Path: "/skills/docs/pdf", Name: "pdf", Layer: "shared", Digest: "sha256:1"}
	csv := Entry{Path: "/skills/data/csv", Name: "csv", Layer: "user", Digest: "sha256:2"}
	big := Entry{Path: "/skills/big", Name: "big", Layer: "user", ETag: "e1"}
	with := func(e Entry, f func(*Entry)) Entry { f(&e); return e }
	state := func(es ...Entry) State { return StateOf(nil, "d").with(es...) }
	for _, tc := range []struct {
		name     string
		from, to State
		want     []Change
	}{
		{"nothing", state(pdf, csv), state(pdf, csv), nil},
		{"added", state(pdf), state(pdf, csv), []Change{{Added, csv}}},
		{"removed", state(pdf, csv), state(csv), []Change{{Removed, pdf}}},
		{"changed files", state(pdf), state(with(pdf, func(e *Entry) { e.Digest = "sha256:3" })),
			[]Change{{Changed, with(pdf, func(e *Entry) { e.Digest = "sha256:3" })}}},
		{"renamed", state(pdf), state(with(pdf, func(e *Entry) { e.Name = "pdf2" })),
			[]Change{{Changed, with(pdf, func(e *Entry) { e.Name = "pdf2" })}}},
		{"user's copy overrides the shared", state(pdf), state(with(pdf, func(e *Entry) { e.Layer = "user" })),
			[]Change{{Changed, with(pdf, func(e *Entry) { e.Layer = "user" })}}},
		{"over the limits, SKILL.md changed", state(big), state(with(big, func(e *Entry) { e.ETag = "e2" })),
			[]Change{{Changed, with(big, func(e *Entry) { e.ETag = "e2" })}}},
		{"disabled", state(pdf), state(with(pdf, func(e *Entry) { e.Disabled = true })),
			[]Change{{Disabled, with(pdf, func(e *Entry) { e.Disabled = true })}}},
		{"enabled", state(with(pdf, func(e *Entry) { e.Disabled = true })), state(pdf), []Change{{Enabled, pdf}}},
		{"changed and enabled", state(with(pdf, func(e *Entry) { e.Disabled = true })), state(with(pdf, func(e *Entry) { e.Digest = "sha256:3" })),
			[]Change{{Changed, with(pdf, func(e *Entry) { e.Digest = "sha256:3" })}, {Enabled, with(pdf, func(e *Entry) { e.Digest = "sha256:3" })}}},
		{"added disabled", state(), state(with(csv, func(e *Entry) { e.Disabled = true })),
			[]Change{{Added, with(csv, func(e *Entry) { e.Disabled = true })}, {Disabled, with(csv, func(e *Entry) { e.Disabled = true })}}},
		{"removed disabled", state(with(csv, func(e *Entry) { e.Disabled = true })), state(), []Change{{Removed, with(csv, func(e *Entry) { e.Disabled = true })}}},
		{"everything, in path order", state(pdf, big), state(csv, with(big, func(e *Entry) { e.ETag = "e2" })),
			[]Change{{Changed, with(big, func(e *Entry) { e.ETag = "e2" })}, {Added, csv}, {Removed, pdf}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Diff(tc.from, tc.to); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Diff:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// with is the state s with entries es, sorted as StateOf sorts.
func (s State) with(es ...Entry) State {
	s.Entries = append([]Entry(nil), es...)
	for i := range s.Entries {
		for j := i; j > 0 && s.Entries[j].Path < s.Entries[j-1].Path; j-- {
			s.Entries[j], s.Entries[j-1] = s.Entries[j-1], s.Entries[j]
		}
	}
	return s
}

func TestKeptStateRoundTrip(t *testing.T) {
	st := State{Digest: "sha256:" + strings.Repeat("a", 64), Entries: []Entry{
		{Path: "/skills/a", Name: "a", Layer: "user", Digest: "sha256:1", Disabled: true},
		{Path: "/skills/b", Name: "b", Layer: "shared", ETag: "x"},
	}}
	b, err := st.encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeState(b, st.Digest)
	if err != nil || !reflect.DeepEqual(got, st) {
		t.Fatalf("decodeState = %+v, %v; want %+v", got, err, st)
	}
	// A value under another digest's key is not taken for it.
	if _, err := decodeState(b, "sha256:"+strings.Repeat("b", 64)); err == nil {
		t.Error("a state decoded for a digest it is not of")
	}
	unsorted := State{Digest: st.Digest, Entries: []Entry{st.Entries[1], st.Entries[0]}}
	b, _ = unsorted.encode()
	if _, err := decodeState(b, st.Digest); err == nil {
		t.Error("an unsorted state decoded: Diff would be wrong")
	}
	if _, err := decodeState([]byte("{"), st.Digest); err == nil {
		t.Error("garbage decoded")
	}
}

func TestCheckDigest(t *testing.T) {
	good := "sha256:" + strings.Repeat("0f", 32)
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"", true},
		{good, true},
		{"sha256:" + strings.Repeat("0F", 32), false}, // the server writes lowercase
		{good + "0", false},
		{good[:len(good)-1], false},
		{"md5:" + strings.Repeat("0", 67), false},
		{strings.Repeat("x", 1<<20), false},
	} {
		if err := CheckDigest(tc.in); (err == nil) != tc.ok {
			t.Errorf("CheckDigest(%.20q…) = %v, want ok %t", tc.in, err, tc.ok)
		}
	}
}
