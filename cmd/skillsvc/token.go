package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/skillsvc/skillsvc/internal/auth"
)

// runToken is `skillsvc token`: it prints a development token signed with
// the HS256 secret that --auth.jwt.secret-file gives the server, with the
// same claim, issuer and audience flags.
func runToken(args []string, out, errOut io.Writer) error {
	f := flag.NewFlagSet("skillsvc token", flag.ContinueOnError)
	f.SetOutput(errOut)
	var p auth.Principal
	var ttl time.Duration
	f.StringVar(&p.User, "user", "", "User ID (required unless --admin).")
	f.StringVar(&p.Thread, "thread", "", "Thread ID (required unless --admin).")
	f.StringVar(&p.Ticket, "ticket", "", "Ticket ID (optional).")
	f.StringVar(&p.Teams, "teams", "", "The caller's team IDs, comma-separated, as the --auth.jwt.teams-claim (optional).")
	f.StringVar(&p.Scope, "scope", "", "The skill scope the token binds every listing to, as the --auth.jwt.skill-scope-claim (optional; docs/selection.md).")
	f.StringVar(&p.Harness, "harness", "", "The agent harness the token's caller runs in, as the --auth.jwt.harness-claim (optional).")
	f.StringVar(&p.Subject, "subject", "", "The sub claim: who holds the token, for the audit trail.")
	f.BoolVar(&p.Admin, "admin", false, "An admin token (the --auth.jwt.admin-scope): AdminService, acting for a named user.")
	f.DurationVar(&ttl, "ttl", time.Hour, "How long the token is valid.")
	var cfg auth.JWTConfig
	cfg.RegisterFlagsWithPrefix("auth.jwt.", f)
	// The short spelling of the one flag every call needs.
	f.StringVar(&cfg.SecretFile, "secret-file", "", "Same as --auth.jwt.secret-file.")
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("token: unexpected argument %q", f.Arg(0))
	}
	if cfg.SecretFile == "" {
		return fmt.Errorf("token: --secret-file (or --auth.jwt.secret-file) is required")
	}
	token, err := auth.MintHS256(cfg, cfg.SecretFile, p, ttl, time.Now())
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	_, err = fmt.Fprintln(out, token)
	return err
}
