package skillview

import (
	"reflect"
	"unsafe"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Estimates of the heap a layer and an overlay keep alive, on 64-bit
// platforms: what they are charged on the held budget (cache.Held). Each
// is a fixed cost per part plus the bytes of its strings, measured against
// runtime.MemStats by TestHeldEstimates (a shared layer of 300 skills and
// 200 users' views of 5: within -10%..+40% of the heap building them
// takes; measured 7 to 10% above). A layer counts the keys and ETags
// of its files although its index holds the same strings: either may be
// evicted first, and the bound must hold either way.
const (
	// layerBytes, overlayBytes: the struct and its slice and map headers.
	layerBytes   = 512
	overlayBytes = 256
	// slotBytes: one entry of a map from a string to a pointer, the map's
	// slots being half to seven eighths full.
	slotBytes = 48
)

var (
	skillRefBytes     = cache.AllocBytes(int(unsafe.Sizeof(Ref{})))
	entryBytes        = int64(unsafe.Sizeof(Entry{}))
	manifestBytes     = cache.AllocBytes(int(unsafe.Sizeof(Manifest{})))
	manifestFileBytes = int64(unsafe.Sizeof(ManifestFile{}))
)

// HeldBytes estimates the heap l keeps alive.
func (l *Layer) HeldBytes() int64 {
	n := int64(layerBytes) + int64(cap(l.Entries))*entryBytes + cache.AllocBytes(4*len(l.owner))
	for _, e := range l.Entries {
		n += cache.AllocBytes(len(e.Obj.Key)) + cache.AllocBytes(len(e.Obj.ETag))
	}
	for _, list := range [][]*Ref{l.All, l.names, l.folders, l.displays} {
		n += cache.AllocBytes(8 * cap(list))
	}
	counted := map[unsafe.Pointer]bool{} // the maps skills share (ShareMaps)
	for _, s := range l.All {
		n += skillRefBytes + cache.AllocBytes(len(s.Location)) + ParsedBytes(s.Head) + notesBytes(s.Notes) + manifestHeldBytes(s.Manifest)
		n -= sharedMapsBytes(s.Head.Frontmatter, counted)
	}
	return n
}

// heldBytes estimates the heap o keeps alive, its own layer included.
func (o *Overlay) heldBytes() int64 {
	n := int64(overlayBytes) + o.Own.Bytes + cache.AllocBytes(16*cap(o.hidden))
	n += int64(len(o.renamed)) * slotBytes
	for _, s := range o.regrouped {
		n += slotBytes + skillRefBytes + notesBytes(s.Notes)
	}
	return n
}

// sharedMapsBytes is what ParsedBytes counted of fm's maps that counted
// holds, and adds the others to counted.
func sharedMapsBytes(fm skillmd.Frontmatter, counted map[unsafe.Pointer]bool) int64 {
	var n int64
	if fm.Metadata != nil {
		if p := reflect.ValueOf(fm.Metadata).UnsafePointer(); counted[p] {
			n += cache.StringMapBytes(fm.Metadata)
		} else {
			counted[p] = true
		}
	}
	if fm.Extra != nil {
		if p := reflect.ValueOf(fm.Extra).UnsafePointer(); counted[p] {
			n += cache.AnyBytes(fm.Extra)
		} else {
			counted[p] = true
		}
	}
	return n
}

// ParsedBytes estimates what a parsed head holds beyond its struct.
func ParsedBytes(p Head) int64 {
	fm := p.Frontmatter
	var n int64
	for _, s := range []string{fm.Name, fm.DisplayName, fm.Description, fm.License, fm.Version, fm.Compatibility} {
		n += cache.AllocBytes(len(s))
	}
	n += cache.StringsBytes(fm.AllowedTools)
	if fm.Metadata != nil {
		n += cache.StringMapBytes(fm.Metadata)
	}
	n += cache.AnyBytes(fm.Extra) + cache.AnyBytes(fm.Raw) + cache.AllocBytes(cap(fm.JSON))
	return n + problemsBytes(p.Problems)
}

func notesBytes(p *skillmd.Problems) int64 {
	if p == nil {
		return 0
	}
	return problemsBytesOf + problemsBytes(*p)
}

var problemsBytesOf = cache.AllocBytes(int(unsafe.Sizeof(skillmd.Problems{})))

func problemsBytes(p skillmd.Problems) int64 {
	return cache.StringsBytes(p.Errors) + cache.StringsBytes(p.Warnings)
}

// manifestHeldBytes estimates the heap m keeps alive.
func manifestHeldBytes(m *Manifest) int64 {
	if m == nil {
		return 0
	}
	n := manifestBytes + cache.AllocBytes(int(int64(cap(m.Files))*manifestFileBytes)) + cache.AllocBytes(len(m.Digest))
	text := 0 // the files' paths and digests are parts of one string (ManifestOf)
	for _, f := range m.Files {
		text += len(f.Path) + len(f.SHA256)
	}
	return n + cache.AllocBytes(text)
}
