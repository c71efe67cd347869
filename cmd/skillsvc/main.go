// Command skillsvc serves the skillsvc gRPC API. With no configuration it
// listens on 127.0.0.1:7070 and stores files under ./data. `skillsvc config`
// prints the configuration it would run with, `skillsvc token` a
// development token.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/skillsvc/skillsvc/internal/app"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "token" {
		if err := runToken(os.Args[2:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "skillsvc:", err)
			os.Exit(2)
		}
		return
	}
	if cmd, args := app.Subcommand(os.Args[1:]); cmd == "config" {
		err := app.ConfigCommand(args, os.Getenv, os.Stdout)
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "skillsvc:", err)
			os.Exit(2)
		}
		return
	}
	cfg, err := app.Load(os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "skillsvc:", err)
		os.Exit(2)
	}
	log := app.NewLogger(cfg, os.Stderr)
	app.SetMemoryLimit(cfg, os.Getenv, log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("exiting", "err", err)
		os.Exit(1)
	}
}

// run builds the service and serves it until ctx ends.
func run(ctx context.Context, cfg app.Config, log *slog.Logger) error {
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}
