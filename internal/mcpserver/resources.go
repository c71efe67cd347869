package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/mcpserver/skillres"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// The extension's resource side: resources/list names each served skill's
// SKILL.md, resources/directory/read lists a skill folder's children, and
// every resources/read result is one the schema's union accepts
// (internal/mcpserver/skillres holds the pure parts).

const (
	directoryReadMethod = "resources/directory/read"
	directoryMIMEType   = "inode/directory"
)

// extensionCapability is the extension's settings in
// capabilities.extensions, inline as SEP-2640 places them.
func extensionCapability() map[string]any {
	return map[string]any{"directoryRead": true}
}

type readDirectoryParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type readDirectoryResult struct {
	mcp.ResultBase
	mcp.Cacheable
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// resourceMethods answers resources/list from the catalog a page at a time
// (the SDK lists only resources added one by one), and sends every
// resources/read result whole. It runs inside withIdentity, so its calls
// carry the caller's identity.
func (s *identityServer) resourceMethods(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "resources/list":
			if lr, ok := req.(*mcp.ListResourcesRequest); ok {
				res, err := s.listResources(ctx, lr)
				if err != nil {
					return nil, err
				}
				return res, nil
			}
		case "resources/read":
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.ReadResourceResult); ok && err == nil && skillres.HasEmptyText(r) {
				return skillres.EmptyTextResult{ReadResourceResult: r}, nil
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// listResources lists the SKILL.md of each skill skills/list serves, paged
// as skills/list is (the cursor is ListSkills' page token).
func (s *identityServer) listResources(ctx context.Context, req *mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error) {
	var token string
	if req.Params != nil {
		token = req.Params.Cursor
	}
	resources, page, err := servedPage(ctx, s, token, s.manifestResource)
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourcesResult{Meta: libraryDigest(page).Meta, Cacheable: s.cacheable(), Resources: resources, NextCursor: page.NextPageToken}, nil
}

// manifestResource is the skill's SKILL.md as a Resource, named and
// described by its frontmatter as the extension asks.
func (s *identityServer) manifestResource(sk *skillview.Skill) *mcp.Resource {
	var fm struct{ Name, Description string }
	json.Unmarshal(sk.JSON, &fm) // served skills have both, as text
	manifest := sk.Path + "/" + skillFileName
	r := &mcp.Resource{URI: s.uriOf(manifest), Name: fm.Name, Description: fm.Description, MIMEType: mimeType(manifest)}
	for _, f := range manifestFiles(sk) {
		if f.Path == manifest {
			r.Size = int64(f.Size)
		}
	}
	return r
}

// manifestFiles are the files of sk's manifest, none without one.
func manifestFiles(sk *skillview.Skill) []skillview.ManifestFile {
	if sk.Manifest == nil {
		return nil
	}
	return sk.Manifest.Files
}

// readDirectory lists the direct children of a served skill's folder, or
// of a folder in it: subfolders as inode/directory, files with their type
// and size, a page at a time in name order.
func (s *identityServer) readDirectory(ctx context.Context, _ *mcp.ServerSession, p *readDirectoryParams) (*readDirectoryResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("%s needs params.uri, a skill's folder (skill://<skill-path>) or a folder in it", directoryReadMethod)
	}
	// A folder's URI is its path's, with or without a trailing slash.
	dir, err := skillres.Parse(s.h.skillsMount, strings.TrimSuffix(p.URI, "/"))
	if err != nil {
		return nil, notFound(p.URI, "%.200s: %v", p.URI, err)
	}
	sk, err := s.skillOf(ctx, dir)
	if err != nil {
		return nil, err
	}
	children, isDir := skillres.Children(dir, manifestFiles(sk))
	if !isDir {
		return nil, invalidParams("%.200s is not a directory of a skill served over this extension (a file is read with resources/read)", p.URI)
	}
	var after string
	if p.Cursor != "" {
		if after, err = skillres.DecodeCursor(dir, p.Cursor); err != nil {
			return nil, invalidParams("%.200s: %v", p.URI, err)
		}
	}
	start, _ := slices.BinarySearchFunc(children, after, func(c skillres.Child, name string) int { return strings.Compare(c.Name, name) })
	if start < len(children) && children[start].Name == after {
		start++
	}
	page := children[start:min(len(children), start+s.h.cfg.SkillsPageSize)]
	res := &readDirectoryResult{Cacheable: s.cacheable(), ResultType: "complete", Resources: make([]*mcp.Resource, 0, len(page))}
	for _, c := range page {
		r := &mcp.Resource{URI: s.uriOf(dir + "/" + c.Name), Name: c.Name, Size: c.Size}
		if c.Dir {
			r.MIMEType = directoryMIMEType
		} else {
			r.MIMEType = mimeType(c.Name)
		}
		res.Resources = append(res.Resources, r)
	}
	if start+len(page) < len(children) {
		res.NextCursor = skillres.EncodeCursor(dir, page[len(page)-1].Name)
	}
	return res, nil
}

// skillOf returns the served skill whose folder is dir or holds it. A
// skill folder is <category>/<skill> or <skill> under the mount, the
// deeper first.
func (s *identityServer) skillOf(ctx context.Context, dir string) (*skillview.Skill, error) {
	segs := strings.SplitN(strings.TrimPrefix(dir, s.h.skillsMount+"/"), "/", 3)
	candidates := []string{s.h.skillsMount + "/" + segs[0]}
	if len(segs) > 1 {
		candidates = append([]string{candidates[0] + "/" + segs[1]}, candidates...)
	}
	for _, root := range candidates {
		sk, err := s.servedSkill(ctx, root)
		if ns, ok := errors.AsType[notServed](err); ok {
			return nil, invalidParams("The skill at %.200s is not served over this extension: %s", s.uriOf(root), ns)
		}
		if code := status.Code(err); code == codes.NotFound || code == codes.InvalidArgument || errors.Is(err, errNotCanonical) {
			continue
		} else if err != nil {
			return nil, protocolError(err)
		}
		return sk, nil
	}
	return nil, notFound(s.uriOf(dir), "%.200s is not in a skill served over this extension", s.uriOf(dir))
}
