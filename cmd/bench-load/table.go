package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/loadbench"
)

// requests are the storage requests one case made.
type requests struct {
	proxy int64              // seen by the latency proxy
	ops   map[string]float64 // skillsvc_objstore_operations_total delta by label set; nil when not scraped
}

func (r requests) opsTotal() float64 {
	var n float64
	for _, v := range r.ops {
		n += v
	}
	return n
}

// cell is one case's result for one library size.
type cell struct {
	value string
	s3    *requests // nil when storage is not the point (RSS)
	err   error
}

// report collects every cell and prints the table.
type report struct {
	sizes   []int
	cases   []string // in the order of first use
	cells   map[string]map[int]cell
	users   []usersRow
	tenants []tenantRow
	usage   []usageRow
	notes   []string
}

type usersRow struct {
	name string
	cell cell
}

func newReport(sizes []int) *report {
	return &report{sizes: sizes, cells: map[string]map[int]cell{}}
}

func (r *report) set(name string, size int, c cell) {
	if r.cells[name] == nil {
		r.cells[name] = map[int]cell{}
		r.cases = append(r.cases, name)
	}
	r.cells[name][size] = c
}

func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// errors lists every failed cell's error once, with the cells it failed,
// so a failed build does not fill a page.
func (r *report) errors() []string {
	var (
		order  []string
		places = map[string][]string{}
	)
	add := func(place string, err error) {
		msg := oneLine(err.Error())
		if places[msg] == nil {
			order = append(order, msg)
		}
		places[msg] = append(places[msg], place)
	}
	for _, name := range r.cases {
		for _, size := range r.sizes {
			if c, ok := r.cells[name][size]; ok && c.err != nil {
				add(fmt.Sprintf("%s skills, %s", loadbench.Count(float64(size)), name), c.err)
			}
		}
	}
	for _, u := range r.users {
		if u.cell.err != nil {
			add("users, "+u.name, u.cell.err)
		}
	}
	for _, t := range r.tenants {
		if t.err != nil {
			add("many tenants, "+t.label(), t.err)
		}
	}
	for _, u := range r.usage {
		if u.err != nil {
			add(fmt.Sprintf("usage cost, %s (round %d)", u.name, u.round), u.err)
		}
	}
	var out []string
	for _, msg := range order {
		if p := places[msg]; len(p) == 1 {
			out = append(out, p[0]+": "+msg)
		} else {
			out = append(out, fmt.Sprintf("%s (%d cells, first %s)", msg, len(p), p[0]))
		}
	}
	return out
}

// print writes the results as markdown tables padded to line up as plain
// text too, then the notes, errors and machine.
func (r *report) print(w io.Writer, o options) {
	if len(r.sizes) > 0 {
		r.printSizes(w, o)
	}
	r.printTenants(w, o)
	r.printUsage(w, o)

	fmt.Fprintln(w)
	for _, n := range r.notes {
		fmt.Fprintln(w, n)
	}
	if errs := r.errors(); len(errs) > 0 {
		fmt.Fprintln(w, "\nErrors:")
		for _, e := range errs {
			fmt.Fprintf(w, "- %s\n", e)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Latency: %v added to every S3 response by a proxy in front of MinIO (naive baseline included).\n", o.latency)
	fmt.Fprintf(w, "Machine: %s; MinIO, redis-server and skillsvc on the same machine.\n", loadbench.Machine())
	fmt.Fprintf(w, "Run: %s, %d iterations for p50/p99, %d clients for %v of throughput", time.Now().Format("2006-01-02"), o.iterations, o.clients, o.duration)
	fmt.Fprintf(w, ", usage counted %v (-usage)", o.usage)
	if o.lruMaxBytes > 0 {
		fmt.Fprintf(w, ", --cache.lru.max-bytes=%d", o.lruMaxBytes)
	}
	if len(o.skillsvcFlags) > 0 {
		fmt.Fprintf(w, ", extra skillsvc flags: %s", strings.Join(o.skillsvcFlags, " "))
	}
	fmt.Fprintln(w, ".")
}

// printSizes writes the table of library sizes, and the users table.
func (r *report) printSizes(w io.Writer, o options) {
	header := []string{"case"}
	for _, size := range r.sizes {
		header = append(header, fmt.Sprintf("%s skills", loadbench.Count(float64(size))), "S3 requests")
	}
	rows := [][]string{header}
	for _, name := range r.cases {
		row := []string{name}
		for _, size := range r.sizes {
			c, ok := r.cells[name][size]
			if !ok {
				row = append(row, "", "")
				continue
			}
			row = append(row, c.text(), c.requestsText())
		}
		rows = append(rows, row)
	}
	loadbench.WriteTable(w, rows)

	if len(r.users) > 0 {
		fmt.Fprintf(w, "\n%d users × %s skills each, one skillsvc, Redis flushed first:\n\n", o.users, loadbench.Count(float64(slices.Max(o.sizes))))
		rows := [][]string{{"measure", "value", "S3 requests"}}
		for _, u := range r.users {
			rows = append(rows, []string{u.name, u.cell.text(), u.cell.requestsText()})
		}
		loadbench.WriteTable(w, rows)
	}
	fmt.Fprintf(w, "\nS3 requests: seen by the latency proxy (skillsvc_objstore_operations_total delta in parentheses), "+
		"for the whole case: all %d calls of a p50/p99 row, every call of the throughput run.\n", o.iterations)
}

// text is the cell's value, or its error cut to fit a table cell; the whole
// error is listed under the table.
func (c cell) text() string {
	if c.err != nil {
		return "error: " + clip(oneLine(c.err.Error()), 60)
	}
	return c.value
}

func (c cell) requestsText() string {
	if c.s3 == nil {
		return ""
	}
	s := loadbench.Count(float64(c.s3.proxy))
	if c.s3.ops != nil {
		s += " (" + loadbench.Count(c.s3.opsTotal()) + ")"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// formatOps lists operations by count, for -v.
func formatOps(ops map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ops)) {
		if ops[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s=%s", k, loadbench.Count(ops[k])))
		}
	}
	return strings.Join(parts, " ")
}
