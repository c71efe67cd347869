package skills

import (
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// UseUsage sets what a prompt block without a query is ordered by
// (--skills.order-by-use) and a search's ties are broken by
// (--skills.search-use-prior): set before serving; nil keeps path order.
func (c *Catalog) UseUsage(u skillview.Uses) { c.uses = u }

// usesKey adds to k, when on, the versions of the uses of id's layers.
func (c *Catalog) usesKey(k *skillview.Key, id mounts.Caller, on bool) *skillview.Key {
	if !on || c.uses == nil {
		return k
	}
	for _, l := range skillview.UseLayers(id) {
		_, v := c.uses.Recent(id, l)
		k.Str(v)
	}
	return k
}

// tieBreak orders each run of hits of equal score and relevance from one
// layer rank most recently used first: a prior that never reorders
// distinct scores.
func (c *Catalog) tieBreak(id mounts.Caller, hits []rankedSkill) {
	for i := 0; i < len(hits); {
		j := i + 1
		for j < len(hits) && hits[j].score == hits[i].score && hits[j].relevance == hits[i].relevance &&
			layerRank(hits[j].r.Layer) == layerRank(hits[i].r.Layer) {
			j++
		}
		skillview.ByUse(c.uses, id, hits[i:j], func(h rankedSkill) *skillview.Ref { return h.r })
		i = j
	}
}
