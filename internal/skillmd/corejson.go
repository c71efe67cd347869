package skillmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// The YAML 1.2 core schema's plain scalars (yaml.org/spec/1.2.2 §10.3.2),
// which is how hosts' YAML parsers (JavaScript's yaml, Python's in 1.2 mode)
// read frontmatter. yaml.v3 resolves more (timestamps, 1_000, 0b101), and
// decoding through Go values would turn 1.0 into 1 and 2^53+1 into a float;
// the skills extension wants the frontmatter exactly as written.
var (
	coreNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	coreBool  = regexp.MustCompile(`^(?:true|True|TRUE|false|False|FALSE)$`)
	coreInt   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	coreOct   = regexp.MustCompile(`^0o[0-7]+$`)
	coreHex   = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	coreFloat = regexp.MustCompile(`^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$`)
	coreInf   = regexp.MustCompile(`^[-+]?\.(?:inf|Inf|INF)$`)
	coreNaN   = regexp.MustCompile(`^\.(?:nan|NaN|NAN)$`)
)

// coreJSON renders a frontmatter mapping as JSON text the way the core
// schema reads it: numbers keep every digit (a large integer is not
// rounded, 1.0 stays 1.0), dates stay strings. The node tree is already
// bounded and alias-free (safeYAML checks it first).
func coreJSON(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	if err := writeCoreJSON(&b, n); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCoreJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			// A key is text in JSON whatever YAML makes of it, as in
			// JavaScript, where object keys are strings.
			writeJSONString(b, n.Content[i].Value)
			b.WriteByte(':')
			if err := writeCoreJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCoreJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		b.WriteString(coreScalar(n))
	default:
		return fmt.Errorf("frontmatter holds a YAML node of kind %d", n.Kind)
	}
	return nil
}

// coreScalar is the JSON text of a scalar. Quoted and block scalars are
// text; a tag written by the author (!!str, !!int) is honoured where JSON
// can hold the value.
func coreScalar(n *yaml.Node) string {
	v := n.Value
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return jsonString(v)
	}
	if n.Style&yaml.TaggedStyle != 0 {
		switch n.ShortTag() {
		case "!!str", "!!binary", "!!timestamp":
			return jsonString(v)
		case "!!null":
			return "null"
		}
	}
	switch {
	case coreNull.MatchString(v):
		return "null"
	case coreBool.MatchString(v):
		return strings.ToLower(v)
	case coreInt.MatchString(v):
		return decimal(v, 10)
	case coreOct.MatchString(v):
		return decimal(v[2:], 8)
	case coreHex.MatchString(v):
		return decimal(v[2:], 16)
	case coreFloat.MatchString(v):
		return jsonFloat(v)
	case coreInf.MatchString(v), coreNaN.MatchString(v):
		// JSON has no infinities or NaN: kept as written.
		return jsonString(v)
	}
	return jsonString(v)
}

// decimal is the integer digits in base as a JSON number, every digit kept.
func decimal(digits string, base int) string {
	var z big.Int
	if _, ok := z.SetString(digits, base); !ok {
		return jsonString(digits)
	}
	return z.String()
}

// jsonFloat rewrites a core-schema float as a JSON number with the same
// digits: JSON wants no '+', no leading zeros, and digits on both sides of
// a point.
func jsonFloat(v string) string {
	sign := ""
	switch v[0] {
	case '-':
		sign, v = "-", v[1:]
	case '+':
		v = v[1:]
	}
	mant, exp := v, ""
	if i := strings.IndexAny(v, "eE"); i >= 0 {
		mant, exp = v[:i], v[i:]
	}
	whole, frac, dot := strings.Cut(mant, ".")
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	out := sign + whole
	if dot && frac != "" {
		out += "." + frac
	} else if dot {
		out += ".0"
	}
	return out + exp
}

func jsonString(s string) string {
	var b bytes.Buffer
	writeJSONString(&b, s)
	return b.String()
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)           // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}
