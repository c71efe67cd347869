package skillsearch

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/skillsvc/skillsvc/internal/search"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// SearchDoc is what the search index makes of a skill folder at dir (its
// SKILL.md raw, the paths of its other files relative to the folder): a
// skill not yet published is analyzed as the library's own are.
func SearchDoc(raw []byte, dir string, files []string) search.Doc {
	folder := path.Base(dir)
	fm, body, _ := skillmd.ParseSkillMD(raw, folder)
	cat, _, ok := strings.Cut(dir, "/")
	if !ok {
		cat = ""
	}
	d := docOf(cmp.Or(fm.Name, folder), cat, fm, body)
	for _, f := range files {
		if f != "SKILL.md" {
			d.Files = append(d.Files, f)
		}
	}
	return d
}

// docOf is the search document of a skill named name in category, of
// frontmatter fm and body.
func docOf(name, category string, fm skillmd.Frontmatter, body string) search.Doc {
	d := search.Doc{Name: name, DisplayName: fm.DisplayName, Description: fm.Description, Category: category, Body: body}
	add := func(t string) { d.Labels = append(d.Labels, t) }
	// Lists in the frontmatter (tags, keywords, triggers, …) and in its
	// metadata: words an author chose the skill to be found by.
	for k, v := range fm.Extra {
		if _, isList := v.([]any); isList || TagFields[k] {
			labels(v, add)
		}
	}
	if meta, ok := fm.Raw["metadata"].(map[string]any); ok {
		for _, v := range meta {
			if _, isList := v.([]any); isList {
				labels(v, add)
			}
		}
	}
	for k, v := range fm.Metadata {
		if TagFields[k] {
			add(v)
		}
	}
	slices.Sort(d.Labels) // maps iterate in any order; an analysis is content-addressed
	return d
}

// TagFields are frontmatter fields whose words label a skill: worth more
// than its description, as an author chose them to be found by.
var TagFields = map[string]bool{"tags": true, "keywords": true}

// labels calls add with the text of a frontmatter value that is a string
// or a list of scalars; maps and nested lists are not indexed.
func labels(v any, add func(string)) {
	switch x := v.(type) {
	case string:
		add(x)
	case []any:
		for _, e := range x {
			switch e.(type) {
			case string, float64, bool:
				add(fmt.Sprint(e))
			}
		}
	}
}
