package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
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
	sizes []int
	cases []string // in the order of first use
	cells map[string]map[int]cell
	users []usersRow
	notes []string
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
				add(fmt.Sprintf("%s skills, %s", formatCount(float64(size)), name), c.err)
			}
		}
	}
	for _, u := range r.users {
		if u.cell.err != nil {
			add("users, "+u.name, u.cell.err)
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
	header := []string{"case"}
	for _, size := range r.sizes {
		header = append(header, fmt.Sprintf("%s skills", formatCount(float64(size))), "S3 requests")
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
	writeTable(w, rows)

	if len(r.users) > 0 {
		fmt.Fprintf(w, "\n%d users × %s skills each, one skillsvc, Redis flushed first:\n\n", o.users, formatCount(float64(slices.Max(o.sizes))))
		rows := [][]string{{"measure", "value", "S3 requests"}}
		for _, u := range r.users {
			rows = append(rows, []string{u.name, u.cell.text(), u.cell.requestsText()})
		}
		writeTable(w, rows)
	}

	fmt.Fprintln(w)
	fmt.Fprintf(w, "S3 requests: seen by the latency proxy (skillsvc_objstore_operations_total delta in parentheses), "+
		"for the whole case: all %d calls of a p50/p99 row, every call of the throughput run.\n", o.iterations)
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
	fmt.Fprintf(w, "Machine: %s, %d cores, %s RAM, %s/%s, %s; MinIO, redis-server and skillsvc on the same machine.\n",
		cpuModel(), runtime.NumCPU(), memTotal(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(w, "Run: %s, %d iterations for p50/p99, %d clients for %v of throughput", time.Now().Format("2006-01-02"), o.iterations, o.clients, o.duration)
	if o.lruMaxBytes > 0 {
		fmt.Fprintf(w, ", --cache.lru.max-bytes=%d", o.lruMaxBytes)
	}
	if len(o.skillsvcFlags) > 0 {
		fmt.Fprintf(w, ", extra skillsvc flags: %s", strings.Join(o.skillsvcFlags, " "))
	}
	fmt.Fprintln(w, ".")
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
	s := formatCount(float64(c.s3.proxy))
	if c.s3.ops != nil {
		s += " (" + formatCount(c.s3.opsTotal()) + ")"
	}
	return s
}

func writeTable(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, v := range row {
			widths[i] = max(widths[i], len([]rune(escapeCell(v))))
		}
	}
	line := func(row []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, v := range row {
			v = escapeCell(v)
			pad := strings.Repeat(" ", widths[i]-len([]rune(v)))
			if i == 0 {
				b.WriteString(" " + v + pad + " |")
			} else {
				b.WriteString(" " + pad + v + " |") // numbers line up on the right
			}
		}
		fmt.Fprintln(w, b.String())
	}
	line(rows[0])
	sep := make([]string, len(widths))
	for i, n := range widths {
		sep[i] = strings.Repeat("-", n+2)
		if i > 0 {
			sep[i] = sep[i][:n+1] + ":"
		}
	}
	fmt.Fprintln(w, "|"+strings.Join(sep, "|")+"|")
	for _, row := range rows[1:] {
		line(row)
	}
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// formatDuration keeps three significant digits in a readable unit.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}

// formatCount writes a whole number with thousands separators.
func formatCount(f float64) string {
	s := strconv.FormatInt(int64(math.Round(f)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// formatOps lists operations by count, for -v.
func formatOps(ops map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ops)) {
		if ops[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s=%s", k, formatCount(ops[k])))
		}
	}
	return strings.Join(parts, " ")
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func memTotal() string {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				return fmt.Sprintf("%.0f GiB", float64(kb<<10)/(1<<30))
			}
		}
	}
	return "unknown"
}
