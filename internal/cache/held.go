package cache

import (
	"container/list"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Held is what one replica keeps decoded to serve the libraries: the
// indexes, and what the catalog builds on them (each library's parsed
// skills, each user's view). Everything is charged against one byte budget
// (--skills.max-held-bytes), least recently used out, whatever its kind: a
// replica serving many small libraries and one serving a few large ones
// stay within the same memory. Each value is charged its owner's estimate of
// the heap it keeps alive (HeldBytes and the catalog's estimates, measured
// against the heap by their tests), plus heldItemBytes.
//
// A value is immutable once held: callers share it.
type Held struct {
	mu    sync.Mutex
	max   int64
	used  int64
	order list.List // of *heldItem, most recently used first
	items map[heldKey]*list.Element
	kinds map[string]*heldKind
	m     *HeldMetrics
}

type heldKey struct{ kind, key string }

type heldItem struct {
	k     heldKey
	v     any
	bytes int64
}

// heldKind is one kind's share of the budget, for its metrics.
type heldKind struct {
	bytes, items      prometheus.Gauge
	evicted, tooLarge prometheus.Counter
	// dropped is told of each value of the kind let go (Shelf.OnDrop).
	dropped func(v any)
}

// heldItemBytes is what holding a value costs besides the value: its list
// element, its item and its map entry (measured with the held values'
// estimates, TestHeldEstimates).
const heldItemBytes = 160

// NewHeld returns an empty budget of maxBytes, reported on m.
func NewHeld(maxBytes int64, m *HeldMetrics) *Held {
	h := &Held{max: maxBytes, items: map[heldKey]*list.Element{}, kinds: map[string]*heldKind{}, m: m}
	m.HeldMaxBytes.Set(float64(maxBytes))
	return h
}

// MaxBytes is the budget.
func (h *Held) MaxBytes() int64 { return h.max }

// Bytes is what the held values are charged, at most MaxBytes.
func (h *Held) Bytes() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.used
}

func (h *Held) kind(name string) *heldKind {
	h.mu.Lock()
	defer h.mu.Unlock()
	if k, ok := h.kinds[name]; ok {
		return k
	}
	k := &heldKind{
		bytes: h.m.HeldBytes.WithLabelValues(name), items: h.m.HeldItems.WithLabelValues(name),
		evicted: h.m.HeldEvictions.WithLabelValues(name), tooLarge: h.m.HeldTooLarge.WithLabelValues(name),
	}
	h.kinds[name] = k
	return k
}

func (h *Held) get(k heldKey) (any, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.items[k]
	if !ok {
		return nil, false
	}
	h.order.MoveToFront(e)
	return e.Value.(*heldItem).v, true
}

// add holds v under k (replacing what k held), evicting the least recently
// used values until the budget holds it. A value larger than the whole
// budget is not held: every use rebuilds it, and heldTooLarge says so.
func (h *Held) add(k heldKey, v any, bytes int64) bool {
	bytes += heldItemBytes + int64(len(k.key))
	h.mu.Lock()
	defer h.mu.Unlock()
	kind := h.kinds[k.kind]
	if e, ok := h.items[k]; ok {
		h.drop(e)
	}
	if bytes > h.max {
		kind.tooLarge.Inc()
		return false
	}
	for h.used+bytes > h.max {
		last := h.order.Back()
		h.kinds[last.Value.(*heldItem).k.kind].evicted.Inc()
		h.drop(last)
	}
	h.items[k] = h.order.PushFront(&heldItem{k: k, v: v, bytes: bytes})
	h.used += bytes
	kind.bytes.Add(float64(bytes))
	kind.items.Inc()
	return true
}

func (h *Held) remove(k heldKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.items[k]; ok {
		h.drop(e)
	}
}

// drop forgets e; h.mu is held.
func (h *Held) drop(e *list.Element) {
	it := h.order.Remove(e).(*heldItem)
	delete(h.items, it.k)
	h.used -= it.bytes
	kind := h.kinds[it.k.kind]
	kind.bytes.Sub(float64(it.bytes))
	kind.items.Dec()
	if kind.dropped != nil {
		kind.dropped(it.v)
	}
}

// Shelf is one kind of value on a Held budget, by key.
type Shelf[V any] struct {
	h    *Held
	kind string
}

// NewShelf returns the values of kind (a metric label: "index", "view", …)
// held on h.
func NewShelf[V any](h *Held, kind string) *Shelf[V] {
	h.kind(kind)
	return &Shelf[V]{h: h, kind: kind}
}

// OnDrop calls fn with each value of the shelf let go (evicted, replaced,
// removed), with the budget's lock held: fn must be quick and must not use
// the budget. It lets an owner keep figures over what is held (the search
// indexes' gauges). Call it before holding anything.
func (s *Shelf[V]) OnDrop(fn func(V)) {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	s.h.kinds[s.kind].dropped = func(v any) { fn(v.(V)) }
}

// Get returns the value held under key, marking it used.
func (s *Shelf[V]) Get(key string) (V, bool) {
	v, ok := s.h.get(heldKey{s.kind, key})
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// Add holds v under key, charged bytes (the estimate of the heap v keeps
// alive), and reports whether it is held.
func (s *Shelf[V]) Add(key string, v V, bytes int64) bool {
	return s.h.add(heldKey{s.kind, key}, v, bytes)
}

// Remove forgets the value under key.
func (s *Shelf[V]) Remove(key string) { s.h.remove(heldKey{s.kind, key}) }

// Purge forgets every value of the shelf's kind.
func (s *Shelf[V]) Purge() {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	for k, e := range s.h.items {
		if k.kind == s.kind {
			s.h.drop(e)
		}
	}
}

// HeldMetrics tell how full a Held budget is and what it lets go, by kind.
// The library index's metrics register them (libindex.NewMetrics).
type HeldMetrics struct {
	HeldBytes     *prometheus.GaugeVec
	HeldItems     *prometheus.GaugeVec
	HeldMaxBytes  prometheus.Gauge
	HeldEvictions *prometheus.CounterVec
	HeldTooLarge  *prometheus.CounterVec
}

// NewHeldMetrics returns the metrics of a Held budget, unregistered.
func NewHeldMetrics() *HeldMetrics {
	return &HeldMetrics{
		HeldBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "skillsvc_skills_held_bytes",
			Help: "Bytes charged for what this replica holds decoded (library indexes, each library's parsed skills, users' views), by kind; their sum stays within skillsvc_skills_held_max_bytes.",
		}, []string{"kind"}),
		HeldItems: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "skillsvc_skills_held_items",
			Help: "Values this replica holds decoded, by kind.",
		}, []string{"kind"}),
		HeldMaxBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skillsvc_skills_held_max_bytes",
			Help: "The budget of what this replica holds decoded (--skills.max-held-bytes).",
		}),
		HeldEvictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_held_evictions_total",
			Help: "Values dropped, least recently used first, to keep what this replica holds decoded within its budget, by kind. A steady rate means the budget is smaller than the libraries in use: each eviction costs a rebuild (from the shared cache, not storage) on the next call.",
		}, []string{"kind"}),
		HeldTooLarge: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_skills_held_too_large_total",
			Help: "Values not held because one alone is larger than the budget, by kind: every call using one rebuilds it. Raise --skills.max-held-bytes.",
		}, []string{"kind"}),
	}
}
