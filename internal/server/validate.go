package server

import (
	"context"
	"fmt"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// The proto files turn off the decoder's UTF-8 check (it would answer
// INTERNAL), so every request is checked here instead: a string that is not
// UTF-8 is the caller's mistake, INVALID_ARGUMENT naming the field.

// ValidateUnaryInterceptor checks the request of unary calls.
func ValidateUnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if err := checkRequest(req); err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// ValidateStreamInterceptor checks every message a stream receives.
func ValidateStreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return handler(srv, validatingStream{ss})
	}
}

type validatingStream struct{ grpc.ServerStream }

func (s validatingStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return checkRequest(m)
}

func checkRequest(req any) error {
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
