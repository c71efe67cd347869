package auth

import (
	"fmt"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

// MintHS256 signs a development token for p with the HS256 secret in
// secretFile, valid for ttl from now, with the claim names of cfg (and its
// issuer and audience when set), so the JWT authenticator built from cfg
// accepts it. An admin principal gets cfg's admin scope and may name no
// user and thread. Production tokens come from the deployment's identity
// provider; this is for trying jwt mode locally.
func MintHS256(cfg JWTConfig, secretFile string, p Principal, ttl time.Duration, now time.Time) (string, error) {
	if !p.Admin || p.User != "" || p.Thread != "" {
		if err := mounts.ValidateID("user", p.User); err != nil {
			return "", err
		}
		if err := mounts.ValidateID("thread", p.Thread); err != nil {
			return "", err
		}
	}
	if p.Ticket != "" {
		if err := mounts.ValidateID("ticket", p.Ticket); err != nil {
			return "", err
		}
	}
	teams, err := mounts.ParseTeams(p.Teams)
	if err != nil {
		return "", err
	}
	if ttl <= 0 {
		return "", fmt.Errorf("%w: token ttl must be positive", ErrInvalidConfig)
	}
	b, err := os.ReadFile(secretFile)
	if err != nil {
		return "", fmt.Errorf("auth: reading jwt secret: %w", err)
	}
	keys, err := parseSecret(b)
	if err != nil {
		return "", err
	}
	claims := jwt.MapClaims{
		"iat": now.Unix(),
		"exp": now.Add(ttl).Unix(),
	}
	// In order, and never overwriting: the user claim may be named "sub".
	for _, c := range [][2]string{{cfg.UserClaim, p.User}, {cfg.ThreadClaim, p.Thread}, {cfg.TicketClaim, p.Ticket}, {"sub", p.Subject}, {"iss", cfg.Issuer}, {"aud", cfg.Audience}} {
		if _, set := claims[c[0]]; c[1] != "" && !set {
			claims[c[0]] = c[1]
		}
	}
	if p.Admin {
		claims[cfg.ScopeClaim] = cfg.AdminScope
	}
	if len(teams) > 0 && cfg.TeamsClaim != "" {
		claims[cfg.TeamsClaim] = teams
	}
	for _, c := range [][3]string{{"scope", cfg.SkillScopeClaim, p.Scope}, {"harness", cfg.HarnessClaim, p.Harness}} {
		if c[2] == "" || c[1] == "" {
			continue
		}
		if err := mounts.ValidateID(c[0], c[2]); err != nil {
			return "", err
		}
		claims[c[1]] = c[2]
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(keys[jwt.SigningMethodHS256.Alg()][0].key)
}
