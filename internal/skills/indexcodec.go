package skills

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
//	gen     8 bytes, big endian
//	listed  varint, unix nanoseconds
//	count   uvarint
//	count × { key without the prefix: uvarint length + bytes;
//	          size: varint; etag: uvarint length + bytes;
//	          mod time: varint unix nanoseconds, 0 for none }
//	heads   uvarint
//	heads × { object number: uvarint; head: uvarint length + bytes }
const indexVersion = 2

// minObjectBytes is the fewest bytes one encoded object takes; it bounds
// the count a record may claim before anything is allocated.
const minObjectBytes = 4

var errBadIndex = errors.New("malformed library index")

func encodeIndex(x *index, prefix string) ([]byte, error) {
	n := 1 + 8 + binary.MaxVarintLen64*3
	for _, o := range x.objs {
		n += len(o.Key) - len(prefix) + len(o.ETag) + 4*binary.MaxVarintLen64
	}
	for _, h := range x.heads {
		n += len(h) + 2*binary.MaxVarintLen64
	}
	b := make([]byte, 0, n)
	b = append(b, indexVersion)
	b = binary.BigEndian.AppendUint64(b, x.gen)
	b = binary.AppendVarint(b, x.listed.UnixNano())
	b = binary.AppendUvarint(b, uint64(len(x.objs)))
	for _, o := range x.objs {
		rel, ok := strings.CutPrefix(o.Key, prefix)
		if !ok {
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
	b = binary.AppendUvarint(b, uint64(len(x.heads)))
	for i, o := range x.objs {
		if h, ok := x.heads[o.Key]; ok {
			b = binary.AppendUvarint(b, uint64(i))
			b = appendString(b, string(h))
		}
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeIndex reads a record written by encodeIndex, refusing one that
// holds more than maxObjects objects or is malformed in any way.
func decodeIndex(b []byte, prefix string, maxObjects int) (*index, error) {
	d := decoder{b: b}
	if v := d.byte(); v != indexVersion {
		return nil, fmt.Errorf("%w: version %d", errBadIndex, v)
	}
	x := &index{gen: d.uint64(), listed: time.Unix(0, d.varint())}
	count := d.uvarint()
	if d.err != nil || count > uint64(maxObjects) || count > uint64(len(d.b))/minObjectBytes {
		return nil, fmt.Errorf("%w: header", errBadIndex)
	}
	x.objs = make([]objstore.Object, count)
	for i := range x.objs {
		o := &x.objs[i]
		o.Key = prefix + d.string()
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
	x.heads = make(map[string][]byte, nheads)
	last := -1
	for range nheads {
		i := d.uvarint()
		h := d.string()
		if d.err != nil || i >= count || int(i) <= last {
			return nil, fmt.Errorf("%w: heads", errBadIndex)
		}
		last = int(i)
		x.heads[x.objs[i].Key] = []byte(h)
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", errBadIndex)
	}
	return x, nil
}

// A stamp names the newest index of a library in the shared cache: its
// generation and when it was listed. It is tiny, so a replica holding an
// index checks it instead of fetching the index again.
type stamp struct {
	gen    uint64
	listed time.Time
}

func encodeStamp(s stamp) []byte {
	b := binary.BigEndian.AppendUint64(nil, s.gen)
	return binary.BigEndian.AppendUint64(b, uint64(s.listed.UnixNano()))
}

func decodeStamp(b []byte) (stamp, bool) {
	if len(b) != 16 {
		return stamp{}, false
	}
	return stamp{gen: binary.BigEndian.Uint64(b), listed: time.Unix(0, int64(binary.BigEndian.Uint64(b[8:])))}, true
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
