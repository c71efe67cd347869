package libindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/binrec"
	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
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
//	digests × { object number: uvarint; size: varint; sha256: 32 bytes;
//	            mode: uvarint, 0o644 or 0o755 }
//
// Object numbers increase within each section. Keys are stored relative to
// the prefix, so a record decoded for another library would list that
// library's skills as the caller's own: the record names its library, and
// a decoder for another refuses it (version 3 on; a record of version 2
// named none). Version 4 added the digests, version 5 when the content
// last changed (Index.Changed), which sets how often it is revalidated,
// version 6 each file's mode.
const indexVersion = 6

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
		b = binrec.AppendString(b, rel)
		b = binary.AppendVarint(b, o.Size)
		b = binrec.AppendString(b, o.ETag)
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
		b = binrec.AppendString(b, string(h.Head))
	}
	b = binary.AppendUvarint(b, uint64(len(x.Digests)))
	for _, dg := range x.Digests {
		i, ok := x.object(dg.Key)
		if !ok {
			return nil, fmt.Errorf("a digest of %q, which is not listed", dg.Key)
		}
		b = binary.AppendUvarint(b, uint64(i))
		b = binary.AppendVarint(b, int64(dg.Size))
		b = append(b, dg.Sum[:]...)
		b = binary.AppendUvarint(b, uint64(dg.Mode))
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

// appendLibrary names l in a record.
func appendLibrary(b []byte, l Layer) []byte {
	return binrec.AppendString(binrec.AppendString(b, l.Tag), l.Prefix)
}

// readLibrary reads the name appendLibrary wrote and checks that it is l's.
func readLibrary(d *binrec.Reader, l Layer) error {
	tag, prefix := d.String(), d.String()
	switch {
	case d.Err() != nil:
		return d.Err()
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
	d := binrec.NewReader(b, errBadIndex)
	st, err := readHeader(d, l)
	if err != nil {
		return nil, err
	}
	x := &Index{Gen: st.Gen, Listed: st.Listed}
	x.Changed = fromUnixNano(d.Varint())
	count := d.Uvarint()
	if d.Err() != nil || count > uint64(maxObjects) || count > uint64(d.Len())/minObjectBytes {
		return nil, fmt.Errorf("%w: header", errBadIndex)
	}
	x.Objs = make([]objstore.Object, count)
	for i := range x.Objs {
		o := &x.Objs[i]
		if rel := d.String(); rel == sideRel && l.Side != "" {
			o.Key = l.Side
		} else {
			o.Key = prefix + rel
		}
		o.Size = d.Varint()
		o.ETag = d.String()
		if mod := d.Varint(); mod != 0 {
			o.ModTime = time.Unix(0, mod).UTC()
		}
	}
	nheads := d.Uvarint()
	if d.Err() != nil || nheads > count {
		return nil, fmt.Errorf("%w: objects", errBadIndex)
	}
	x.Heads = make([]Head, 0, nheads)
	last := -1
	for range nheads {
		i := d.Uvarint()
		h := d.String()
		if d.Err() != nil || i >= count || int(i) <= last {
			return nil, fmt.Errorf("%w: heads", errBadIndex)
		}
		last = int(i)
		x.Heads = append(x.Heads, Head{Key: x.Objs[i].Key, Head: []byte(h)})
	}
	ndigests := d.Uvarint()
	if d.Err() != nil || ndigests > count {
		return nil, fmt.Errorf("%w: digests", errBadIndex)
	}
	x.Digests = make([]KeyDigest, 0, ndigests)
	last = -1
	for range ndigests {
		i := d.Uvarint()
		size := d.Varint()
		dg := Digest{Size: int32(size)}
		copy(dg.Sum[:], d.Bytes(len(dg.Sum)))
		dg.Mode = fs.FileMode(d.Uvarint())
		if d.Err() != nil || i >= count || int(i) <= last || size < 0 || size > skillmd.MaxSkillBytes || dg.Mode == 0 || filemode.Normal(dg.Mode) != dg.Mode {
			return nil, fmt.Errorf("%w: digests", errBadIndex)
		}
		last = int(i)
		x.Digests = append(x.Digests, KeyDigest{Key: x.Objs[i].Key, Digest: dg})
	}
	if d.Err() != nil || d.Len() != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", errBadIndex)
	}
	return x, nil
}

// readHeader reads a record's version, library, generation and listing
// time, refusing another version or library.
func readHeader(d *binrec.Reader, l Layer) (Stamp, error) {
	if v := d.Byte(); d.Err() != nil {
		return Stamp{}, fmt.Errorf("%w: empty", errBadIndex)
	} else if v != indexVersion {
		return Stamp{}, fmt.Errorf("%w: version %d", errIndexVersion, v)
	}
	if err := readLibrary(d, l); err != nil {
		return Stamp{}, err
	}
	return Stamp{Gen: d.Uint64(), Listed: time.Unix(0, d.Varint())}, nil
}

// headerBytes bounds the bytes of a record of l up to its listing time:
// enough for decodeHeader.
func headerBytes(l Layer) int64 {
	return int64(1 + 2*binary.MaxVarintLen64 + len(l.Tag) + len(l.Prefix) + 8 + binary.MaxVarintLen64)
}

// decodeHeader reads the generation and listing time of a record for l
// from its first bytes (headerBytes of them, or fewer).
func decodeHeader(b []byte, l Layer) (Stamp, error) {
	d := binrec.NewReader(b, errBadIndex)
	st, err := readHeader(d, l)
	if err == nil && d.Err() != nil {
		err = fmt.Errorf("%w: header", errBadIndex)
	}
	return st, err
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
	d := binrec.NewReader(b, errBadIndex)
	s := Stamp{Gen: d.Uint64(), Listed: time.Unix(0, int64(d.Uint64()))}
	if err := readLibrary(d, l); err != nil {
		return Stamp{}, err
	}
	if d.Len() != 0 {
		return Stamp{}, fmt.Errorf("%w: trailing bytes", errBadIndex)
	}
	return s, nil
}
