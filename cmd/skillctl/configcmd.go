package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Manage named contexts in the config file",
		Long: `config edits the config file ($SKILLCTL_CONFIG, else ~/.config/skillctl/config.yaml): named
contexts, each with a target, TLS settings, an identity (user, thread) or a token (or a token file
read on every run), and a library; current-context is the one used unless --context or
SKILLCTL_CONTEXT names another. The file is written readable by its owner only.

  current-context: dev
  contexts:
    dev:
      target: localhost:7070
      user: alice
    prod:
      target: skills.example.com:443
      tls: true
      token-file: ~/.config/skillctl/prod.token
      library: shared`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.configViewCmd(), a.configGetContextsCmd(), a.configCurrentCmd(), a.configUseCmd(), a.configSetCmd(), a.configDeleteCmd())
	return cmd
}

// editConfig loads the config, applies f and saves it.
func (a *app) editConfig(f func(*Config) error) error {
	path, err := configPath(a.getenv)
	if err != nil {
		return usageErr(err)
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return usageErr(err)
	}
	if err := f(cfg); err != nil {
		return usageErr(err)
	}
	if err := cfg.save(path); err != nil {
		return usageErr(err)
	}
	return nil
}

func (a *app) readConfig() (*Config, error) {
	path, err := configPath(a.getenv)
	if err != nil {
		return nil, usageErr(err)
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, usageErr(err)
	}
	return cfg, nil
}

func (a *app) configViewCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "view",
		Short: "Print the config, tokens hidden",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.readConfig()
			if err != nil {
				return err
			}
			for _, c := range cfg.Contexts {
				if c.Token != "" {
					c.Token = "********"
				}
			}
			b, err := yaml.Marshal(cfg)
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(b)
			return err
		},
	}
}

func (a *app) configGetContextsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "get-contexts",
		Short: "List the contexts; * marks the current one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.readConfig()
			if err != nil {
				return err
			}
			tw := newTable(a.stdout)
			fmt.Fprintln(tw, "CURRENT\tNAME\tTARGET\tUSER\tAUTH\tLIBRARY")
			for _, n := range cfg.names() {
				c := cfg.Contexts[n]
				cur := ""
				if n == cfg.CurrentContext {
					cur = "*"
				}
				authBy := "metadata"
				switch {
				case c.Token != "":
					authBy = "token"
				case c.TokenFile != "":
					authBy = "token-file"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cur, inert(n), inert(firstNonEmpty(c.Target, defaultTarget)), dash(c.User), authBy, dash(c.Library))
			}
			return tw.Flush()
		},
	}
}

func (a *app) configCurrentCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "current-context",
		Short: "Print the current context's name",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.readConfig()
			if err != nil {
				return err
			}
			if cfg.CurrentContext == "" {
				return usageErr(fmt.Errorf("no current context"))
			}
			fmt.Fprintln(a.stdout, inert(cfg.CurrentContext))
			return nil
		},
	}
}

func (a *app) configUseCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "use-context NAME",
		Short: "Make NAME the current context",
		Args:  cobra.ExactArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			cfg, err := a.readConfig()
			if err != nil || len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return cfg.names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.editConfig(func(c *Config) error {
				if _, ok := c.Contexts[args[0]]; !ok {
					return fmt.Errorf("no context %q", args[0])
				}
				c.CurrentContext = args[0]
				return nil
			})
		},
	}
}

func (a *app) configSetCmd() *cobra.Command {
	var use bool
	cmd := &cobra.Command{
		Use:   "set-context NAME",
		Short: "Create or change a context: only the fields given are set",
		Long: `set-context creates context NAME or changes the fields given: --target, --tls, --ca-file,
--user, --thread, --teams, --admin, --token, --token-file, --library (the global flags of the same names). An empty
value clears a field. --use makes it the current context.`,
		Example: `  skillctl config set-context dev --target localhost:7070 --user alice --use
  skillctl config set-context prod --target skills.example.com:443 --tls --token-file ~/prod.token`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if strings.TrimSpace(name) == "" {
				return usageErr(fmt.Errorf("a context needs a name"))
			}
			return a.editConfig(func(c *Config) error {
				if c.Contexts == nil {
					c.Contexts = map[string]*Context{}
				}
				ctx := c.Contexts[name]
				if ctx == nil {
					ctx = &Context{}
					c.Contexts[name] = ctx
				}
				changed := func(f string) bool { return cmd.Flags().Changed(f) }
				set := func(f string, dst *string, v string) {
					if changed(f) {
						*dst = v
					}
				}
				set("target", &ctx.Target, a.flags.Target)
				set("ca-file", &ctx.CAFile, a.flags.CAFile)
				set("user", &ctx.User, a.flags.User)
				set("thread", &ctx.Thread, a.flags.Thread)
				set("teams", &ctx.Teams, a.flags.Teams)
				set("token", &ctx.Token, a.flags.Token)
				set("token-file", &ctx.TokenFile, a.flags.TokenFile)
				set("library", &ctx.Library, a.flags.Library)
				if changed("tls") {
					ctx.TLS = a.flags.TLS
				}
				if changed("admin") {
					ctx.Admin = a.flags.Admin
				}
				if ctx.Token != "" && ctx.TokenFile != "" {
					return fmt.Errorf("context %q would have both a token and a token file; keep one", name)
				}
				if use || c.CurrentContext == "" {
					c.CurrentContext = name
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&use, "use", false, "make it the current context")
	return cmd
}

func (a *app) configDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete-context NAME",
		Short: "Delete a context",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.editConfig(func(c *Config) error {
				if _, ok := c.Contexts[args[0]]; !ok {
					return fmt.Errorf("no context %q", args[0])
				}
				delete(c.Contexts, args[0])
				if c.CurrentContext == args[0] {
					c.CurrentContext = ""
				}
				return nil
			})
		},
	}
}
