// Package inproc is a gRPC channel whose calls are function calls in this
// process: services register on it as on a grpc.Server, clients call them
// through it as through a grpc.ClientConn, and each call runs the server's
// interceptors and stats handlers as a call over the network would, with
// the caller's metadata arriving as incoming metadata, the handler's header
// and trailer delivered to the caller, and each message encoded and decoded
// once (so neither side shares the other's message). There is no
// connection, no HTTP/2 framing and no server to start or stop. The
// server package builds one with its interceptor chain (server.InProcess),
// for the JSON gateway.
package inproc
