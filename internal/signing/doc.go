// Package signing signs and verifies skill versions: a keyed signature of a
// version's manifest digest in the Sigstore bundle format (v0.3, a DSSE
// envelope holding an in-toto statement whose one subject is the skill and
// its manifest digest), made and checked with sigstore's Go libraries. It
// also holds the signature policy: which libraries require a valid
// signature from which named keys before a version goes live.
//
// A signature proves that the holder of a key vouched for exactly these
// files (their paths, sizes and digests); it says nothing about whether
// they are safe, and nothing about who uploaded them.
package signing
