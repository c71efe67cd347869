package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// compatibilityRules are --compatibility's values.
var compatibilityRules = map[string]skillsvcv1.SkillScopeCompatibility{
	"any":              skillsvcv1.SkillScopeCompatibility_SKILL_SCOPE_COMPATIBILITY_UNSPECIFIED,
	"empty-or-harness": skillsvcv1.SkillScopeCompatibility_SKILL_SCOPE_COMPATIBILITY_EMPTY_OR_HARNESS,
	"harness":          skillsvcv1.SkillScopeCompatibility_SKILL_SCOPE_COMPATIBILITY_HARNESS,
}

// scopeCmd groups the scope calls (AdminService) on the library --library
// names, or the caller's own.
func (a *app) scopeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scope",
		Short: "Define, list and delete scopes: named skill sets an agent chooses to see only those skills",
		Long: `scope manages the scopes of the library --library names ("shared": the organization's,
"team:ID", a user ID; empty: your own). A call names a scope with the x-skillsvc-scope header, a
token's skill_scope claim or a request's scope field, and then sees only its skills on every
listing surface; the name resolves in the caller's own library first, then its teams', then the
organization's. See docs/selection.md. These are AdminService calls: they need an admin token
(any caller in insecure mode).`,
	}
	cmd.AddCommand(a.scopeSetCmd(), a.scopeListCmd(), a.scopeDeleteCmd())
	return cmd
}

// scopeLibrary is --library, or the caller's own library.
func (a *app) scopeLibrary() (*skillsvcv1.LibraryRef, error) {
	if l := a.libraryRef(); l != nil {
		return l, nil
	}
	if a.set.User == "" {
		return nil, usageErr(errors.New(`--library is required: "shared", "team:ID" or a user ID (or --user for your own)`))
	}
	return &skillsvcv1.LibraryRef{User: a.set.User}, nil
}

func (a *app) scopeCall(cmd *cobra.Command, f func(context.Context, skillsvcv1.AdminServiceClient, *skillsvcv1.LibraryRef) (proto.Message, []*skillsvcv1.SkillScope, error)) error {
	return a.adminCall(cmd, false, func(ctx context.Context, c skillsvcv1.AdminServiceClient) (proto.Message, string, error) {
		l, err := a.scopeLibrary()
		if err != nil {
			return nil, "", err
		}
		r, scopes, err := f(ctx, c, l)
		return r, scopesText(scopes), err
	})
}

func (a *app) scopeSetCmd() *cobra.Command {
	var in, out skillsvcv1.SkillScopeRule
	var compat string
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Define (or redefine) a scope",
		Example: `  skillctl scope set contracts --include-category legal --include-tag contracts --exclude-name 'draft-*' --library shared
  skillctl scope set claude --compatibility empty-or-harness --library team:platform`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rule, ok := compatibilityRules[compat]
			if !ok {
				return usageErr(fmt.Errorf("--compatibility %q: want any, empty-or-harness or harness", compat))
			}
			return a.scopeCall(cmd, func(ctx context.Context, c skillsvcv1.AdminServiceClient, l *skillsvcv1.LibraryRef) (proto.Message, []*skillsvcv1.SkillScope, error) {
				r, err := c.SetSkillScope(ctx, &skillsvcv1.SetSkillScopeRequest{Library: l, Scope: &skillsvcv1.SkillScope{
					Name: args[0], Include: &in, Exclude: &out, Compatibility: rule,
				}})
				return r, r.GetScopes(), err
			})
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&in.Categories, "include-category", nil, "show skills of these categories (repeat or comma-separate)")
	f.StringSliceVar(&in.Tags, "include-tag", nil, "show skills tagged so (frontmatter tags or keywords; case-insensitive)")
	f.StringSliceVar(&in.Names, "include-name", nil, "show skills of these names, exact or glob ('contract-*')")
	f.StringSliceVar(&out.Categories, "exclude-category", nil, "hide skills of these categories")
	f.StringSliceVar(&out.Tags, "exclude-tag", nil, "hide skills tagged so")
	f.StringSliceVar(&out.Names, "exclude-name", nil, "hide skills of these names, exact or glob")
	f.StringVar(&compat, "compatibility", "any", "match skills' compatibility against the caller's harness: any, empty-or-harness (empty or mentions it) or harness (mentions it)")
	return cmd
}

func (a *app) scopeListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List a library's scopes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.scopeCall(cmd, func(ctx context.Context, c skillsvcv1.AdminServiceClient, l *skillsvcv1.LibraryRef) (proto.Message, []*skillsvcv1.SkillScope, error) {
				r, err := c.ListSkillScopes(ctx, &skillsvcv1.ListSkillScopesRequest{Library: l})
				return r, r.GetScopes(), err
			})
		},
	}
}

func (a *app) scopeDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a scope of a library",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.scopeCall(cmd, func(ctx context.Context, c skillsvcv1.AdminServiceClient, l *skillsvcv1.LibraryRef) (proto.Message, []*skillsvcv1.SkillScope, error) {
				r, err := c.DeleteSkillScope(ctx, &skillsvcv1.DeleteSkillScopeRequest{Library: l, Name: args[0]})
				return r, r.GetScopes(), err
			})
		},
	}
}

// scopesText is one line per scope: its name and rules, each cell inert.
func scopesText(scopes []*skillsvcv1.SkillScope) string {
	lines := make([]string, 0, len(scopes))
	for _, s := range scopes {
		parts := []string{inert(s.GetName())}
		for _, side := range []struct {
			name string
			r    *skillsvcv1.SkillScopeRule
		}{{"include", s.GetInclude()}, {"exclude", s.GetExclude()}} {
			for _, f := range []struct {
				field string
				list  []string
			}{{"category", side.r.GetCategories()}, {"tag", side.r.GetTags()}, {"name", side.r.GetNames()}} {
				if len(f.list) > 0 {
					parts = append(parts, side.name+"-"+f.field+"="+inert(strings.Join(f.list, ",")))
				}
			}
		}
		for k, v := range compatibilityRules {
			if v == s.GetCompatibility() && v != 0 {
				parts = append(parts, "compatibility="+k)
			}
		}
		lines = append(lines, strings.Join(parts, "  "))
	}
	return strings.Join(lines, "\n")
}
