// Package gateway serves every RPC of the services as JSON over HTTP,
// for curl and for languages without gRPC:
//
//	POST /skillsvc.v1.SkillsService/ListSkills
//	{"pageSize": 20}
//
// The request body is the request message in the protobuf JSON mapping
// (field names in lowerCamelCase or as in the proto); the answer is the
// response message, or a google.rpc.Status ({"code", "message",
// "details"}) with the HTTP status grpc-gateway maps its code to. The
// handlers are generated from the protos by protoc-gen-grpc-gateway and call
// the services through a channel: given server.InProcess's, every JSON call
// runs the same interceptors as a gRPC call (authentication once, from the
// forwarded headers; limits, audit, the error table) as a function call in
// this process, with no second gRPC server and no HTTP/2 framing, and no RPC
// is implemented twice.
//
// Why grpc-gateway over an in-process channel rather than connect-go:
// connect-go would drop the generated gateway, but its JSON errors
// ({"code": "not_found"}), its HTTP status table and its streaming
// envelope differ from grpc-gateway's, which clients already parse
// (google.rpc.Status bodies, grpc-gateway's HTTP statuses, Retry-After,
// 507, newline-delimited stream results); keeping them would mean
// rewriting what grpc-gateway does. The channel keeps every wire format as
// it was and removes the server. It is our own (internal/inproc):
// grpchan's inprocgrpc does the same, but links jhump/protoreflect's
// dynamic messages, 1.3 MB more binary.
package gateway
