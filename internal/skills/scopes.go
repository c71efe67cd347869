package skills

import (
	"cmp"
	"context"
	"fmt"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/settings"
)

// SetScope defines (or redefines) the scope d in the library l: a user's
// (in their settings), a team's or the shared one (in its side object,
// beside the protected names). It returns the library's scopes after;
// every replica applies the change as it applies a dropped index.
func (c *Catalog) SetScope(ctx context.Context, l layout.LibraryRef, d settings.ScopeDef) ([]settings.ScopeDef, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return c.changeScopes(ctx, l, func(defs []settings.ScopeDef) ([]settings.ScopeDef, error) { return settings.PutScope(defs, d), nil })
}

// DeleteScope deletes the scope name of the library l (NOT_FOUND when it
// defines none of that name) and returns the library's scopes after.
func (c *Catalog) DeleteScope(ctx context.Context, l layout.LibraryRef, name string) ([]settings.ScopeDef, error) {
	return c.changeScopes(ctx, l, func(defs []settings.ScopeDef) ([]settings.ScopeDef, error) {
		out, ok := settings.DeleteScope(defs, name)
		if !ok {
			return nil, fmt.Errorf("%w: the library defines no scope %q", errkind.NotFound, name)
		}
		return out, nil
	})
}

// Scopes returns the scopes the library l defines, by name.
func (c *Catalog) Scopes(ctx context.Context, l layout.LibraryRef) ([]settings.ScopeDef, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if l.User != "" {
		s, err := c.settings.Load(ctx, l.User)
		return s.Scopes, err
	}
	key, err := c.views.Layout.ProtectedList(l)
	if err != nil {
		return nil, err
	}
	doc, _, err := settings.Sides{Bucket: c.bucket}.Load(ctx, key)
	return doc.Scopes, err
}

func (c *Catalog) changeScopes(ctx context.Context, l layout.LibraryRef, change func([]settings.ScopeDef) ([]settings.ScopeDef, error)) ([]settings.ScopeDef, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if l.User != "" {
		id, err := c.views.Operator(l.User)
		if err != nil {
			return nil, err
		}
		var out []settings.ScopeDef
		var changeErr error
		err = c.settings.Update(ctx, id, func(s *settings.User) bool {
			out, changeErr = change(s.Scopes)
			if changeErr == nil {
				changeErr = settings.CheckScopes(out)
			}
			if changeErr != nil {
				return false
			}
			s.Scopes = out
			return true
		})
		if err = cmp.Or(changeErr, err); err != nil {
			return nil, err
		}
		c.changed(l, true)
		return out, nil
	}
	key, err := c.views.Layout.ProtectedList(l)
	if err != nil {
		return nil, err
	}
	out, err := settings.Sides{Bucket: c.bucket}.SetScopes(ctx, key, change)
	if err != nil {
		return nil, err
	}
	// Listed with the library's index: dropping it lists the new version.
	return out, c.DropLibraryIndex(ctx, l)
}
