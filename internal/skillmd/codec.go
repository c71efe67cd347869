package skillmd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"
)

// CodecVersion names the encoding of EncodeParsed, its first byte: bump it
// when the layout changes (a field of Frontmatter or Problem added, a
// value kind), so a cache shared with replicas of another version never
// hands them a value they would misread.
const CodecVersion = 1

// Bounds of a decoded value: a frontmatter nests at most maxYAMLDepth
// levels, and Raw and Extra sit one level below a Frontmatter.
const maxCodecDepth = maxYAMLDepth + 4

var errCodec = errors.New("parsed SKILL.md head: malformed encoding")

// EncodeParsed appends to dst a compact binary encoding of what
// ParseSkillMD returned for a SKILL.md, for a cache shared by replicas:
// decoding it is a small fraction of parsing the YAML again.
// DecodeParsed(EncodeParsed(fm, p)) deep-equals (fm, p), nil and empty
// slices and maps kept apart. The encoding is canonical (map keys sorted, the
// shortest varints), so equal values encode to equal bytes. It fails on a
// value ParseSkillMD never makes: an Extra or Raw value of a type other
// than nil, bool, int, int64, uint64, float64, string, []any and
// map[string]any, nesting deeper than ParseSkillMD allows, or Problems
// whose Errors and Warnings are not the messages of its List.
func EncodeParsed(dst []byte, fm Frontmatter, p Problems) ([]byte, error) {
	e := encoder{b: append(dst, CodecVersion)}
	for _, s := range []string{fm.Name, fm.DisplayName, fm.Description, fm.License, fm.Version, fm.Compatibility} {
		e.str(s)
	}
	e.count(len(fm.AllowedTools), fm.AllowedTools == nil)
	for _, s := range fm.AllowedTools {
		e.str(s)
	}
	e.count(len(fm.Metadata), fm.Metadata == nil)
	for _, k := range sortedKeys(fm.Metadata) {
		e.str(k)
		e.str(fm.Metadata[k])
	}
	e.anyMap(fm.Extra, 1)
	e.anyMap(fm.Raw, 1)
	if !utf8.Valid(fm.JSON) {
		return dst, errors.New("parsed SKILL.md head: JSON is not UTF-8")
	}
	e.count(len(fm.JSON), fm.JSON == nil)
	e.b = append(e.b, fm.JSON...)
	if err := checkProblems(p); err != nil {
		return dst, err
	}
	// Errors and Warnings are List's messages: decoding makes them again.
	e.count(len(p.List), p.List == nil)
	for _, pr := range p.List {
		e.b = append(e.b, byte(pr.Severity))
		for _, s := range []string{pr.File, pr.Field, pr.Rule, pr.Value, pr.Message} {
			e.str(s)
		}
	}
	if e.err != nil {
		return dst, e.err
	}
	return e.b, nil
}

// checkProblems returns an error unless p is what Add makes of p.List.
func checkProblems(p Problems) error {
	var errs, warns int
	for _, pr := range p.List {
		switch pr.Severity {
		case SeverityError:
			if errs >= len(p.Errors) || p.Errors[errs] != pr.Message {
				return errors.New("parsed SKILL.md head: Errors disagree with List")
			}
			errs++
		case SeverityWarning:
			if warns >= len(p.Warnings) || p.Warnings[warns] != pr.Message {
				return errors.New("parsed SKILL.md head: Warnings disagree with List")
			}
			warns++
		default:
			return fmt.Errorf("parsed SKILL.md head: a problem of severity %d", pr.Severity)
		}
	}
	// Add leaves a slice nil until it adds to it.
	if errs != len(p.Errors) || warns != len(p.Warnings) || (errs == 0) != (p.Errors == nil) || (warns == 0) != (p.Warnings == nil) {
		return errors.New("parsed SKILL.md head: Errors and Warnings disagree with List")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Kinds of value in Extra and Raw.
const (
	kindNil byte = iota
	kindFalse
	kindTrue
	kindFloat // 8 bytes, little endian: every bit, NaN's too
	kindString
	kindList
	kindMap
	kindInt    // zigzag varint
	kindInt64  // zigzag varint
	kindUint64 // varint
)

type encoder struct {
	b   []byte
	err error
}

func (e *encoder) uvarint(n uint64) { e.b = binary.AppendUvarint(e.b, n) }

func (e *encoder) str(s string) {
	if !utf8.ValidString(s) {
		e.err = errors.New("parsed SKILL.md head: a string is not UTF-8")
	}
	e.uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// count writes the length of a slice or map, 0 for nil.
func (e *encoder) count(n int, isNil bool) {
	if isNil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(n) + 1)
}

func (e *encoder) anyMap(m map[string]any, depth int) {
	e.count(len(m), m == nil)
	for _, k := range sortedKeys(m) {
		e.str(k)
		e.value(m[k], depth+1)
	}
}

func (e *encoder) value(v any, depth int) {
	if depth > maxCodecDepth {
		e.err = fmt.Errorf("parsed SKILL.md head: nests deeper than %d levels", maxCodecDepth)
		return
	}
	switch x := v.(type) {
	case nil:
		e.b = append(e.b, kindNil)
	case bool:
		if x {
			e.b = append(e.b, kindTrue)
		} else {
			e.b = append(e.b, kindFalse)
		}
	case float64:
		e.b = binary.LittleEndian.AppendUint64(append(e.b, kindFloat), math.Float64bits(x))
	case string:
		e.b = append(e.b, kindString)
		e.str(x)
	case []any:
		e.b = append(e.b, kindList)
		e.count(len(x), x == nil)
		for _, el := range x {
			e.value(el, depth+1)
		}
	case map[string]any:
		e.b = append(e.b, kindMap)
		e.anyMap(x, depth)
	case int:
		e.b = binary.AppendVarint(append(e.b, kindInt), int64(x))
	case int64:
		e.b = binary.AppendVarint(append(e.b, kindInt64), x)
	case uint64:
		e.b = binary.AppendUvarint(append(e.b, kindUint64), x)
	default:
		e.err = fmt.Errorf("parsed SKILL.md head: a value of type %T", v)
	}
}

// DecodeParsed decodes what EncodeParsed made. Its input comes from a
// shared cache, so it trusts none of it: every length is checked against
// the bytes left, nesting is bounded, strings must be UTF-8, and anything
// but the canonical encoding of a value (map keys in order, shortest
// varints, no bytes left over) is an error, never a panic.
func DecodeParsed(b []byte) (Frontmatter, Problems, error) {
	var fm Frontmatter
	var p Problems
	if len(b) == 0 || b[0] != CodecVersion {
		return fm, p, fmt.Errorf("%w: not version %d", errCodec, CodecVersion)
	}
	d := decoder{b: b[1:]}
	for _, s := range []*string{&fm.Name, &fm.DisplayName, &fm.Description, &fm.License, &fm.Version, &fm.Compatibility} {
		*s = d.str()
	}
	if n, ok := d.count(1); ok {
		fm.AllowedTools = make([]string, n)
		for i := range fm.AllowedTools {
			fm.AllowedTools[i] = d.str()
		}
	}
	if n, ok := d.count(2); ok {
		fm.Metadata = make(map[string]string, n)
		last := ""
		for i := range n {
			k := d.str()
			if i > 0 && k <= last {
				d.fail("metadata keys out of order")
			}
			last = k
			fm.Metadata[k] = d.str()
		}
	}
	fm.Extra = d.anyMap(1)
	fm.Raw = d.anyMap(1)
	if n, ok := d.count(1); ok {
		if js := d.take(n); utf8.Valid(js) {
			fm.JSON = append([]byte{}, js...)
		} else {
			d.fail("JSON is not UTF-8")
		}
	}
	if n, ok := d.count(6); ok {
		p.List = make([]Problem, 0, n)
		for range n {
			var pr Problem
			pr.Severity = Severity(d.byte())
			if d.err == nil && pr.Severity != SeverityError && pr.Severity != SeverityWarning {
				d.fail("unknown severity")
			}
			for _, s := range []*string{&pr.File, &pr.Field, &pr.Rule, &pr.Value, &pr.Message} {
				*s = d.str()
			}
			if d.err != nil {
				break
			}
			p.Add(pr)
		}
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail("bytes left over")
	}
	if d.err != nil {
		return Frontmatter{}, Problems{}, d.err
	}
	return fm, p, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errCodec, what)
	}
	d.b = nil // every later read fails
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	n, size := binary.Uvarint(d.b)
	if size <= 0 || size != uvarintLen(n) {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[size:]
	return n
}

func (d *decoder) varint() int64 {
	n, size := binary.Varint(d.b)
	if size <= 0 || size != uvarintLen(zigzag(n)) {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[size:]
	return n
}

// zigzag is how binary.AppendVarint maps n to the varint it writes.
func zigzag(n int64) uint64 { return uint64(n)<<1 ^ uint64(n>>63) }

func uvarintLen(n uint64) int {
	size := 1
	for ; n >= 0x80; n >>= 7 {
		size++
	}
	return size
}

// take returns the next n bytes, which must be there.
func (d *decoder) take(n int) []byte {
	if n > len(d.b) {
		d.fail("truncated")
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("truncated")
		return ""
	}
	s := d.take(int(n))
	if !utf8.Valid(s) {
		d.fail("a string is not UTF-8")
		return ""
	}
	return string(s)
}

// count reads the length of a slice or map (ok false for nil) whose
// elements take at least least bytes each, so no count asks for more than
// the bytes left can hold.
func (d *decoder) count(least int) (n int, ok bool) {
	c := d.uvarint()
	if c == 0 {
		return 0, false
	}
	if c-1 > uint64(len(d.b)/least) {
		d.fail("a count larger than the bytes left")
		return 0, false
	}
	return int(c - 1), d.err == nil
}

func (d *decoder) anyMap(depth int) map[string]any {
	n, ok := d.count(2) // a key's length and a value's kind
	if !ok {
		return nil
	}
	m := make(map[string]any, n)
	last := ""
	for i := range n {
		k := d.str()
		if i > 0 && k <= last {
			d.fail("map keys out of order")
		}
		last = k
		v := d.value(depth + 1)
		if d.err != nil {
			return nil
		}
		m[k] = v
	}
	return m
}

func (d *decoder) value(depth int) any {
	if depth > maxCodecDepth {
		d.fail("nests too deep")
		return nil
	}
	switch k := d.byte(); k {
	case kindNil:
		return nil
	case kindFalse:
		return false
	case kindTrue:
		return true
	case kindFloat:
		b := d.take(8)
		if b == nil {
			return nil
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case kindString:
		return d.str()
	case kindList:
		n, ok := d.count(1)
		if !ok {
			if d.err == nil {
				return []any(nil)
			}
			return nil
		}
		l := make([]any, n)
		for i := range l {
			if l[i] = d.value(depth + 1); d.err != nil {
				return nil
			}
		}
		return l
	case kindMap:
		m := d.anyMap(depth)
		if d.err != nil {
			return nil
		}
		return m
	case kindInt:
		n := d.varint()
		if int64(int(n)) != n {
			d.fail("an int out of range")
		}
		return int(n)
	case kindInt64:
		return d.varint()
	case kindUint64:
		return d.uvarint()
	default:
		d.fail("unknown kind of value")
		return nil
	}
}
