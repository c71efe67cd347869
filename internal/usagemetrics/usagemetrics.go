// Package usagemetrics exports skill usage to Prometheus with bounded
// cardinality, for the chart's dashboard: uses by kind, layer kind and
// surface (counted as the recorder takes them), and the organization's
// top N skills (read back from the usage counts).
package usagemetrics

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// The label values: every one is known, so each metric has a fixed set of
// series whatever the calls name.
var (
	kinds    = []usage.Kind{usage.Activation, usage.FileRead}
	layers   = []string{"user", "team", "organization"}
	surfaces = []string{"grpc", "json", "mcp", "vfs", "other"}
)

// Bounds of the top skills gauge.
const (
	// TopN is how many skills the top skills gauge ranks.
	TopN = 10
	// TopDays is the range it counts activations over: today (UTC) only,
	// which the shared cache holds, so a scrape never reads the bucket's
	// roll-ups (a scrape must cost no storage request).
	TopDays = 1
	// readTimeout bounds a scrape's read of the counts.
	readTimeout = 2 * time.Second
)

// counting is a Recorder that counts each event in the metrics before
// handing it to the next recorder.
type counting struct {
	next     usage.Recorder
	uses     *prometheus.CounterVec
	searches *prometheus.CounterVec
	// counter holds every series of uses, resolved once: an event finds
	// its counter by a map lookup, not by hashing its label values.
	counter map[useLabels]prometheus.Counter
}

type useLabels struct {
	kind           usage.Kind
	layer, surface string
}

// Counting returns rec counting every event it takes in reg's
// skillsvc_usage_skill_uses_total (activations and file reads by kind,
// layer kind and surface) and skillsvc_usage_searches_total (by surface
// and whether the search found anything). With a nil reg it is rec.
func Counting(rec usage.Recorder, reg prometheus.Registerer) usage.Recorder {
	if reg == nil {
		return rec
	}
	c := &counting{next: rec,
		uses: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillsvc_usage_skill_uses_total",
			Help: "Skill uses counted, by kind (activation, file_read), layer (user, team, organization) and surface (grpc, json, mcp, vfs)."},
			[]string{"kind", "layer", "surface"}),
		searches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillsvc_usage_searches_total",
			Help: "Skill searches counted, by surface and result (found: any skill, empty: none)."},
			[]string{"surface", "result"}),
	}
	c.counter = make(map[useLabels]prometheus.Counter, len(surfaces)*len(kinds)*len(layers))
	for _, s := range surfaces {
		for _, k := range kinds {
			for _, l := range layers {
				c.counter[useLabels{k, l, s}] = c.uses.WithLabelValues(string(k), l, s)
			}
		}
		c.searches.WithLabelValues(s, "found")
		c.searches.WithLabelValues(s, "empty")
	}
	reg.MustRegister(c.uses, c.searches)
	return c
}

// Record implements usage.Recorder.
func (c *counting) Record(ctx context.Context, e usage.Event) {
	switch e.Kind {
	case usage.Activation, usage.FileRead:
		if l := layerKind(e.Layer); l != "" {
			c.counter[useLabels{e.Kind, l, surface(e.Surface)}].Inc()
		}
	case usage.Search:
		result := "found"
		if len(e.Results) == 0 {
			result = "empty"
		}
		c.searches.WithLabelValues(surface(e.Surface), result).Inc()
	}
	c.next.Record(ctx, e)
}

// layerKind is the kind of skillview's layer: "" for none.
func layerKind(layer string) string {
	switch {
	case layer == skillview.LayerUser:
		return "user"
	case layer == skillview.LayerShared:
		return "organization"
	case strings.HasPrefix(layer, skillview.LayerTeam):
		return "team"
	}
	return ""
}

func surface(s string) string {
	switch s {
	case "grpc", "json", "mcp", "vfs":
		return s
	}
	return "other"
}

// top is the collector of the organization's top skills.
type top struct {
	reader *usage.Reader
	desc   *prometheus.Desc
}

// RegisterTop registers in reg skillsvc_usage_top_skill_activations: the
// TopN skills of the organization's (shared) library most activated over
// the last TopDays days, by rank ("1" to TopN) and skill name; a rank no
// skill takes is there with skill "" and 0, so the series are at most
// TopN at a time. The counts are the reader's (usage.Reader.Recent), read
// again at most once a flush interval; only the organization's library,
// whose skill names every user sees, is ranked. A nil reg or reader
// registers nothing.
func RegisterTop(reg prometheus.Registerer, reader *usage.Reader) {
	if reg == nil || reader == nil {
		return
	}
	reg.MustRegister(&top{reader: reader, desc: prometheus.NewDesc("skillsvc_usage_top_skill_activations",
		"Activations today (UTC) of the organization library's 10 most activated skills, by rank and skill.",
		[]string{"rank", "skill"}, nil)})
}

// Describe implements prometheus.Collector.
func (t *top) Describe(ch chan<- *prometheus.Desc) { ch <- t.desc }

// Collect implements prometheus.Collector. A failed read (Redis
// unavailable) ranks nothing.
func (t *top) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	counts, _ := t.reader.Recent(ctx, usage.Organization(), TopDays)
	for i, r := range Rank(counts, TopN) {
		ch <- prometheus.MustNewConstMetric(t.desc, prometheus.GaugeValue, float64(r.Activations), strconv.Itoa(i+1), r.Skill)
	}
}

// Ranked is one skill's place in Rank.
type Ranked struct {
	Skill       string
	Activations int64
}

// Rank returns n places: the skills of counts most activated first (ties
// by name), then places no skill takes, with Skill "".
func Rank(counts map[string]int64, n int) []Ranked {
	all := make([]Ranked, 0, len(counts))
	for s, c := range counts {
		if c > 0 {
			all = append(all, Ranked{s, c})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Activations != all[j].Activations {
			return all[i].Activations > all[j].Activations
		}
		return all[i].Skill < all[j].Skill
	})
	out := make([]Ranked, n)
	copy(out, all)
	return out
}
