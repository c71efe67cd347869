// Package server exposes skillsvc's packages over gRPC: request validation
// and proto conversion in the handlers, and the interceptor chain (recovery,
// logging, the one error→status table, authentication) in Options.
package server
