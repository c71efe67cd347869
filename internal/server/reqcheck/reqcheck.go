// Package reqcheck checks requests where the proto decoder does not: the
// proto files turn off its UTF-8 check (it would answer INTERNAL), and a
// string that is not UTF-8 is the caller's mistake.
package reqcheck

import (
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// Check returns INVALID_ARGUMENT naming the first string field of req (a
// proto message) that is not UTF-8, or nil.
func Check(req any) error {
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	if field := invalidUTF8(m.ProtoReflect(), ""); field != "" {
		return fmt.Errorf("%w: field %s is not valid UTF-8", errkind.InvalidArgument, field)
	}
	return nil
}

// invalidUTF8 returns the path of the first string field, list element or
// map entry of m that is not UTF-8, or "".
func invalidUTF8(m protoreflect.Message, prefix string) string {
	bad := ""
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := prefix + string(fd.Name())
		switch {
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if s, ok := k.Interface().(string); ok && !utf8.ValidString(s) {
					bad = name + "[key]"
				} else {
					bad = invalidValue(fd.MapValue(), mv, fmt.Sprintf("%s[%v]", name, k.Interface()))
				}
				return bad == ""
			})
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && bad == ""; i++ {
				bad = invalidValue(fd, l.Get(i), fmt.Sprintf("%s[%d]", name, i))
			}
		default:
			bad = invalidValue(fd, v, name)
		}
		return bad == ""
	})
	return bad
}

func invalidValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, name string) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if !utf8.ValidString(v.String()) {
			return name
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return invalidUTF8(v.Message(), name+".")
	}
	return ""
}
