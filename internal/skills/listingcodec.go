package skills

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// A cached listing is a compact binary record (a listing may hold
// --skills.max-objects entries, and every replica decodes it once per TTL):
//
//	version byte (listingVersion)
//	gen     8 bytes, big endian
//	made    varint, unix nanoseconds
//	count   uvarint
//	count × { key without the prefix: uvarint length + bytes;
//	          size: varint; etag: uvarint length + bytes;
//	          mod time: varint unix nanoseconds, 0 for none }
const listingVersion = 1

// minObjectBytes is the fewest bytes one encoded object takes; it bounds
// the count a record may claim before anything is allocated.
const minObjectBytes = 4

var errBadListing = errors.New("malformed cached listing")

func encodeListing(l *listing, prefix string) ([]byte, error) {
	n := 1 + 8 + binary.MaxVarintLen64*2
	for _, o := range l.objs {
		n += len(o.Key) - len(prefix) + len(o.ETag) + 4*binary.MaxVarintLen64
	}
	b := make([]byte, 0, n)
	b = append(b, listingVersion)
	b = binary.BigEndian.AppendUint64(b, l.gen)
	b = binary.AppendVarint(b, l.made.UnixNano())
	b = binary.AppendUvarint(b, uint64(len(l.objs)))
	for _, o := range l.objs {
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
	return b, nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeListing reads a record written by encodeListing, refusing one that
// holds more than maxObjects objects or is malformed in any way.
func decodeListing(b []byte, prefix string, maxObjects int) (*listing, error) {
	d := decoder{b: b}
	if v := d.byte(); v != listingVersion {
		return nil, fmt.Errorf("%w: version %d", errBadListing, v)
	}
	l := &listing{gen: d.uint64(), made: time.Unix(0, d.varint())}
	count := d.uvarint()
	if d.err != nil || count > uint64(maxObjects) || count > uint64(len(d.b))/minObjectBytes {
		return nil, fmt.Errorf("%w: header", errBadListing)
	}
	l.objs = make([]objstore.Object, count)
	for i := range l.objs {
		o := &l.objs[i]
		o.Key = prefix + d.string()
		o.Size = d.varint()
		o.ETag = d.string()
		if mod := d.varint(); mod != 0 {
			o.ModTime = time.Unix(0, mod).UTC()
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, fmt.Errorf("%w: objects", errBadListing)
	}
	return l, nil
}

// decoder reads a record; after the first error every read returns zero.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() { d.err, d.b = errBadListing, nil }

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
