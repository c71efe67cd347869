package auth

import (
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/skillsvc/skillsvc/internal/mounts"
)

// MintHS256 signs a development token for id with the HS256 secret in
// secretFile, valid for ttl from now, with the claim names of cfg (and its
// issuer and audience when set), so the JWT authenticator built from cfg
// accepts it. Production tokens come from the deployment's identity
// provider; this is for trying jwt mode locally.
func MintHS256(cfg JWTConfig, secretFile string, id mounts.Identity, ttl time.Duration, now time.Time) (string, error) {
	if err := mounts.ValidateID("user", id.User); err != nil {
		return "", err
	}
	if err := mounts.ValidateID("thread", id.Thread); err != nil {
		return "", err
	}
	if id.Ticket != "" {
		if err := mounts.ValidateID("ticket", id.Ticket); err != nil {
			return "", err
		}
	}
	if ttl <= 0 {
		return "", fmt.Errorf("%w: token ttl must be positive", ErrInvalidConfig)
	}
	keys, err := loadSecret(secretFile)
	if err != nil {
		return "", err
	}
	claims := jwt.MapClaims{
		cfg.UserClaim:   id.User,
		cfg.ThreadClaim: id.Thread,
		"iat":           now.Unix(),
		"exp":           now.Add(ttl).Unix(),
	}
	if id.Ticket != "" {
		claims[cfg.TicketClaim] = id.Ticket
	}
	if cfg.Issuer != "" {
		claims["iss"] = cfg.Issuer
	}
	if cfg.Audience != "" {
		claims["aud"] = cfg.Audience
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(keys[jwt.SigningMethodHS256.Alg()][0])
}
