package main

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/testserver"
)

// dashboardFile is the Grafana dashboard the Helm chart ships.
const dashboardFile = "../../deploy/grafana/skillsvc.json"

// TestDashboardMetricsExist checks that every metric the Grafana dashboard
// queries is one the binary exports, run as deployed (MinIO and Redis)
// after a call over each of gRPC, JSON and MCP: a renamed metric fails here
// instead of leaving an empty panel.
func TestDashboardMetricsExist(t *testing.T) {
	queries := dashboardQueries(t, dashboardFile)
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, redisFlags(red, newKeyPrefix())...)...)
	callEveryEdge(t, p)
	exported := sampleNames(scrape(t, p))

	used := map[string]bool{}
	for _, q := range queries {
		names := promqlMetricNames(q.expr)
		if len(names) == 0 {
			t.Errorf("%s: %q names no metric", q.where, q.expr)
		}
		for _, n := range names {
			used[n] = true
			if !exported[n] {
				t.Errorf("%s: %s is not in the binary's /metrics", q.where, n)
			}
		}
	}
	// What the issue asks the dashboard to show, by the metric that shows it.
	for _, want := range []string{
		"grpc_server_handling_seconds_bucket", "skillsvc_http_request_duration_seconds_bucket", // latency
		"skillsvc_cache_hits_total", "skillsvc_cache_misses_total", // cache hit ratios
		"skillsvc_objstore_operations_total",                      // storage requests
		"skillsvc_skills_index_revalidations_total",               // index revalidations
		"process_resident_memory_bytes", "go_gc_gomemlimit_bytes", // memory against its bound
		"skillsvc_usage_skill_uses_total", "skillsvc_usage_searches_total", // skill usage by layer and surface
		"skillsvc_usage_top_skill_activations",                      // the organization's top skills
		"skillsvc_usage_dropped_total", "skillsvc_usage_lost_total", // what usage counting missed
	} {
		if !used[want] {
			t.Errorf("the dashboard does not query %s", want)
		}
	}
}

// TestPromQLMetricNames checks the metric names found in queries, so that
// TestDashboardMetricsExist cannot pass by finding none.
func TestPromQLMetricNames(t *testing.T) {
	for _, c := range []struct {
		name, expr string
		want       []string
	}{
		{"selector", `up`, []string{"up"}},
		{"labels and range", `rate(a_total{job=~"$job",x!="by (y) z"}[$__rate_interval])`, []string{"a_total"}},
		{"aggregation", `sum by (le, level) (rate(b_bucket{l="v"}[5m]))`, []string{"b_bucket"}},
		{"aggregation after", `sum(rate(c[1m])) without (pod)`, []string{"c"}},
		{"quantile", `histogram_quantile(0.99, sum by (le) (rate(d_bucket[1m])))`, []string{"d_bucket"}},
		{"binary operators", `1000 * e / ignoring(op) group_left(x) f > bool 1e18 and on (pod) g offset 5m`, []string{"e", "f", "g"}},
		{"topk", `topk(5, h) unless count_values("v", i)`, []string{"h", "i"}},
		{"colon names", `job:j_total:rate5m`, []string{"job:j_total:rate5m"}},
		{"only numbers", `1 + 2.5e3`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := promqlMetricNames(c.expr); !slices.Equal(got, c.want) {
				t.Errorf("promqlMetricNames(%q) = %q, want %q", c.expr, got, c.want)
			}
		})
	}
}

// A dashboardQuery is one PromQL query of the dashboard and where it is.
type dashboardQuery struct{ where, expr string }

// labelValues is a template variable's query: label_values(SELECTOR, LABEL).
var labelValues = regexp.MustCompile(`^label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)$`)

// dashboardQueries reads the PromQL of every panel target and template
// variable of the Grafana dashboard in file.
func dashboardQueries(t *testing.T, file string) []dashboardQuery {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		Expr string `json:"expr"`
	}
	type panel struct {
		Type    string   `json:"type"`
		Title   string   `json:"title"`
		Targets []target `json:"targets"`
		Panels  []panel  `json:"panels"` // of a collapsed row
	}
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var out []dashboardQuery
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				out = append(out, dashboardQuery{"panel " + p.Title, tg.Expr})
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: query: %v", v.Name, err)
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Fatalf("variable %s: %q is not label_values(SELECTOR, LABEL)", v.Name, q.Query)
		}
		out = append(out, dashboardQuery{"variable " + v.Name, m[1]})
	}
	if len(out) == 0 {
		t.Fatalf("%s: no queries", file)
	}
	return out
}

// sampleNames are the names of the samples in a Prometheus text exposition
// (a histogram's name_bucket, name_sum and name_count).
func sampleNames(body string) map[string]bool {
	names := map[string]bool{}
	for line := range strings.Lines(body) {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}

// promQLWords are the PromQL words that are not metric names where a name
// could stand: aggregations, binary operators and modifiers.
var promQLWords = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
	"and": true, "or": true, "unless": true, "atan2": true, "bool": true, "offset": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"inf": true, "nan": true,
}

// promQLLabelLists are the words whose parenthesized list names labels.
var promQLLabelLists = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// promqlMetricNames returns the metric names expr selects, in order of
// first use: its identifiers less function names (followed by "("), PromQL
// words, and what is inside strings, label matchers {…}, ranges […],
// label lists (by (…), on (…), …) and Grafana variables ($x).
func promqlMetricNames(expr string) []string {
	seen := map[string]bool{}
	var names []string
	isIdent := func(c byte, first bool) bool {
		return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
	}
	// skipTo returns the index just past the close that matches the
	// opener at i, stepping over strings.
	skipTo := func(i int, open, close byte) int {
		depth := 0
		for ; i < len(expr); i++ {
			switch c := expr[i]; {
			case c == '"' || c == '\'' || c == '`':
				if j := strings.IndexByte(expr[i+1:], c); j >= 0 {
					i += j + 1
				}
			case c == open:
				depth++
			case c == close:
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(expr)
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if j := strings.IndexByte(expr[i+1:], c); j >= 0 {
				i += j + 2
			} else {
				i = len(expr)
			}
		case c == '{':
			i = skipTo(i, '{', '}')
		case c == '[':
			i = skipTo(i, '[', ']')
		case c >= '0' && c <= '9' || c == '.':
			// A number or duration, exponent and unit letters included.
			for i++; i < len(expr) && (isIdent(expr[i], false) || expr[i] == '.' || (expr[i] == '+' || expr[i] == '-') && (expr[i-1] == 'e' || expr[i-1] == 'E')); i++ {
			}
		case c == '$':
			for i++; i < len(expr) && (isIdent(expr[i], false) || expr[i] == '{' || expr[i] == '}'); i++ {
			}
		case isIdent(c, true):
			j := i
			for j < len(expr) && isIdent(expr[j], false) {
				j++
			}
			word := expr[i:j]
			next := j
			for next < len(expr) && expr[next] == ' ' {
				next++
			}
			followedByParen := next < len(expr) && expr[next] == '('
			switch {
			case promQLLabelLists[word] && followedByParen:
				j = skipTo(next, '(', ')')
			case followedByParen || promQLWords[word]:
				// a function call or a PromQL word
			case !seen[word]:
				seen[word] = true
				names = append(names, word)
			}
			i = j
		default:
			i++
		}
	}
	return names
}
