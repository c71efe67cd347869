// Package binrec reads and writes the compact binary records the library
// index keeps in the shared cache and the bucket: fixed-width integers,
// varints and length-prefixed strings. A Reader stops at the first fault,
// so a decoder checks for one once per section instead of after every
// field.
package binrec

import "encoding/binary"

// AppendString appends s as a uvarint length and its bytes.
func AppendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// Reader reads a record; after the first fault every read returns zero and
// Err returns the error it was made with.
type Reader struct {
	b   []byte
	bad error
	err error
}

// NewReader reads b, failing with bad.
func NewReader(b []byte, bad error) *Reader { return &Reader{b: b, bad: bad} }

// Err is nil, or the reader's error after a read past the end or a
// malformed varint.
func (d *Reader) Err() error { return d.err }

// Len is how many bytes are left unread.
func (d *Reader) Len() int { return len(d.b) }

func (d *Reader) fail() { d.err, d.b = d.bad, nil }

// Byte reads one byte.
func (d *Reader) Byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// Uint64 reads 8 bytes, big endian.
func (d *Reader) Uint64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

// Varint reads a signed varint.
func (d *Reader) Varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Uvarint reads an unsigned varint.
func (d *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Bytes returns the next n bytes, which stay part of the record.
func (d *Reader) Bytes(n int) []byte {
	if n > len(d.b) {
		d.fail()
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// String reads what AppendString wrote.
func (d *Reader) String() string {
	n := d.Uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
