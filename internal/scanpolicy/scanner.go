package scanpolicy

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/scan"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// Scan sources (skillsvc_scan_runs_total's label).
const (
	SourcePublish = "publish" // a publish's candidate folder
	SourceUpload  = "upload"  // a skill the index saw changed out of band
)

// Bounds of the background scans: how many wait, and how many verdicts a
// replica keeps in process (each a few hundred bytes; the shared cache
// keeps them all). How many run at once is New's workers
// (--library.scan-workers).
const (
	queueLen   = 1024
	maxKnown   = 20000
	verdictTTL = 30 * 24 * time.Hour
)

// Retries of a failed background scan (a storage read failing, the scan
// timing out): after retryBase, then four times as long each time, up to
// retries times; then it is given up until the layer holding the skill is
// built again (a change in its library) and queues it anew. At most
// maxRetrying scans wait to be retried at once; past that a failure is
// given up at once.
const (
	retries     = 3
	retryBase   = 2 * time.Second
	maxRetrying = 1024
)

// Scanner applies the policy. One per replica; its verdicts are shared
// through the cache, keyed by manifest digest and scan.RulesVersion, so a
// content is scanned once whichever replica or path (publish, upload)
// first sees it.
type Scanner struct {
	policy Policy
	cache  cache.Cache
	log    *slog.Logger
	runs   *prometheus.CounterVec
	reused *prometheus.CounterVec
	failed *prometheus.CounterVec

	mu      sync.Mutex
	known   map[string]scan.Report // by manifest digest
	waiting map[string][]func()    // digests queued or scanning: whom to tell
	queue   chan job
	later   []job                  // queued past the channel's room, moved in as it drains
	retry   map[string]*time.Timer // failed scans waiting to run again, by digest
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

type job struct {
	digest string
	files  []scanFile
	read   *libindex.Files
	failed int // runs that failed so far
}

type scanFile struct {
	rel  string
	obj  objstore.Object
	exec bool
}

// New returns the scanner of policy p over the shared cache c, and starts
// its background workers, workers of them (at least one; Close stops
// them). Each takes a core while it scans: a large upload is scanned at
// that pace, beside the calls, not ahead of them.
func New(p Policy, workers int, c cache.Cache, reg prometheus.Registerer, log *slog.Logger) *Scanner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Scanner{
		policy: p, cache: c, log: log,
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillsvc_scan_runs_total",
			Help: "Skill contents scanned (internal/scan), by source: publish (a candidate folder) or upload (a skill the index saw changed); a content already judged is not scanned again."}, []string{"source"}),
		reused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillsvc_scan_verdicts_reused_total",
			Help: "Scan verdicts taken from where an earlier scan left them instead of scanning, by where: process or shared_cache."}, []string{"from"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillsvc_scan_failures_total",
			Help: "Background scans of uploaded skills that failed (a storage read, a timeout), by what followed: retried (after a backoff) or given_up (until the skill's library changes)."}, []string{"outcome"}),
		known: map[string]scan.Report{}, waiting: map[string][]func(){}, retry: map[string]*time.Timer{},
		queue: make(chan job, queueLen), stop: make(chan struct{}),
	}
	for _, src := range []string{SourcePublish, SourceUpload} {
		s.runs.WithLabelValues(src)
	}
	for _, from := range []string{"process", "shared_cache"} {
		s.reused.WithLabelValues(from)
	}
	for _, o := range []string{"retried", "given_up"} {
		s.failed.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(s.runs, s.reused, s.failed)
	}
	for range max(workers, 1) {
		s.wg.Add(1)
		go s.work()
	}
	return s
}

// Close stops the background scans (those under way finish; those
// waiting to be retried are not).
func (s *Scanner) Close() {
	s.mu.Lock()
	s.closed = true
	for _, t := range s.retry {
		t.Stop()
	}
	clear(s.retry)
	s.mu.Unlock()
	close(s.stop)
	s.wg.Wait()
}

// Policy is the scanner's policy.
func (s *Scanner) Policy() Policy { return s.policy }

// Mode is library l's mode.
func (s *Scanner) Mode(l layout.LibraryRef) Mode { return s.policy.For(l) }

func cacheKey(digest string) string { return "scan\x00" + scan.RulesVersion + "\x00" + digest }

// Verdict is the report of the content with manifest digest, when a scan
// of it under the current rules is known (in process or in the shared
// cache). It never scans. Provenance calls it for a served skill's scan
// verdict: ok false is "unscanned".
func (s *Scanner) Verdict(ctx context.Context, digest string) (scan.Report, bool) {
	if digest == "" {
		return scan.Report{}, false
	}
	if r, ok := s.local(digest); ok {
		return r, true
	}
	return s.shared(ctx, digest)
}

// Status is a served skill's scan verdict as provenance shows it: "off"
// when library l does not scan (or s is nil: no library does),
// "unscanned" while no verdict of its content (manifest digest) is known,
// else the report's verdict: "clean", "low", "medium" or "high". It never
// scans; a verdict it finds in the shared cache is kept in process.
func (s *Scanner) Status(ctx context.Context, l layout.LibraryRef, digest string) string {
	return s.Statuses(ctx, []Content{{Library: l, Digest: digest}})[0]
}

// Content is a served skill's content (its manifest digest) in the library
// that serves it.
type Content struct {
	Library layout.LibraryRef
	Digest  string
}

// Statuses is Status of each of cs (aligned), for a listing: the verdicts
// not known in process are fetched from the shared cache in one call.
func (s *Scanner) Statuses(ctx context.Context, cs []Content) []string {
	out := make([]string, len(cs))
	var missing []string
	for i, c := range cs {
		switch _, known := s.local(c.Digest); {
		case s == nil || s.policy.For(c.Library) == Off:
			out[i] = string(Off)
		case c.Digest != "" && !known:
			missing = append(missing, c.Digest)
		}
	}
	slices.Sort(missing)
	fetched := s.sharedMany(ctx, slices.Compact(missing))
	for i, c := range cs {
		if out[i] != "" {
			continue
		}
		r, ok := s.local(c.Digest)
		if !ok {
			r, ok = fetched[c.Digest]
		}
		out[i] = "unscanned"
		if ok {
			out[i] = string(r.Verdict)
		}
	}
	return out
}

func (s *Scanner) local(digest string) (scan.Report, bool) {
	if s == nil || digest == "" {
		return scan.Report{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.known[digest]
	return r, ok
}

func (s *Scanner) shared(ctx context.Context, digest string) (scan.Report, bool) {
	if s.cache == nil {
		return scan.Report{}, false
	}
	hits, err := s.cache.Fetch(ctx, []string{cacheKey(digest)})
	if err != nil || hits[cacheKey(digest)] == nil {
		return scan.Report{}, false
	}
	var r scan.Report
	if json.Unmarshal(hits[cacheKey(digest)], &r) != nil || r.RulesVersion != scan.RulesVersion {
		return scan.Report{}, false
	}
	s.keep(digest, r)
	return r, true
}

// sharedMany is shared for many digests in one cache call.
func (s *Scanner) sharedMany(ctx context.Context, digests []string) map[string]scan.Report {
	out := map[string]scan.Report{}
	if len(digests) == 0 || s.cache == nil {
		return out
	}
	keys := make([]string, len(digests))
	for i, d := range digests {
		keys[i] = cacheKey(d)
	}
	hits, err := s.cache.Fetch(ctx, keys)
	if err != nil {
		return out
	}
	for i, d := range digests {
		var r scan.Report
		if b := hits[keys[i]]; b != nil && json.Unmarshal(b, &r) == nil && r.RulesVersion == scan.RulesVersion {
			s.keep(d, r)
			out[d] = r
		}
	}
	return out
}

// keep holds r in process (bounded: past maxKnown the oldest half is
// forgotten at random, as map order goes; the shared cache still has it).
func (s *Scanner) keep(digest string, r scan.Report) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.known) >= maxKnown {
		n := 0
		for k := range s.known {
			delete(s.known, k)
			if n++; n >= maxKnown/2 {
				break
			}
		}
	}
	s.known[digest] = r
}

func (s *Scanner) store(ctx context.Context, digest string, r scan.Report) {
	s.keep(digest, r)
	if s.cache == nil {
		return
	}
	if b, err := json.Marshal(r); err == nil {
		if err := s.cache.Store(ctx, map[string][]byte{cacheKey(digest): b}, verdictTTL); err != nil {
			s.log.Warn("scan: the verdict could not be shared; other replicas scan the content again", "digest", digest, "err", err)
		}
	}
}

// Publish scans a publish's candidate folder (digest its manifest digest)
// for library l, unless its verdict is known. ok false: l's mode is off.
func (s *Scanner) Publish(ctx context.Context, l layout.LibraryRef, digest string, files []skillmd.File) (scan.Report, Mode, error) {
	mode := s.policy.For(l)
	if mode == Off {
		return scan.Report{}, Off, nil
	}
	if r, ok := s.local(digest); ok {
		s.reused.WithLabelValues("process").Inc()
		return r, mode, nil
	}
	if r, ok := s.shared(ctx, digest); ok {
		s.reused.WithLabelValues("shared_cache").Inc()
		return r, mode, nil
	}
	in := make([]scan.File, len(files))
	for i, f := range files {
		in[i] = scan.File{Path: f.Path, Data: f.Data, Executable: filemode.Of(f.Mode, f.Data) == filemode.Executable}
	}
	r, err := scan.Skill(ctx, in, scan.DefaultLimits)
	if err != nil {
		return scan.Report{}, mode, err
	}
	s.runs.WithLabelValues(SourcePublish).Inc()
	s.store(context.WithoutCancel(ctx), digest, r)
	return r, mode, nil
}

// Layer notes on each skill of one library's layer (views.Builder calls
// it as it builds the layer) what the library's policy makes of its
// verdict: warnings, or under block the errors that withhold it. A skill
// whose verdict is not known yet is queued for a background scan (its
// files read through files, which the index build that hashed them
// filled), and changed is called once it is known, so the layer is built
// again. It returns a sum of what it noted, which the layer's generation
// takes in (cached replies change with it). It never scans on the
// caller's path: a listing waits for nothing.
func (s *Scanner) Layer(ctx context.Context, layer, prefix string, refs []*skillview.Ref, files *libindex.Files, changed func()) (sum uint64, withheld []string) {
	l := libraryOf(layer)
	mode := s.policy.For(l)
	if mode == Off {
		return 0, nil
	}
	scanned := func(ref *skillview.Ref) bool {
		// Not hashed (over the MCP extension's limits): not scanned either.
		return ref.Digest() != "" && !ref.Manifest.OverLimits
	}
	var missing []string
	for _, ref := range refs {
		if _, ok := s.local(ref.Digest()); scanned(ref) && !ok {
			missing = append(missing, ref.Digest())
		}
	}
	fetched := s.sharedMany(ctx, missing) // one round trip for the layer
	s.reused.WithLabelValues("shared_cache").Add(float64(len(fetched)))
	h := fnv.New64a()
	for _, ref := range refs {
		if !scanned(ref) {
			continue
		}
		d := ref.Digest()
		r, ok := s.local(d)
		if !ok {
			r, ok = fetched[d]
		}
		var warnings, errs []string
		state := "unscanned"
		switch {
		case ok:
			warnings, errs = notes(r, mode)
			state = string(r.Verdict)
		default:
			s.enqueue(d, ref, files, changed)
			if mode == Block {
				errs = []string{Pending}
			}
		}
		// Every verdict learnt changes the sum (a clean one too), so
		// replies that show it (provenance) are not served from before.
		h.Write([]byte(ref.Dir + "\x00" + d + "\x00" + state + "\x00" + strings.Join(warnings, "\x00") + "\x01" + strings.Join(errs, "\x00") + "\x02"))
		if len(warnings)+len(errs) == 0 {
			continue
		}
		if ref.Notes == nil {
			ref.Notes = new(skillmd.Problems)
		}
		ref.Notes.Warnings = append(ref.Notes.Warnings, warnings...)
		ref.Notes.Errors = append(ref.Notes.Errors, errs...)
		if len(errs) > 0 {
			withheld = append(withheld, ref.Dir)
		}
	}
	if h.Sum64() == fnv.New64a().Sum64() {
		return 0, withheld
	}
	return h.Sum64(), withheld
}

// libraryOf is the library a layer name serves (its kind is what the
// policy reads; a user layer's user does not matter).
func libraryOf(layer string) layout.LibraryRef {
	switch {
	case layer == skillview.LayerShared:
		return layout.LibraryRef{Shared: true}
	case strings.HasPrefix(layer, skillview.LayerTeam):
		return layout.LibraryRef{Team: strings.TrimPrefix(layer, skillview.LayerTeam)}
	}
	return layout.LibraryRef{User: "-"}
}

// enqueue queues a background scan of ref's content, once per digest
// while one is queued or running; changed is called when it is done.
func (s *Scanner) enqueue(digest string, ref *skillview.Ref, files *libindex.Files, changed func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.waiting[digest]; ok {
		if changed != nil {
			s.waiting[digest] = append(w, changed)
		}
		return
	}
	modes := map[string]bool{}
	for _, mf := range ref.Manifest.Files {
		modes[mf.Path] = mf.Mode == filemode.Executable
	}
	j := job{digest: digest, read: files}
	base := ref.Dir + "/"
	for _, e := range ref.Files {
		rel := strings.TrimPrefix(e.Rel, base)
		j.files = append(j.files, scanFile{rel: rel, obj: e.Obj, exec: modes[strings.TrimSuffix(ref.Location, skillmd.SkillFile)+rel]})
	}
	if !s.push(j) {
		return // the next build of a layer holding it queues it again
	}
	s.waiting[digest] = nil
	if changed != nil {
		s.waiting[digest] = []func(){changed}
	}
}

// push queues j (s.mu held); false when both the queue and later are full.
func (s *Scanner) push(j job) bool {
	select {
	case s.queue <- j:
	default:
		if len(s.later) >= maxKnown {
			return false
		}
		s.later = append(s.later, j)
	}
	return true
}

// again schedules failed job j to run again after its backoff (s.mu held),
// or gives it up: false.
func (s *Scanner) again(j job, err error) bool {
	j.failed++
	if j.failed > retries || len(s.retry) >= maxRetrying || s.closed {
		s.failed.WithLabelValues("given_up").Inc()
		s.log.Warn("scan: a background scan failed; given up until the skill's library changes", "digest", j.digest, "runs", j.failed, "err", err)
		return false
	}
	delay := retryBase << (2 * (j.failed - 1))
	s.failed.WithLabelValues("retried").Inc()
	s.log.Warn("scan: a background scan failed; retrying", "digest", j.digest, "runs", j.failed, "in", delay, "err", err)
	s.retry[j.digest] = time.AfterFunc(delay, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.retry[j.digest] == nil || s.closed {
			return
		}
		delete(s.retry, j.digest)
		if !s.push(j) {
			delete(s.waiting, j.digest) // the next build of a layer holding it queues it again
		}
	})
	return true
}

// refill moves the scans waiting past the queue's room into it.
func (s *Scanner) refill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.later) > 0 {
		select {
		case s.queue <- s.later[0]:
			s.later[0] = job{}
			s.later = s.later[1:]
		default:
			return
		}
	}
}

func (s *Scanner) work() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case j := <-s.queue:
			err := panics.Guard(func() error { return s.run(j) })()
			s.mu.Lock()
			if err != nil && s.again(j, err) {
				s.mu.Unlock()
				s.refill()
				continue
			}
			tell := s.waiting[j.digest]
			delete(s.waiting, j.digest)
			s.mu.Unlock()
			if err == nil {
				for _, f := range tell {
					f()
				}
			}
			s.refill()
		}
	}
}

// scanTimeout bounds a background scan with its reads.
var scanTimeout = 2 * scan.DefaultLimits.Timeout

// run scans one content unless another replica did meanwhile.
func (s *Scanner) run(j job) error {
	ctx, cancel := context.WithTimeout(context.Background(), scanTimeout)
	defer cancel()
	if _, ok := s.shared(ctx, j.digest); ok {
		s.reused.WithLabelValues("shared_cache").Inc()
		return nil
	}
	var in []scan.File
	var total int64
	for _, f := range j.files {
		if len(in) >= scan.DefaultLimits.MaxFiles || total+f.obj.Size > scan.DefaultLimits.MaxBytes {
			break // the scan reports itself incomplete past its limits
		}
		data, err := readAll(ctx, j.read, f.obj)
		if err != nil {
			return err
		}
		total += int64(len(data))
		in = append(in, scan.File{Path: f.rel, Data: data, Executable: f.exec})
	}
	r, err := scan.Skill(ctx, in, scan.DefaultLimits)
	if err != nil {
		return err
	}
	s.runs.WithLabelValues(SourceUpload).Inc()
	s.store(ctx, j.digest, r)
	return nil
}

func readAll(ctx context.Context, files *libindex.Files, o objstore.Object) ([]byte, error) {
	rc, _, err := files.Open(ctx, o, 0, -1)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, scan.DefaultLimits.MaxBytes+1))
}
