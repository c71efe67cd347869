package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// hostile is what an author can put in a message or description to act on
// an admin's terminal: a window title (OSC 0), a line erase (CSI 2K), a
// clipboard write (OSC 52), a C1 CSI and a right-to-left override.
const hostile = "a\x1b]0;pwned\x07b\x1b[2Kc\x1b]52;c;cHduZWQ=\x07d\u009b31me\u202eevil"

// hostileEscaped is how skillctl prints it.
const hostileEscaped = `a\x1b]0;pwned\x07b\x1b[2Kc\x1b]52;c;cHduZWQ=\x07d\u009b31me\u202eevil`

func TestInert(t *testing.T) {
	for _, c := range []struct{ name, in, line, text string }{
		{"hostile", hostile, hostileEscaped, hostileEscaped},
		{"window title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"line erase", "\x1b[2K", `\x1b[2K`, `\x1b[2K`},
		{"clipboard", "\x1b]52;c;cHduZWQ=\x07", `\x1b]52;c;cHduZWQ=\x07`, `\x1b]52;c;cHduZWQ=\x07`},
		{"C1 CSI and OSC", "\u009b2K\u009d0;x\u009c", `\u009b2K\u009d0;x\u009c`, `\u009b2K\u009d0;x\u009c`},
		{"bidi", "\u202aa\u202bb\u202cc\u202dd\u202ee\u2066f\u2067g\u2068h\u2069\u200e\u200f\u061c",
			`\u202aa\u202bb\u202cc\u202dd\u202ee\u2066f\u2067g\u2068h\u2069\u200e\u200f\u061c`,
			`\u202aa\u202bb\u202cc\u202dd\u202ee\u2066f\u2067g\u2068h\u2069\u200e\u200f\u061c`},
		{"newline and tab", "a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"carriage return", "ok\rforged", `ok\rforged`, `ok\rforged`},
		{"DEL and NUL", "\x7f\x00", `\x7f\x00`, `\x7f\x00`},
		{"separators", "a\u2028b\u2029c\u0085d", `a\u2028b\u2029c\u0085d`, `a\u2028b\u2029c\u0085d`},
		{"invalid UTF-8", "\xff\x9b[2K\xe2\x80", `\xff\x9b[2K\xe2\x80`, `\xff\x9b[2K\xe2\x80`},
		{"printable kept", "héllo 日本 🙂 \\x1b \u200d\u00a0", "héllo 日本 🙂 \\x1b \u200d\u00a0", "héllo 日本 🙂 \\x1b \u200d\u00a0"},
		{"plain", "Extract text and tables from PDF files.", "Extract text and tables from PDF files.", "Extract text and tables from PDF files."},
		{"empty", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := inert(c.in); got != c.line {
				t.Errorf("inert(%q) = %q, want %q", c.in, got, c.line)
			}
			if got := inertText(c.in); got != c.text {
				t.Errorf("inertText(%q) = %q, want %q", c.in, got, c.text)
			}
		})
	}
}

// checkInert asserts the escaper's property on one output: valid UTF-8,
// no C0 control but newline and tab where multiline, no DEL, no C1
// control, no bidirectional formatting character, no line or paragraph
// separator; escaping it again changes nothing; and an input with nothing
// to escape comes out as it went in.
func checkInert(t *testing.T, in, out string, multiline bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("escape(%q, %v) = %q: not UTF-8", in, multiline, out)
	}
	for i := 0; i < len(out); i++ {
		b := out[i]
		if b < 0x20 && !(multiline && (b == '\n' || b == '\t')) || b == 0x7f {
			t.Fatalf("escape(%q, %v) = %q: byte %#x at %d", in, multiline, out, b, i)
		}
	}
	for _, r := range out {
		if r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
			t.Fatalf("escape(%q, %v) = %q: rune %U", in, multiline, out, r)
		}
	}
	if again := escapeText(out, multiline); again != out {
		t.Fatalf("escaping %q again gave %q", out, again)
	}
	if utf8.ValidString(in) && !strings.ContainsFunc(in, func(r rune) bool { return escapable(r, multiline) }) && out != in {
		t.Fatalf("escape(%q, %v) = %q: nothing to escape, yet changed", in, multiline, out)
	}
}

// pieces are what random inputs are made of: controls of every kind, the
// runes around them, printable text, and bytes that are not UTF-8 or
// begin a sequence they do not finish.
var pieces = []string{
	"\x00", "\x07", "\x08", "\t", "\n", "\r", "\x1b", "\x1b[", "\x1b]", "\x1f", " ", "~", "\x7f", "\\", "\\x1b",
	"\u0080", "\u0085", "\u009b", "\u009d", "\u009f", "\u00a0", "é", "\u061c", "\u200b", "\u200d", "\u200e",
	"\u2028", "\u2029", "\u202a", "\u202e", "\u202f", "\u2066", "\u2069", "\u206a", "日", "🙂", "\ufeff",
	"\xc2", "\xe2\x80", "\xf0\x9f", "\x80", "\x9b", "\xff", "\xc0\x80", "\xed\xa0\x80", "pdf", "0;pwned",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(12); n > 0; n-- {
		if r.IntN(4) == 0 {
			b.WriteByte(byte(r.IntN(256)))
			continue
		}
		if r.IntN(8) == 0 {
			b.WriteRune(rune(r.IntN(0x3000))) // anything in the first planes, surrogates included
			continue
		}
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestInertProperty holds inert, inertText and inertWriter to checkInert
// on 20,000 random strings; the writer, given a string in random pieces
// (splitting characters), prints what inertText prints.
func TestInertProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 6))
	for range 20000 {
		in := randomText(r)
		checkInert(t, in, inert(in), false)
		text := inertText(in)
		checkInert(t, in, text, true)

		var out bytes.Buffer
		w := &inertWriter{w: &out}
		for rest := in; rest != ""; {
			n := min(len(rest), 1+r.IntN(5))
			if _, err := w.Write([]byte(rest[:n])); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != text {
			t.Fatalf("inertWriter wrote %q in pieces, %q whole", out.String(), text)
		}

		// JSON: the same value, with nothing a terminal acts on.
		enc, err := json.Marshal(map[string]string{in: in})
		if err != nil {
			t.Fatal(err)
		}
		js := inertJSON(string(enc))
		checkInert(t, string(enc), js, false)
		var before, after map[string]string
		if err := json.Unmarshal(enc, &before); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(js), &after); err != nil || !maps.Equal(before, after) {
			t.Fatalf("inertJSON(%s) = %s: %v, a different value", enc, js, err)
		}
	}
}

func FuzzInert(f *testing.F) {
	for _, s := range append(pieces, hostile, "a\nb\tc", "\xe2\x80\xae") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkInert(t, in, inert(in), false)
		checkInert(t, in, inertText(in), true)
	})
}
