package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skillsvc/skillsvc/internal/loadbench"
)

// listedSkill is an entry of skills/list or skills/get.
type listedSkill struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   []resource     `json:"resources"`
}

// listAll pages through skills/list from the first page to the last and
// checks that the listing is the library: every skill once, each with
// every file's digest and size.
func (h *host) listAll(ctx context.Context, ph *phase, want map[string]map[string]resource) error {
	seen := make(map[string]bool, len(want))
	cursor := ""
	for pages := 1; ; pages++ {
		var res struct {
			Skills     []listedSkill `json:"skills"`
			NextCursor string        `json:"nextCursor"`
		}
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		if err := h.call(ctx, ph, "skills/list", params, &res); err != nil {
			return err // without the page, there is no cursor to go on with
		}
		if pages == 1 && res.NextCursor != "" {
			ph.pageSize = len(res.Skills)
		}
		for _, sk := range res.Skills {
			if seen[sk.URI] {
				ph.fail("skills/list: %s listed twice", sk.URI)
				continue
			}
			seen[sk.URI] = true
			checkSkill(ph, "skills/list", sk, want)
		}
		if res.NextCursor == "" {
			ph.requests = fmt.Sprintf("%d skills/list pages", pages)
			break
		}
		if pages > 10*len(want)+10 {
			ph.fail("skills/list: still a next cursor after %d pages", pages)
			return errCounted{fmt.Errorf("endless listing")}
		}
		cursor = res.NextCursor
	}
	if missing := len(want) - len(seen); missing > 0 {
		ph.fail("skills/list: %d of %d skills missing", missing, len(want))
	}
	return nil
}

// checkSkill counts an entry that is not the seeded skill as a failure.
func checkSkill(ph *phase, method string, sk listedSkill, want map[string]map[string]resource) {
	files, ok := want[sk.URI]
	if !ok {
		ph.fail("%s: unexpected skill %s", method, sk.URI)
		return
	}
	name := strings.TrimSuffix(sk.URI, "/SKILL.md")
	name = name[strings.LastIndexByte(name, '/')+1:]
	if sk.Frontmatter["name"] != name {
		ph.fail("%s: %s has frontmatter name %v, want %s", method, sk.URI, sk.Frontmatter["name"], name)
		return
	}
	got := make(map[string]resource, len(sk.Resources))
	for _, r := range sk.Resources {
		got[r.URI] = r
	}
	if !maps.Equal(got, files) {
		ph.fail("%s: %s resources %v, want %v", method, sk.URI, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(files)))
	}
}

// getSkills asks skills/get for n skills, spread over the library.
func (h *host) getSkills(ctx context.Context, ph *phase, lib []skill, n int, want map[string]map[string]resource) error {
	for i := range n {
		s := lib[spread(i, n, len(lib))]
		var res struct {
			Skill listedSkill `json:"skill"`
		}
		err := h.call(ctx, ph, "skills/get", map[string]any{"uri": s.uri("SKILL.md")}, &res)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			continue // counted; the next skill may work
		}
		if res.Skill.URI != s.uri("SKILL.md") {
			ph.fail("skills/get %s: answered %q", s.uri("SKILL.md"), res.Skill.URI)
			continue
		}
		checkSkill(ph, "skills/get", res.Skill, want)
	}
	ph.requests = loadbench.Count(float64(n)) + " skills/get"
	return nil
}

// readFiles asks resources/read for n files, spread over every file of
// the library, and checks each one's bytes.
func (h *host) readFiles(ctx context.Context, ph *phase, lib []skill, n int, want map[string]map[string]resource) error {
	var uris []string
	var digests []string
	for _, s := range lib {
		for _, f := range s.files {
			u := s.uri(f.rel)
			uris = append(uris, u)
			digests = append(digests, want[s.uri("SKILL.md")][u].Digest)
		}
	}
	for i := range n {
		j := spread(i, n, len(uris))
		var res struct {
			Contents []struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
				Blob []byte `json:"blob"`
			} `json:"contents"`
		}
		if err := h.call(ctx, ph, "resources/read", map[string]any{"uri": uris[j]}, &res); err != nil {
			if ctx.Err() != nil {
				return err
			}
			continue
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != uris[j] {
			ph.fail("resources/read %s: %d contents", uris[j], len(res.Contents))
			continue
		}
		data := []byte(res.Contents[0].Text)
		if res.Contents[0].Blob != nil {
			data = res.Contents[0].Blob
		}
		if sum := sha256.Sum256(data); "sha256:"+hex.EncodeToString(sum[:]) != digests[j] {
			ph.fail("resources/read %s: not the seeded bytes", uris[j])
		}
	}
	ph.requests = loadbench.Count(float64(n)) + " resources/read"
	return nil
}

// spread is the i-th of n picks spread evenly over size items, cycling
// when n is larger than size.
func spread(i, n, size int) int {
	if n <= size {
		return int(int64(i) * int64(size) / int64(n))
	}
	return i % size
}
