package server

import (
	"google.golang.org/protobuf/proto"
)

// encoded returns m with b, a whole encoding of a message of m's type (of
// the fields m leaves unset), held as its unknown fields. Proto marshals
// unknown fields as they are, after the fields m sets, so a reply kept
// encoded (internal/replies, Skills.pageReply and its kin) goes on the wire
// without being built or encoded again, with whatever this call adds (a
// library digest); whoever receives it decodes the real fields. Nothing in
// this process reads the fields of such a reply: the interceptors do not,
// and the gateway and MCP call the handlers over the loopback, which
// decodes. b is shared and never written.
func encoded[M proto.Message](m M, b []byte) M {
	m.ProtoReflect().SetUnknown(b)
	return m
}
