package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// defaultTarget is skillsvc's default --listen.
const defaultTarget = "localhost:7070"

// defaultThread is the thread skillctl calls as when none is set: an
// author's tool, not an agent's conversation.
const defaultThread = "skillctl"

// maxConfigBytes bounds the config file and a token file.
const maxConfigBytes = 1 << 20

// Context is one named set of connection settings, as a kubeconfig context
// or an AWS CLI profile holds them.
type Context struct {
	// Target is the gRPC address, host:port.
	Target string `yaml:"target,omitempty"`
	// TLS dials with TLS; CAFile (PEM) replaces the system roots.
	TLS    bool   `yaml:"tls,omitempty"`
	CAFile string `yaml:"ca-file,omitempty"`
	// User and Thread are the identity sent as metadata (insecure mode);
	// with a token the token's claims decide.
	User   string `yaml:"user,omitempty"`
	Thread string `yaml:"thread,omitempty"`
	// Teams are the caller's teams, comma-separated, sent as metadata
	// (insecure mode); with a token its teams claim decides.
	Teams string `yaml:"teams,omitempty"`
	// Admin asks to act as a library admin (x-skillsvc-admin: true):
	// honoured in insecure mode only; with a token its admin scope
	// decides and the server ignores the header.
	Admin bool `yaml:"admin,omitempty"`
	// Token is a bearer token, or TokenFile a file holding one (read on
	// every run, so a rotated token is picked up).
	Token     string `yaml:"token,omitempty"`
	TokenFile string `yaml:"token-file,omitempty"`
	// Library is the library LibraryService commands act on: empty for
	// the caller's own, "shared", "team:ID", or a user ID (admins).
	Library string `yaml:"library,omitempty"`
}

// Config is the file at $SKILLCTL_CONFIG or ~/.config/skillctl/config.yaml.
type Config struct {
	CurrentContext string              `yaml:"current-context,omitempty"`
	Contexts       map[string]*Context `yaml:"contexts,omitempty"`
}

// configPath is where the config lives: $SKILLCTL_CONFIG, else the user's
// config directory.
func configPath(getenv func(string) string) (string, error) {
	if p := getenv("SKILLCTL_CONFIG"); p != "" {
		return p, nil
	}
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("no config file: set SKILLCTL_CONFIG or HOME")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "skillctl", "config.yaml"), nil
}

// loadConfig reads path; a missing file is an empty config.
func loadConfig(path string) (*Config, error) {
	c := &Config{}
	b, err := readBounded(path, maxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if err := yaml.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	for name, ctx := range c.Contexts {
		if ctx == nil {
			c.Contexts[name] = &Context{}
		}
	}
	return c, nil
}

// save writes c to path, readable by its owner only: it may hold tokens.
func (c *Config) save(path string) error {
	b, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// writeFileAtomic replaces path with what write writes, mode 0600, whole
// or not at all: write goes to a new temporary file of a random name in
// path's directory (created exclusively, so a link planted at any name is
// never opened), which is synced and renamed over path. A failed write
// leaves path as it was and no temporary file. A symbolic link at path is
// refused, not followed and not replaced: writing through it would write
// wherever it points, and replacing it would silently cut a link the user
// made (to a dotfiles repository, say); SKILLCTL_CONFIG can name its target.
// The directory, when created, is 0700.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link; skillctl writes its config only as a regular file (set SKILLCTL_CONFIG to the file it points to)", path)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	// CreateTemp made it 0600 less the umask; the umask cannot widen it,
	// but say exactly what it is.
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	// Make the rename itself durable; a directory that cannot be synced
	// (some file systems) still has the file.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (c *Config) names() []string {
	names := make([]string, 0, len(c.Contexts))
	for n := range c.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// settings are the connection settings a command runs with, resolved from
// flags, then the environment, then the context, then defaults.
type settings struct {
	Context // the resolved values
	// ContextName is the context used ("" for none).
	ContextName string
	// TargetSet: a server was named (flag, environment or context), not
	// the default: validate then asks it about coexistence.
	TargetSet bool
}

// envNames maps each setting to its environment variable.
var envNames = struct{ Context, Target, TLS, CAFile, User, Thread, Teams, Admin, Token, TokenFile, Library string }{
	"SKILLCTL_CONTEXT", "SKILLCTL_TARGET", "SKILLCTL_TLS", "SKILLCTL_CA_FILE", "SKILLCTL_USER", "SKILLCTL_THREAD",
	"SKILLCTL_TEAMS", "SKILLCTL_ADMIN", "SKILLCTL_TOKEN", "SKILLCTL_TOKEN_FILE", "SKILLCTL_LIBRARY",
}

// resolve decides each setting: flags (set is what the command line gave,
// changed says which it gave) > environment > context > defaults.
func resolve(cfg *Config, flags Context, flagContext string, changed func(string) bool, getenv func(string) string) (settings, error) {
	var s settings
	s.ContextName = firstNonEmpty(flagContext, getenv(envNames.Context), cfg.CurrentContext)
	ctx := &Context{}
	if s.ContextName != "" {
		c, ok := cfg.Contexts[s.ContextName]
		if !ok {
			return s, fmt.Errorf("no context %q in the config (skillctl config get-contexts lists them)", s.ContextName)
		}
		ctx = c
	}
	pick := func(flag, value, env, fromCtx string) string {
		if changed(flag) {
			return value
		}
		if v := getenv(env); v != "" {
			return v
		}
		return fromCtx
	}
	s.Target = pick("target", flags.Target, envNames.Target, ctx.Target)
	s.CAFile = pick("ca-file", flags.CAFile, envNames.CAFile, ctx.CAFile)
	s.User = pick("user", flags.User, envNames.User, ctx.User)
	s.Thread = pick("thread", flags.Thread, envNames.Thread, ctx.Thread)
	s.Teams = pick("teams", flags.Teams, envNames.Teams, ctx.Teams)
	s.Token = pick("token", flags.Token, envNames.Token, ctx.Token)
	s.TokenFile = pick("token-file", flags.TokenFile, envNames.TokenFile, ctx.TokenFile)
	s.Library = pick("library", flags.Library, envNames.Library, ctx.Library)
	pickBool := func(flag string, value bool, env string, fromCtx bool) (bool, error) {
		if changed(flag) {
			return value, nil
		}
		if v := getenv(env); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return false, fmt.Errorf("%s=%q: not a boolean", env, v)
			}
			return b, nil
		}
		return fromCtx, nil
	}
	var err error
	if s.TLS, err = pickBool("tls", flags.TLS, envNames.TLS, ctx.TLS); err != nil {
		return s, err
	}
	if s.Admin, err = pickBool("admin", flags.Admin, envNames.Admin, ctx.Admin); err != nil {
		return s, err
	}
	// A token from the flag or environment beats a token file from the
	// context, and the other way round.
	if changed("token") || getenv(envNames.Token) != "" {
		if !changed("token-file") && getenv(envNames.TokenFile) == "" {
			s.TokenFile = ""
		}
	}
	if changed("token-file") || getenv(envNames.TokenFile) != "" {
		if !changed("token") && getenv(envNames.Token) == "" {
			s.Token = ""
		}
	}
	if s.Token != "" && s.TokenFile != "" {
		return s, errors.New("both a token and a token file are set; keep one")
	}
	s.TargetSet = s.Target != ""
	if s.Target == "" {
		s.Target = defaultTarget
	}
	if s.Thread == "" {
		s.Thread = defaultThread
	}
	if s.CAFile != "" {
		s.TLS = true
	}
	return s, nil
}

// bearer returns the token to send, reading the token file if one is set.
func (s settings) bearer() (string, error) {
	if s.TokenFile == "" {
		return strings.TrimSpace(s.Token), nil
	}
	b, err := readBounded(s.TokenFile, maxConfigBytes)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("token file %s is empty", s.TokenFile)
	}
	return t, nil
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// readBounded reads a whole file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}
