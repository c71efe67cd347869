package libindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// An index is a compact binary record, in the shared cache and persisted in
// the bucket (it may hold --skills.max-objects entries, and every replica
// that loads it decodes it):
//
//	version byte (indexVersion)
//	library the layer's tag and prefix, each uvarint length + bytes
//	gen     8 bytes, big endian
//	listed  varint, unix nanoseconds
//	changed varint, unix nanoseconds, 0 for unknown
//	count   uvarint
//	count × { key without the prefix: uvarint length + bytes;
//	          size: varint; etag: uvarint length + bytes;
//	          mod time: varint unix nanoseconds, 0 for none }
//	heads   uvarint
//	heads × { object number: uvarint; head: uvarint length + bytes }
//	digests uvarint
//	digests × { object number: uvarint; size: varint; sha256: 32 bytes }
//
// Object numbers increase within each section. Keys are stored relative to
// the prefix, so a record decoded for another library would list that
// library's skills as the caller's own: the record names its library, and
// a decoder for another refuses it (version 3 on; a record of version 2
// named none). Version 4 added the digests, version 5 when the content
// last changed (Index.Changed), which sets how often it is revalidated.
const indexVersion = 5

// minObjectBytes is the fewest bytes one encoded object takes; it bounds
// the count a record may claim before anything is allocated.
const minObjectBytes = 4

var (
	errBadIndex = errors.New("malformed library index")
	// errIndexVersion: a record of another version, an older replica's,
	// say; a miss, not a fault.
	errIndexVersion = fmt.Errorf("%w: another version", errBadIndex)
	// errOtherLibrary: a well-formed record that describes another library
	// (or user) than the one under whose key it was found.
	errOtherLibrary = errors.New("describes another library")
)

// sideRel stands for Layer.Side among the relative keys: no listed key is
// invalid UTF-8, as it is.
const sideRel = "\xffside"

func encodeIndex(x *Index, l Layer) ([]byte, error) {
	prefix := l.Prefix
	n := 1 + len(l.Tag) + len(prefix) + 8 + binary.MaxVarintLen64*5
	for _, o := range x.Objs {
		n += len(o.Key) - len(prefix) + len(o.ETag) + 4*binary.MaxVarintLen64
	}
	for _, h := range x.Heads {
		n += len(h.Head) + 2*binary.MaxVarintLen64
	}
	n += len(x.Digests) * digestBytes
	b := make([]byte, 0, n)
	b = append(b, indexVersion)
	b = appendLibrary(b, l)
	b = binary.BigEndian.AppendUint64(b, x.Gen)
	b = binary.AppendVarint(b, x.Listed.UnixNano())
	b = binary.AppendVarint(b, unixNano(x.Changed))
	b = binary.AppendUvarint(b, uint64(len(x.Objs)))
	for _, o := range x.Objs {
		rel, ok := strings.CutPrefix(o.Key, prefix)
		switch {
		case o.Key == l.Side && l.Side != "":
			rel = sideRel
		case !ok:
			return nil, fmt.Errorf("key %q is not under the listed prefix", o.Key)
		}
		b = appendString(b, rel)
		b = binary.AppendVarint(b, o.Size)
		b = appendString(b, o.ETag)
		var mod int64
		if !o.ModTime.IsZero() {
			mod = o.ModTime.UnixNano()
		}
		b = binary.AppendVarint(b, mod)
	}
	// Heads and digests name their object by its number in Objs, both
	// being in key order.
	b = binary.AppendUvarint(b, uint64(len(x.Heads)))
	for _, h := range x.Heads {
		i, ok := x.object(h.Key)
		if !ok {
			return nil, fmt.Errorf("a head of %q, which is not listed", h.Key)
		}
		b = binary.AppendUvarint(b, uint64(i))
		b = appendString(b, string(h.Head))
	}
	b = binary.AppendUvarint(b, uint64(len(x.Digests)))
	for _, dg := range x.Digests {
		i, ok := x.object(dg.Key)
		if !ok {
			return nil, fmt.Errorf("a digest of %q, which is not listed", dg.Key)
		}
		b = binary.AppendUvarint(b, uint64(i))
		b = binary.AppendVarint(b, dg.Size)
		b = append(b, dg.Sum[:]...)
	}
	return b, nil
}

// unixNano is t in unix nanoseconds, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromUnixNano reads what unixNano wrote.
func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendLibrary names l in a record.
func appendLibrary(b []byte, l Layer) []byte {
	return appendString(appendString(b, l.Tag), l.Prefix)
}

// library reads the name appendLibrary wrote and checks that it is l's.
func (d *decoder) library(l Layer) error {
	tag, prefix := d.string(), d.string()
	switch {
	case d.err != nil:
		return d.err
	case tag != l.Tag || prefix != l.Prefix:
		// The other library's name is for the operator's log only.
		return fmt.Errorf("%w: %s (%q), not %s (%q)", errOtherLibrary, tag, prefix, l.Tag, l.Prefix)
	}
	return nil
}

// DecodeIndex reads a record written by encodeIndex for l, refusing one
// written for another library (errOtherLibrary), by another version
// (errIndexVersion), that holds more than maxObjects objects or is
// malformed in any way.
func DecodeIndex(b []byte, l Layer, maxObjects int) (*Index, error) {
	prefix := l.Prefix
	d := decoder{b: b}
	if v := d.byte(); d.err != nil {
		return nil, fmt.Errorf("%w: empty", errBadIndex)
	} else if v != indexVersion {
		return nil, fmt.Errorf("%w: version %d", errIndexVersion, v)
	}
	if err := d.library(l); err != nil {
		return nil, err
	}
	x := &Index{Gen: d.uint64(), Listed: time.Unix(0, d.varint())}
	x.Changed = fromUnixNano(d.varint())
	count := d.uvarint()
	if d.err != nil || count > uint64(maxObjects) || count > uint64(len(d.b))/minObjectBytes {
		return nil, fmt.Errorf("%w: header", errBadIndex)
	}
	x.Objs = make([]objstore.Object, count)
	for i := range x.Objs {
		o := &x.Objs[i]
		if rel := d.string(); rel == sideRel && l.Side != "" {
			o.Key = l.Side
		} else {
			o.Key = prefix + rel
		}
		o.Size = d.varint()
		o.ETag = d.string()
		if mod := d.varint(); mod != 0 {
			o.ModTime = time.Unix(0, mod).UTC()
		}
	}
	nheads := d.uvarint()
	if d.err != nil || nheads > count {
		return nil, fmt.Errorf("%w: objects", errBadIndex)
	}
	x.Heads = make([]Head, 0, nheads)
	last := -1
	for range nheads {
		i := d.uvarint()
		h := d.string()
		if d.err != nil || i >= count || int(i) <= last {
			return nil, fmt.Errorf("%w: heads", errBadIndex)
		}
		last = int(i)
		x.Heads = append(x.Heads, Head{Key: x.Objs[i].Key, Head: []byte(h)})
	}
	ndigests := d.uvarint()
	if d.err != nil || ndigests > count {
		return nil, fmt.Errorf("%w: digests", errBadIndex)
	}
	x.Digests = make([]KeyDigest, 0, ndigests)
	last = -1
	for range ndigests {
		i := d.uvarint()
		dg := Digest{Size: d.varint()}
		copy(dg.Sum[:], d.bytes(len(dg.Sum)))
		if d.err != nil || i >= count || int(i) <= last || dg.Size < 0 {
			return nil, fmt.Errorf("%w: digests", errBadIndex)
		}
		last = int(i)
		x.Digests = append(x.Digests, KeyDigest{Key: x.Objs[i].Key, Digest: dg})
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", errBadIndex)
	}
	return x, nil
}

// A Stamp names the newest index of a library in the shared cache: its
// generation and when it was listed, then the library, as in an index. It
// is tiny, so a replica holding an index checks it instead of fetching the
// index again.
type Stamp struct {
	Gen    uint64
	Listed time.Time
}

func encodeStamp(s Stamp, l Layer) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16+len(l.Tag)+len(l.Prefix)+2*binary.MaxVarintLen64), s.Gen)
	b = binary.BigEndian.AppendUint64(b, uint64(s.Listed.UnixNano()))
	return appendLibrary(b, l)
}

// DecodeStamp reads a stamp written by encodeStamp for l, refusing one
// written for another library (errOtherLibrary) or malformed.
func DecodeStamp(b []byte, l Layer) (Stamp, error) {
	d := decoder{b: b}
	s := Stamp{Gen: d.uint64(), Listed: time.Unix(0, int64(d.uint64()))}
	if err := d.library(l); err != nil {
		return Stamp{}, err
	}
	if len(d.b) != 0 {
		return Stamp{}, fmt.Errorf("%w: trailing bytes", errBadIndex)
	}
	return s, nil
}

// decoder reads a record; after the first error every read returns zero.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() { d.err, d.b = errBadIndex, nil }

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes returns the next n bytes, which stay part of the record.
func (d *decoder) bytes(n int) []byte {
	if n > len(d.b) {
		d.fail()
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
