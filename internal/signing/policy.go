package signing

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/options"
)

// Config is the signature policy's configuration (--library.signing-keys,
// --library.require-signature).
type Config struct {
	// Keys names public keys: "name=path.pem,name2=awskms://[ENDPOINT]/
	// alias/release", each a PEM file or a KMS key whose public key is
	// fetched once, at load.
	Keys string
	// Require says which libraries need a valid signature by which keys
	// before a version goes live: "shared=release,team:*=release|team,
	// user:alice=alice". A library is "shared", "team:<id>", "team:*",
	// "user:<id>" or "user:*"; the most specific entry applies. Keys are
	// alternatives: any one of them is enough.
	Require string
}

// RegisterFlagsWithPrefix registers the flags.
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.Keys, prefix+"signing-keys", "", "Public keys versions may be signed with, by name: comma-separated name=key (a name of at most "+strconv.Itoa(MaxKeyName)+" bytes), each key a PEM public key file (ECDSA P-256 or Ed25519; cosign generate-key-pair's cosign.pub too) or an AWS KMS key awskms://[ENDPOINT]/KEY_ID_OR_ALIAS (ECC_NIST_P256), whose public key is fetched at start with the AWS SDK's usual credentials (AWS_REGION, AWS_ACCESS_KEY_ID, ... or a role); e.g. release=/etc/skillsvc/release.pub,ci=awskms:///alias/skills-release. Signatures by other keys are verified against the key they carry and shown by key id, but satisfy no policy.")
	f.StringVar(&c.Require, prefix+"require-signature", "", "Libraries whose versions must carry a valid signature by a named key (--library.signing-keys) before they go live (publish, approval, rollback): comma-separated library=key[|key...], a library being shared, team:<id>, team:*, user:<id> or user:*; the most specific entry applies. E.g. shared=release,team:*=release|teamkey. An unsigned or badly signed version is refused FAILED_PRECONDITION, naming the keys.")
	options.Tag(f, options.Basic, prefix+"require-signature", prefix+"signing-keys")
}

// MaxKeyName is the longest name --library.signing-keys may give a key,
// in bytes: the only names a key gets (a key a signature carries is shown
// by its id, 44 bytes). Replies reserve room for it with each skill's
// provenance (provenance.Reserve).
const MaxKeyName = 128

// kmsLoadTimeout bounds fetching a KMS key's public key at start.
const kmsLoadTimeout = 30 * time.Second

// Policy is a parsed Config.
type Policy struct {
	keys    map[string]PublicKey
	require map[string][]PublicKey // library spec -> alternatives
}

// Load reads the key files and parses the requirements.
func (c Config) Load() (*Policy, error) {
	p := &Policy{keys: map[string]PublicKey{}, require: map[string][]PublicKey{}}
	for _, kv := range split(c.Keys) {
		name, file, ok := strings.Cut(kv, "=")
		if !ok || name == "" || file == "" {
			return nil, fmt.Errorf("library: signing-keys entry %q is not name=key (a PEM file or a KMS URI)", kv)
		}
		if len(name) > MaxKeyName {
			return nil, fmt.Errorf("library: signing-keys name %.32q... is %d bytes, more than the %d a key's name may have (it is shown with every listed skill's provenance)", name, len(name), MaxKeyName)
		}
		ctx, cancel := context.WithTimeout(context.Background(), kmsLoadTimeout)
		k, err := LoadPublicKey(ctx, name, file)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("library: signing key %s (%s): %w", name, file, err)
		}
		if _, dup := p.keys[name]; dup {
			return nil, fmt.Errorf("library: signing key %s named twice", name)
		}
		p.keys[name] = k
	}
	for _, kv := range split(c.Require) {
		lib, names, ok := strings.Cut(kv, "=")
		if !ok || !validSpec(lib) {
			return nil, fmt.Errorf("library: require-signature entry %q is not library=key[|key], the library shared, team:<id>, team:*, user:<id> or user:*", kv)
		}
		for n := range strings.SplitSeq(names, "|") {
			k, ok := p.keys[n]
			if !ok {
				return nil, fmt.Errorf("library: require-signature names key %q, not in --library.signing-keys", n)
			}
			p.require[lib] = append(p.require[lib], k)
		}
	}
	return p, nil
}

func split(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func validSpec(s string) bool {
	if s == "shared" {
		return true
	}
	for _, p := range []string{"team:", "user:"} {
		if rest, ok := strings.CutPrefix(s, p); ok && rest != "" {
			return true
		}
	}
	return false
}

// Required is the keys one of which must have signed a version of l before
// it goes live; nil when l requires none.
func (p *Policy) Required(l layout.LibraryRef) []PublicKey {
	if p == nil {
		return nil
	}
	var specs []string
	switch {
	case l.Shared:
		specs = []string{"shared"}
	case l.Team != "":
		specs = []string{"team:" + l.Team, "team:*"}
	default:
		specs = []string{"user:" + l.User, "user:*"}
	}
	for _, s := range specs {
		if ks, ok := p.require[s]; ok {
			return ks
		}
	}
	return nil
}

// Named is the configured key with the given id, if any.
func (p *Policy) Named(id string) (PublicKey, bool) {
	if p == nil {
		return PublicKey{}, false
	}
	for _, k := range p.keys {
		if k.ID == id {
			return k, true
		}
	}
	return PublicKey{}, false
}

// Keys is every configured key, by name.
func (p *Policy) Keys() []PublicKey {
	if p == nil {
		return nil
	}
	out := make([]PublicKey, 0, len(p.keys))
	for _, k := range p.keys {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b PublicKey) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ErrUnsigned is a version refused going live for want of a signature.
var ErrUnsigned = errors.New("signature required")

// Labels names keys for a message.
func Labels(ks []PublicKey) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.Label()
	}
	return strings.Join(s, " or ")
}

// Kept is a signature a version keeps: its bundle and the public key (PEM)
// it verified with when attached.
type Kept struct{ Bundle, PublicKey string }

// Satisfied reports whether one of kept is a valid signature of digest by
// one of req.
func Satisfied(kept []Kept, digest string, req []PublicKey) bool {
	for _, k := range kept {
		if _, err := Verify([]byte(k.Bundle), digest, req); err == nil {
			return true
		}
	}
	return false
}

// Signature statuses of a served skill's provenance.
const (
	Unsigned = "unsigned"
	Verified = "verified"
	Invalid  = "invalid"
)

// Status is what kept signatures of digest amount to: Unsigned (none),
// Verified with the key's configured name (or its id), or Invalid (none
// verifies any more).
func (p *Policy) Status(kept []Kept, digest string) (status, key string) {
	if len(kept) == 0 {
		return Unsigned, ""
	}
	status, named := Invalid, false
	for _, sg := range kept {
		k, err := ParsePublicKey("", []byte(sg.PublicKey))
		if err != nil {
			continue
		}
		if n, ok := p.Named(k.ID); ok {
			k = n
		}
		if _, err := Verify([]byte(sg.Bundle), digest, []PublicKey{k}); err != nil {
			continue
		}
		if status != Verified || (k.Name != "" && !named) { // a configured key's name over another's id
			status, key, named = Verified, k.ID, k.Name != ""
			if named {
				key = k.Name
			}
		}
	}
	return status, key
}
