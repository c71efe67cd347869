// Package certs serves TLS for skillsvc's gRPC and HTTP listeners from a
// certificate, key and optional client CA bundle on disk, kept current by
// filewatch: a rotated certificate or CA bundle applies to the next
// handshake without a restart, and a rotation caught half-done (a new
// certificate whose key has not been written yet) keeps the previous pair
// until both files match. With a client CA bundle every client must present
// a certificate signed by one of its CAs. Config registers the --tls.*
// flags; New loads the files and fails at start on anything unusable;
// Server.TLSConfig is what credentials.NewTLS and http.Server take. The
// certstest package issues throwaway CAs and certificates for tests.
package certs
