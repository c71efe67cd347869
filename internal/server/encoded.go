package server

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// encoded returns m, empty but for b, a whole encoding of a message of m's
// type, held as its unknown fields. Proto marshals unknown fields as they
// are, so a reply the catalog kept encoded (Catalog.PageReply and its kin)
// goes on the wire without being built or encoded again; whoever receives
// it decodes the real fields. Nothing in this process reads the fields of
// such a reply: the interceptors do not, and the gateway and MCP call the
// handlers over the loopback, which decodes. b is shared and never written.
func encoded[M proto.Message](m M, b []byte) M {
	m.ProtoReflect().SetUnknown(b)
	return m
}

// listDigestField is ListSkillsResponse.library_digest's number.
var listDigestField = (&skillsvcv1.ListSkillsResponse{}).ProtoReflect().Descriptor().Fields().ByName("library_digest").Number()

// stringField is the last value of the top-level string field num of the
// encoded message b ("" when absent or b is malformed): what a reply kept
// encoded says, without decoding the rest.
func stringField(b []byte, num protowire.Number) string {
	var v string
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return ""
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			s, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return ""
			}
			v, b = string(s), b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(n, typ, b)
		if m < 0 {
			return ""
		}
		b = b[m:]
	}
	return v
}
