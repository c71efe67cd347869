// Package loadbench is what the end-to-end load benchmarks (cmd/bench-load,
// cmd/bench-mcp) share besides the servers testserver starts: cleanups that
// also run on Ctrl-C, nearest-rank percentiles, the number formats and the
// markdown table they print, and the machine line under it.
package loadbench

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Cleanups runs registered functions once, last first, whether the run ends
// normally or by a signal. A function added after Run has started runs at
// once, so a process started while the harness is being interrupted does
// not outlive it.
type Cleanups struct {
	mu    sync.Mutex
	fns   []func()
	ran   bool
	runMu sync.Mutex
}

// Add registers fn.
func (c *Cleanups) Add(fn func()) {
	c.mu.Lock()
	if c.ran {
		c.mu.Unlock()
		fn()
		return
	}
	c.fns = append(c.fns, fn)
	c.mu.Unlock()
}

// Run runs every registered function, last first; later calls wait for the
// first and do nothing.
func (c *Cleanups) Run() {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	c.mu.Lock()
	fns := c.fns
	c.fns, c.ran = nil, true
	c.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

// Main runs a benchmark command's run with a fresh Cleanups and exits with
// its code after running them. On Ctrl-C or SIGTERM it stops every server
// and removes every directory at once, whatever the run is doing, and exits
// as interrupted.
func Main(name string, run func(cl *Cleanups) int) {
	cl := &Cleanups{}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "%s: %v: stopping servers\n", name, sig)
		cl.Run()
		os.Exit(130)
	}()
	code := run(cl)
	cl.Run()
	os.Exit(code)
}

// Percentile is the nearest-rank percentile p (0–100] of sorted durations;
// 0 when there are none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// WriteTable writes rows (the first is the header) as a markdown table
// padded to line up as plain text too, numbers (every column but the first)
// aligned right.
func WriteTable(w io.Writer, rows [][]string) {
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
				b.WriteString(" " + pad + v + " |")
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

// Duration keeps three significant digits in a readable unit.
func Duration(d time.Duration) string {
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

// Bytes is n in B, KiB, MiB or GiB.
func Bytes(n int64) string {
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

// Count writes f rounded to a whole number with thousands separators.
func Count(f float64) string {
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

// Machine describes where a benchmark ran: CPU model (from /proc/cpuinfo),
// cores, RAM, platform and Go version.
func Machine() string {
	return fmt.Sprintf("%s, %d cores, %s RAM, %s/%s, %s", cpuModel(), runtime.NumCPU(), memTotal(), runtime.GOOS, runtime.GOARCH, runtime.Version())
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
			if len(f) > 0 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return fmt.Sprintf("%.0f GiB", float64(kb<<10)/(1<<30))
				}
			}
		}
	}
	return "unknown"
}
