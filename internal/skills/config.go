package skills

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/libindex"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/views"
)

// Config configures the skills library and the limits of its RPCs.
type Config struct {
	// Mount is the read-only mount whose template locates a user's library.
	Mount string
	// SharedPrefix holds the organization-wide library.
	SharedPrefix string
	// TeamPrefix holds each team's library; {team} is replaced by the
	// team's ID. TeamIndexKey is a team library's persisted index.
	TeamPrefix   string
	TeamIndexKey string
	// SharedProtectedKey and TeamProtectedKey hold the names of the
	// protected skills of the shared library and of a team's ({team}).
	SharedProtectedKey string
	TeamProtectedKey   string
	// SettingsKey is the per-user settings object; {user} is replaced.
	SettingsKey string
	// IndexKey is the object holding a user's persisted library index;
	// {user} is replaced. SharedIndexKey is the shared library's.
	IndexKey       string
	SharedIndexKey string
	// IndexRefresh is the base interval after which a library index is
	// revalidated in the background while it keeps being served, each
	// library at its own point of it (libindex.FreshFor); 0 lists the
	// library on every call and caches no index. Libraries are uploaded with ordinary
	// S3 tools, so their changes show up after about this.
	IndexRefresh time.Duration
	// IndexMaxStale is the hard bound: an older index is revalidated
	// before the call is answered.
	IndexMaxStale time.Duration
	// freshness says which of the two are still "auto" (ResolveFreshness).
	freshness freshness
	// StaleIfError is how old an index may be served when revalidating it
	// fails (object storage down).
	StaleIfError time.Duration
	// SettingsTTL bounds how long a user's cached settings are trusted:
	// changes through skillsvc show up at once, edits to the settings
	// object by other tools after at most this.
	SettingsTTL time.Duration
	// MaxHeldBytes bounds what one replica keeps decoded in memory (the
	// library indexes, each library's parsed skills and manifests, each
	// user's view), least recently used first out.
	MaxHeldBytes int64
	// MaxHeldIndexes is deprecated and ignored: it bounded the count of
	// indexes, whose size varies a thousandfold; MaxHeldBytes replaces it.
	MaxHeldIndexes int
	// MaxCachedFileBytes is the largest skill file whose content is cached
	// (by key and ETag); larger files are read from storage every time.
	MaxCachedFileBytes int64
	// HeadTTL is how long the head of one version of a SKILL.md (key and
	// ETag) stays in the cache. A version never changes, so this only
	// bounds the memory of versions no longer listed.
	HeadTTL     time.Duration
	HeadBytes   int
	Concurrency int
	// BackgroundRevalidations bounds the library revalidations a replica
	// runs at once while serving the index it has.
	BackgroundRevalidations int
	// MaxSkills bounds the skills one library may hold.
	MaxSkills      int
	MaxObjects     int
	MaxExportBytes int64
	MaxFileBytes   int64
	// MaxListedFiles bounds the files GetSkill describes (one ranged read
	// each); the rest are counted.
	MaxListedFiles int
	// MaxRenderBytes bounds RenderSkill's text, which copies the arguments
	// into every $ARGUMENTS placeholder.
	MaxRenderBytes int64

	// Request limits: a 0 in a request means the default; more than the
	// maximum is clamped (page sizes, search results) or refused (budget).
	DefaultPageSize int32
	MaxPageSize     int32
	// MaxPageBytes bounds the encoded size of a ListSkills page and a
	// SearchSkills reply, so a library with large frontmatter is served in
	// replies any client can receive.
	MaxPageBytes         int
	DefaultSearchResults int32
	MaxSearchResults     int32
	MaxQueryBytes        int
	MaxCharBudget        int32
	// SearchBodyBytes bounds what the search index reads of one SKILL.md
	// (its frontmatter and body); SearchBodyReads the SKILL.md files one
	// index build reads at once. Only a skill version no index and no
	// cached analysis has is read.
	SearchBodyBytes int64
	SearchBodyReads int
	// ReplyCacheBytes bounds the encoded ListSkills pages, FormatSkills
	// blocks and SearchSkills replies one replica keeps for reuse; 0 keeps
	// none.
	ReplyCacheBytes int64
	// ReplySharedTTL is how long a reply one replica built stays in the
	// shared cache (Redis) for every replica; 0 keeps replies in process
	// only.
	ReplySharedTTL time.Duration
	// OrderByUse orders each layer's skills in a prompt block without a
	// query by recent use; SearchUsePrior breaks a search's ties by it
	// (both only with usage counted: Catalog.UseUsage).
	OrderByUse, SearchUsePrior bool

	// Tool names that text meant for a model mentions, when a request names
	// none: the tool that searches skills (in a prompt block with skills
	// left out) and the one that fetches a file as is (when a skill file is
	// refused as text). Empty means neutral wording.
	SearchTool   string
	DownloadTool string
}

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.Mount, prefix+"mount", "/skills", "Read-only mount holding each user's skill library.")
	f.StringVar(&c.SharedPrefix, prefix+"shared-prefix", "_shared/skills/", "Key prefix of the organization-wide skill library; its first segment must not be a valid user ID.")
	f.StringVar(&c.TeamPrefix, prefix+"team-prefix", "_teams/{team}/skills/", "Key prefix of each team's skill library, layered between the shared library and the user's for the team's members; {team} is the team ID (a whole segment), the first segment no valid ID.")
	f.StringVar(&c.TeamIndexKey, prefix+"team-index-key", "_teams/{team}/settings/skills.index", "Object holding a team library's persisted index; {team} is the team ID.")
	f.StringVar(&c.SharedProtectedKey, prefix+"shared-protected-key", "_shared/settings/protected.json", `Object listing the shared library's protected skills ({"names": [...]}), which no team's or user's skill of the same name or path replaces; managed with AdminService.SetSkillProtected.`)
	f.StringVar(&c.TeamProtectedKey, prefix+"team-protected-key", "_teams/{team}/settings/protected.json", "Object listing a team library's protected skills, which no member's own skill of the same name or path replaces; {team} is the team ID.")
	f.StringVar(&c.SettingsKey, prefix+"settings-key", "{user}/settings/skills.json", "Object holding a user's skill settings (disabled skills).")
	f.StringVar(&c.IndexKey, prefix+"index-key", "{user}/settings/skills.index", "Object holding a user's persisted library index, read by a replica whose cache is empty.")
	f.StringVar(&c.SharedIndexKey, prefix+"shared-index-key", "_shared/settings/skills.index", "Object holding the shared library's persisted index.")
	autoDurationVar(f, &c.IndexRefresh, &c.freshness.refreshAuto, PolledIndexRefresh, prefix+"index-refresh", "Base interval after which a library index is revalidated in the background while it is still served (each library falls due at its own point of it, so libraries listed together are not revalidated together); 0 lists the library on every call."+indexRefreshHelp)
	autoDurationVar(f, &c.IndexMaxStale, &c.freshness.maxStaleAuto, PolledIndexMaxStale, prefix+"index-max-stale", "Age after which a library index is revalidated before answering: the bound on how late an upload with other S3 tools shows up."+indexMaxStaleHelp)
	f.DurationVar(&c.StaleIfError, prefix+"stale-if-error", time.Hour, "How old a library index may be served while object storage fails.")
	f.DurationVar(&c.SettingsTTL, prefix+"settings-ttl", time.Hour, "How long cached skill settings are trusted; a change made through skillsvc shows up at once on the replica that made it and, told by the replicas' Redis topic, on the others milliseconds later (each keeps them in process for --skills.index-max-stale, at least --cache.lru.max-ttl: the bound should a message be lost).")
	f.Int64Var(&c.MaxHeldBytes, prefix+"max-held-bytes", DefaultMaxHeldBytes, "Most bytes of library indexes, parsed skills and users' views one replica keeps decoded in memory, least recently used out; the shared library is held once, each user's view costs about their own skills. The default suits a 512 MiB pod with the default --cache.lru.max-bytes.")
	f.IntVar(&c.MaxHeldIndexes, prefix+"max-held-indexes", 0, "Deprecated and ignored: use --skills.max-held-bytes.")
	f.Int64Var(&c.MaxCachedFileBytes, prefix+"max-cached-file-bytes", 256<<10, "Largest skill file whose content is cached by key and ETag.")
	f.DurationVar(&c.HeadTTL, prefix+"head-ttl", 24*time.Hour, "How long the head of one version of a SKILL.md (by key and ETag) stays in the cache.")
	f.IntVar(&c.HeadBytes, prefix+"head-bytes", 8<<10, "Bytes fetched from the start of each SKILL.md to read its frontmatter.")
	f.IntVar(&c.Concurrency, prefix+"concurrency", 32, "SKILL.md heads fetched in parallel.")
	f.IntVar(&c.BackgroundRevalidations, prefix+"background-revalidations", libindex.DefaultBackgroundRevalidations, "Library revalidations one replica runs at once in the background (while serving the index it has); more due at once wait in a queue, and past it are tried again a refresh interval later.")
	f.IntVar(&c.MaxSkills, prefix+"max-skills", 10000, "Most skills read from one library.")
	f.IntVar(&c.MaxObjects, prefix+"max-objects", 100000, "Most objects read from one library listing; the rest are ignored (and logged).")
	f.Int64Var(&c.MaxExportBytes, prefix+"max-export-bytes", 256<<20, "Largest skill folder ExportSkill packs.")
	f.Int64Var(&c.MaxFileBytes, prefix+"max-file-bytes", 1<<20, "Largest SKILL.md or skill file returned as text, by GetSkill, ReadSkillFile and a Read of the /skills mount alike (GetSkill returns it twice, raw and body, within gRPC's default 4 MiB message limit).")
	f.IntVar(&c.MaxListedFiles, prefix+"max-listed-files", 1000, "Most files GetSkill lists for one skill (each is sniffed for binary content); the rest are counted in files_omitted.")
	f.Int64Var(&c.MaxRenderBytes, prefix+"max-render-bytes", 3<<20, "Largest text RenderSkill returns (arguments are copied into every $ARGUMENTS); larger renders are RESOURCE_EXHAUSTED.")
	int32Var(f, &c.DefaultPageSize, prefix+"default-page-size", 100, "Skills per ListSkills page when the request asks for 0.")
	int32Var(f, &c.MaxPageSize, prefix+"max-page-size", 1000, "Most skills in one ListSkills page; larger requests are clamped.")
	f.IntVar(&c.MaxPageBytes, prefix+"max-page-bytes", 2<<20, "Largest encoded ListSkills page or SearchSkills reply: a page ends early (with a next_page_token) and a search drops its weakest results (truncated) rather than exceed it, so replies fit gRPC's default 4 MiB receive limit. A reply always holds at least one skill.")
	int32Var(f, &c.DefaultSearchResults, prefix+"default-search-results", 10, "SearchSkills results when the request asks for 0.")
	int32Var(f, &c.MaxSearchResults, prefix+"max-search-results", 100, "Most SearchSkills results; larger requests are clamped.")
	f.IntVar(&c.MaxQueryBytes, prefix+"max-query-bytes", skillmd.MaxEvalQueryBytes, "Longest SearchSkills query and FormatSkills query (the task a prompt block is chosen for).")
	f.Int64Var(&c.SearchBodyBytes, prefix+"search-body-bytes", 64<<10, "Bytes of each SKILL.md the search index reads (frontmatter and body; the rest is not searched). A skill's body is read once per version across replicas: its analysis is shared through the cache.")
	f.IntVar(&c.SearchBodyReads, prefix+"search-body-reads", 16, "SKILL.md files one search index build reads from storage at once.")
	int32Var(f, &c.MaxCharBudget, prefix+"max-char-budget", 1<<20, "Largest FormatSkills char_budget; larger requests are refused.")
	f.Int64Var(&c.ReplyCacheBytes, prefix+"reply-cache-bytes", 32<<20, "Bytes of encoded ListSkills pages, FormatSkills blocks and SearchSkills replies kept per replica and reused while the caller's library, settings and request are unchanged, and of GetSkill replies, reused while the skill is (one shared skill's reply serves every user who sees it alike); 0 keeps none.")
	f.DurationVar(&c.ReplySharedTTL, prefix+"reply-shared-ttl", 10*time.Minute, "With Redis: how long an encoded reply one replica built stays in Redis, where a replica that does not keep it takes it instead of building it again (a reply's key names one library content, so it is never stale); GetSkill replies stay in process; 0 keeps replies in process only.")
	f.BoolVar(&c.OrderByUse, prefix+"order-by-use", true, "With usage counted (--usage.enabled): order each layer's skills in a prompt block without a query (FormatSkills, MCP list_skills) by their activations over the last --usage.recent-days, most used first; unused skills and ties keep the path order. False keeps the path order.")
	f.BoolVar(&c.SearchUsePrior, prefix+"search-use-prior", true, "With usage counted: break SearchSkills ties (equal relevance, same layer rank) by recent activations; distinct scores are never reordered.")
	f.StringVar(&c.SearchTool, prefix+"search-tool", "", "Tool name a prompt block tells the model to search skills with, when the request names none; empty words it neutrally.")
	f.StringVar(&c.DownloadTool, prefix+"download-tool", "", "Tool name a refusal to read a binary or oversized skill file tells the model to fetch it with, when the request names none; empty words it neutrally.")
}

// DefaultMaxHeldBytes is --skills.max-held-bytes' default: with the
// in-process cache's 32 MiB, the reply cache's 32 MiB and the soft memory
// limit at twice the three (448 MiB), a replica stays within a 512 MiB pod.
// It fits 10,000 users of 5 skills over a shared library decoded (bench-load's
// many-tenants shape, 16.3 KB each): a user whose view was dropped costs a
// rebuild on every call of theirs, and a byte of held views saves more than a
// byte of the in-process cache, whose items live --cache.lru.max-ttl anyway.
const DefaultMaxHeldBytes = 160 << 20

// IndexConfig is what the library index needs of c.
func (c *Config) IndexConfig() libindex.Config {
	return libindex.Config{
		IndexRefresh: c.IndexRefresh, IndexMaxStale: c.IndexMaxStale, StaleIfError: c.StaleIfError,
		MaxHeldBytes: c.MaxHeldBytes, MaxObjects: c.MaxObjects, HeadTTL: c.HeadTTL,
		HeadBytes: c.HeadBytes, Concurrency: c.Concurrency, MaxCachedFileBytes: c.MaxCachedFileBytes, MaxSkills: c.MaxSkills,
		BackgroundRevalidations: c.BackgroundRevalidations,
	}
}

// Keys are the key templates of c, which the bucket layout renders and
// parses (layout.New).
func (c *Config) Keys() layout.Keys {
	return layout.Keys{
		Mount: c.Mount, SharedPrefix: c.SharedPrefix, SharedIndexKey: c.SharedIndexKey, SharedProtectedKey: c.SharedProtectedKey,
		TeamPrefix: c.TeamPrefix, TeamIndexKey: c.TeamIndexKey, TeamProtectedKey: c.TeamProtectedKey,
		SettingsKey: c.SettingsKey, IndexKey: c.IndexKey,
	}
}

// DefaultConfig returns the flag defaults.
func DefaultConfig() Config {
	var c Config
	c.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	return c
}

// Validate checks the config against the mount table.
func (c *Config) Validate(table *mounts.Table) error {
	m, ok := table.Lookup(c.Mount)
	if !ok {
		return fmt.Errorf("skills: mount %q is not in the mount table", c.Mount)
	}
	if m.Mode != mounts.ReadOnly {
		return fmt.Errorf("skills: mount %q must be read-only", c.Mount)
	}
	if err := c.Keys().Validate(table); err != nil {
		return err
	}
	if c.HeadBytes < 512 || c.Concurrency <= 0 || c.BackgroundRevalidations <= 0 || c.MaxSkills <= 0 || c.MaxObjects <= 0 || c.MaxExportBytes <= 0 || c.MaxFileBytes <= 0 || c.MaxListedFiles <= 0 || c.MaxRenderBytes <= 0 || c.HeadTTL <= 0 || c.SettingsTTL <= 0 || c.MaxHeldBytes <= 0 || c.MaxHeldIndexes < 0 || c.MaxCachedFileBytes < 0 {
		return errors.New("skills: head-bytes must be at least 512, head-ttl, settings-ttl and the other limits positive")
	}
	if c.IndexRefresh < 0 || (c.IndexRefresh > 0 && (c.IndexMaxStale < c.IndexRefresh || c.StaleIfError < c.IndexMaxStale)) {
		return errors.New("skills: want 0 <= index-refresh <= index-max-stale <= stale-if-error")
	}
	if c.ReplyCacheBytes < 0 || c.ReplySharedTTL < 0 {
		return errors.New("skills: reply-cache-bytes and reply-shared-ttl must not be negative")
	}
	if c.DefaultPageSize <= 0 || c.MaxPageSize <= 0 || c.MaxPageBytes <= 0 || c.DefaultSearchResults <= 0 || c.MaxSearchResults <= 0 || c.MaxQueryBytes <= 0 || c.MaxCharBudget <= 0 || c.SearchBodyBytes <= 0 || c.SearchBodyReads <= 0 {
		return errors.New("skills: page, search, query, search body and budget limits must be positive")
	}
	for flag, name := range map[string]string{"search-tool": c.SearchTool, "download-tool": c.DownloadTool} {
		if _, err := toolName(flag, name, ""); err != nil {
			return fmt.Errorf("skills: %w", err)
		}
	}
	return nil
}

// int32Var registers an int32 flag: the request limits are int32 like the
// proto fields they bound, so they compare without conversions.
func int32Var(f *flag.FlagSet, p *int32, name string, def int32, usage string) {
	*p = def
	f.Var((*int32Value)(p), name, usage)
}

type int32Value int32

func (v *int32Value) Get() any { return int32(*v) }

func (v *int32Value) String() string { return strconv.FormatInt(int64(*v), 10) }

func (v *int32Value) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 32)
	if err != nil {
		return err
	}
	*v = int32Value(n)
	return nil
}

// toolName returns the tool name a request gives for field, or def.
func toolName(field, name, def string) (string, error) {
	if !skillmd.ValidToolName(name) {
		return "", fmt.Errorf("%w: %s must be a tool name of at most %d characters: letters, digits, _ . : / and single hyphens", errkind.InvalidArgument, field, skillmd.MaxToolName)
	}
	if name == "" {
		return def, nil
	}
	return name, nil
}

// viewsConfig is what the views read of c.
func (c *Config) viewsConfig() views.Config {
	return views.Config{
		Mount: c.Mount, MaxSkills: c.MaxSkills, MaxObjects: c.MaxObjects, HeadBytes: c.HeadBytes,
		Concurrency: c.Concurrency, Keys: c.Keys(),
	}
}
