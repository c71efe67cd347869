package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mounts"
)

// runToken is `skillsvc token`: it prints a development token signed with
// the HS256 secret that --auth.jwt.secret-file gives the server, with the
// same claim, issuer and audience flags.
func runToken(args []string, out, errOut io.Writer) error {
	f := flag.NewFlagSet("skillsvc token", flag.ContinueOnError)
	f.SetOutput(errOut)
	var id mounts.Identity
	var ttl time.Duration
	f.StringVar(&id.User, "user", "", "User ID (required).")
	f.StringVar(&id.Thread, "thread", "", "Thread ID (required).")
	f.StringVar(&id.Ticket, "ticket", "", "Ticket ID (optional).")
	f.DurationVar(&ttl, "ttl", time.Hour, "How long the token is valid.")
	var cfg auth.JWTConfig
	cfg.RegisterFlagsWithPrefix("auth.jwt.", f)
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("token: unexpected argument %q", f.Arg(0))
	}
	if cfg.SecretFile == "" {
		return fmt.Errorf("token: --auth.jwt.secret-file is required")
	}
	token, err := auth.MintHS256(cfg, cfg.SecretFile, id, ttl, time.Now())
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	_, err = fmt.Fprintln(out, token)
	return err
}
