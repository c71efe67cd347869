package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/golang-jwt/jwt/v5"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

// AuthorizationKey is the metadata key carrying "Bearer <token>".
const AuthorizationKey = "authorization"

const (
	// maxTokenBytes bounds the work one call can ask of the parser; real
	// tokens are well under 1 KiB.
	maxTokenBytes = 8 << 10
	// maxScopes bounds the scope claim's entries looked at.
	maxScopes = 64
	// maxSubjectBytes bounds the subject kept for the audit trail.
	maxSubjectBytes = 256
)

// JWT verifies a bearer token and takes the principal from its claims
// only; identity metadata headers are ignored. Each key verifies exactly
// one algorithm, so a token cannot choose how it is checked.
type JWT struct {
	keys   keySource
	parser *jwt.Parser
	claims JWTConfig // claim names and the admin scope
}

func newJWT(cfg JWTConfig, keys keySource) *JWT {
	opts := []jwt.ParserOption{
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.Leeway),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	return &JWT{keys: keys, parser: jwt.NewParser(opts...), claims: cfg}
}

// Close stops watching key files and URLs.
func (j *JWT) Close() { j.keys.close() }

// Authenticate implements Authenticator.
func (j *JWT) Authenticate(_ context.Context, h Headers) (Principal, error) {
	vs := h.Get(AuthorizationKey)
	switch {
	case len(vs) == 0:
		return Principal{}, fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	case len(vs) > 1:
		return Principal{}, fmt.Errorf("%w: authorization given %d times", ErrUnauthenticated, len(vs))
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(vs[0]), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return Principal{}, fmt.Errorf("%w: authorization is not a bearer token", ErrUnauthenticated)
	}
	return j.verify(token)
}

func (j *JWT) verify(token string) (Principal, error) {
	if len(token) > maxTokenBytes {
		return Principal{}, fmt.Errorf("%w: token too long", ErrUnauthenticated)
	}
	claims := jwt.MapClaims{}
	if _, err := j.parser.ParseWithClaims(token, claims, j.key); err != nil {
		return Principal{}, fmt.Errorf("%w: %s", ErrUnauthenticated, tokenReason(err))
	}
	return j.principal(claims)
}

// principal reads the verified claims. An agent token names a user and a
// thread; an admin token (the admin scope) may name neither.
func (j *JWT) principal(claims jwt.MapClaims) (Principal, error) {
	var p Principal
	var err error
	if p.Admin, err = hasScope(claims[j.claims.ScopeClaim], j.claims.AdminScope); err != nil {
		return Principal{}, fmt.Errorf("%w: token claim %q: %v", ErrUnauthenticated, j.claims.ScopeClaim, err)
	}
	p.LibraryAdmin = p.Admin // only the token's scope counts
	if sub, ok := claims["sub"].(string); ok && len(sub) <= maxSubjectBytes {
		p.Subject = sub
	}
	required := !p.Admin
	if p.User, err = j.claim(claims, j.claims.UserClaim, "user", required); err != nil {
		return Principal{}, err
	}
	if p.Thread, err = j.claim(claims, j.claims.ThreadClaim, "thread", required); err != nil {
		return Principal{}, err
	}
	if p.Ticket, err = j.claim(claims, j.claims.TicketClaim, "ticket", false); err != nil {
		return Principal{}, err
	}
	if j.claims.PinClaim != "" {
		switch v := claims[j.claims.PinClaim]; v {
		case nil, false:
		case true, "library":
			p.Pin = true
		default:
			return Principal{}, fmt.Errorf("%w: token claim %q must be true, false or \"library\"", ErrUnauthenticated, j.claims.PinClaim)
		}
	}
	if p.Teams, err = j.teams(claims); err != nil {
		return Principal{}, err
	}
	// A token's scope and harness bind its calls (Principal.ScopeBound).
	if j.claims.SkillScopeClaim != "" {
		if p.Scope, err = j.claim(claims, j.claims.SkillScopeClaim, "scope", false); err != nil {
			return Principal{}, err
		}
	}
	if j.claims.HarnessClaim != "" {
		if p.Harness, err = j.claim(claims, j.claims.HarnessClaim, "harness", false); err != nil {
			return Principal{}, err
		}
	}
	p.ScopeBound, p.HarnessBound = p.Scope != "", p.Harness != ""
	if p.Admin && (p.User == "") != (p.Thread == "") {
		return Principal{}, fmt.Errorf("%w: an admin token names both a user and a thread, or neither", ErrUnauthenticated)
	}
	if p.Ticket != "" && p.Thread == "" {
		return Principal{}, fmt.Errorf("%w: a ticket needs a thread", ErrUnauthenticated)
	}
	return p, nil
}

func (j *JWT) key(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	keys, known := j.keys.keys().lookup(t.Method.Alg(), kid)
	if !known {
		j.keys.unknownKID()
	}
	if len(keys) == 0 {
		return nil, errors.New("no key for the algorithm")
	}
	return jwt.VerificationKeySet{Keys: keys}, nil
}

// claim returns the string claim name as an ID of kind. The value is never
// quoted back: it came from the token.
func (j *JWT) claim(claims jwt.MapClaims, name, kind string, required bool) (string, error) {
	v, ok := claims[name]
	if !ok {
		if required {
			return "", fmt.Errorf("%w: token has no %s claim %q", ErrUnauthenticated, kind, name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok || mounts.ValidateID(kind, s) != nil {
		return "", fmt.Errorf("%w: token claim %q is not a valid %s id", ErrUnauthenticated, name, kind)
	}
	return s, nil
}

// teams reads the teams claim (absent, a list of strings, or one
// comma-separated string) as Identity.Teams, each ID validated.
func (j *JWT) teams(claims jwt.MapClaims) (string, error) {
	if j.claims.TeamsClaim == "" {
		return "", nil
	}
	var list []string
	switch v := claims[j.claims.TeamsClaim].(type) {
	case nil:
		return "", nil
	case string:
		list = []string{v}
	case []any:
		if len(v) > mounts.MaxTeams {
			return "", fmt.Errorf("%w: token claim %q lists more than %d teams", ErrUnauthenticated, j.claims.TeamsClaim, mounts.MaxTeams)
		}
		for _, e := range v {
			s, ok := e.(string)
			if !ok || strings.Contains(s, ",") {
				return "", fmt.Errorf("%w: token claim %q is not a list of team ids", ErrUnauthenticated, j.claims.TeamsClaim)
			}
			list = append(list, s)
		}
	default:
		return "", fmt.Errorf("%w: token claim %q is not a list of team ids", ErrUnauthenticated, j.claims.TeamsClaim)
	}
	joined := strings.Join(list, ",")
	if _, err := mounts.ParseTeams(joined); err != nil {
		// The value is never quoted back: it came from the token.
		return "", fmt.Errorf("%w: token claim %q holds an invalid team id or more than %d teams", ErrUnauthenticated, j.claims.TeamsClaim, mounts.MaxTeams)
	}
	return joined, nil
}

// hasScope reports whether a scope claim (absent, a space-separated string
// as OAuth 2.0 writes it, or a list of strings) holds want.
func hasScope(v any, want string) (bool, error) {
	var scopes []string
	switch s := v.(type) {
	case nil:
		return false, nil
	case string:
		scopes = strings.Fields(s)
	case []any:
		for _, e := range s {
			str, ok := e.(string)
			if !ok {
				return false, errors.New("not a list of strings")
			}
			scopes = append(scopes, str)
		}
	default:
		return false, errors.New("not a string or a list of strings")
	}
	if len(scopes) > maxScopes {
		return false, fmt.Errorf("more than %d scopes", maxScopes)
	}
	for _, s := range scopes {
		if s == want {
			return true, nil
		}
	}
	return false, nil
}

func tokenReason(err error) string {
	for _, r := range []struct {
		err    error
		reason string
	}{
		{jwt.ErrTokenMalformed, "malformed token"},
		{jwt.ErrTokenUnverifiable, "token not verifiable with the configured keys"},
		{jwt.ErrTokenSignatureInvalid, "invalid token signature"},
		{jwt.ErrTokenRequiredClaimMissing, "token lacks a required claim"},
		{jwt.ErrTokenExpired, "token expired"},
		{jwt.ErrTokenNotValidYet, "token not valid yet"},
		{jwt.ErrTokenUsedBeforeIssued, "token issued in the future"},
		{jwt.ErrTokenInvalidAudience, "token audience not accepted"},
		{jwt.ErrTokenInvalidIssuer, "token issuer not accepted"},
	} {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return "invalid token"
}
