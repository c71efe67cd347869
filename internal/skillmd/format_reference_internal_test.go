package skillmd

import (
	"cmp"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestFormatBlockMatchesReference holds FormatBlock, which sizes and
// writes entries part by part into one builder, to the bytes and counts of
// the straightforward rendering it replaced (refFormatBlock), over the
// example library and random entries: odd characters for every format's
// escaping, invalid UTF-8, YAML words, descriptions over the limit,
// categories, budgets that cut and drop, MaxSkills, a search tool.
func TestFormatBlockMatchesReference(t *testing.T) {
	check := func(t *testing.T, what string, list []Entry, opts FormatOptions) {
		t.Helper()
		want, wantErr := refFormatBlock(list, opts)
		got, err := FormatBlock(list, opts)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || got != want {
			t.Fatalf("%s, %+v:\ngot  %+v (%v)\nwant %+v (%v)", what, opts, got, err, want, wantErr)
		}
		if err != nil {
			return
		}
		// The builder is sized once, by the length counted in bytes.
		f := formats[cmp.Or(opts.Format, FormatXML)]
		b := newBlock(f, list, opts)
		defer b.free()
		noted := got.Omitted
		if !strings.Contains(got.Text, " more skills not shown") {
			noted = 0
		}
		if n := b.bytes(got.Included, got.DescriptionN, noted); n != len(got.Text) {
			t.Fatalf("%s, %+v: counted %d bytes, wrote %d", what, opts, n, len(got.Text))
		}
	}
	t.Run("examples", func(t *testing.T) {
		root := filepath.Join("..", "..", "examples", "skills")
		var list []Entry
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Name() != SkillFile {
				return err
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			rel = filepath.ToSlash(rel)
			fm, _, _ := ParseSkillMD(raw, path.Base(rel))
			cat := path.Dir(rel)
			if cat == "." {
				cat = ""
			}
			list = append(list, Entry{Name: fm.Name, Description: fm.Description, Category: cat, Location: "/skills/" + rel + "/SKILL.md"})
			return nil
		})
		if err != nil || len(list) == 0 {
			t.Fatalf("example library: %d skills, %v", len(list), err)
		}
		for _, format := range formatNames {
			for _, budget := range []int{0, 60, 200, 400, 800, 100000} {
				for _, group := range []bool{false, true} {
					check(t, "examples", list, FormatOptions{Format: format, CharBudget: budget, GroupByCategory: group, SearchTool: "search_skills"})
				}
			}
		}
	})
	t.Run("random", func(t *testing.T) {
		odd := []string{
			"plain words ", "quotes \" and ' ", "<tags> & ", "]]> ", "]", "]]", ">", "ünïcödé ✓ ", "tab\tand  spaces ",
			"yes", "No", "ON", "null", "y", ": ", "#", "/path ", "\x01ctl ", "\xff\xfe", "\u00a0nbsp\u00a0", "\u2028",
			"\u0085", "emoji 😀 ", "İK ", "\ufffd", "…", "\n\n", "  ", "-", "字",
		}
		word := func(rng *rand.Rand, max int) string {
			var d strings.Builder
			for range rng.IntN(max + 1) {
				d.WriteString(odd[rng.IntN(len(odd))])
			}
			return d.String()
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for round := range 400 {
			list := make([]Entry, rng.IntN(40))
			for i := range list {
				desc := word(rng, 12)
				switch rng.IntN(6) {
				case 0:
					desc = strings.Repeat(word(rng, 6)+"x", 1+rng.IntN(200)) // over the limit
				case 1:
					desc = odd[rng.IntN(len(odd))]
				}
				cat := ""
				if rng.IntN(3) > 0 {
					cat = fmt.Sprintf("cat-%d%s", rng.IntN(4), word(rng, 1))
				}
				name := fmt.Sprintf("skill-%d", i)
				if rng.IntN(4) == 0 {
					name = word(rng, 2)
				}
				list[i] = Entry{Name: name, Description: desc, Category: cat, Location: "/skills/" + cat + "/" + name + "/SKILL.md"}
			}
			for _, format := range formatNames {
				opts := FormatOptions{Format: format, GroupByCategory: rng.IntN(2) == 0}
				switch rng.IntN(4) {
				case 0:
					opts.CharBudget = 40 + rng.IntN(400)
				case 1:
					opts.CharBudget = 400 + rng.IntN(4000)
				case 2:
					opts.CharBudget = rng.IntN(40000)
				}
				if rng.IntN(4) == 0 {
					opts.MaxSkills = rng.IntN(10)
				}
				if rng.IntN(2) == 0 {
					opts.SearchTool = "mcp__skills__search"
				}
				check(t, fmt.Sprintf("round %d", round), list, opts)
			}
		}
	})
}
