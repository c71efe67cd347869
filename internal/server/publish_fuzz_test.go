package server

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/errkind"
	authors "github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

// scriptedPublish plays a client's PublishSkill messages.
type scriptedPublish struct {
	grpc.ServerStream
	ctx  context.Context
	msgs []*skillsvcv1.PublishSkillRequest
	read int
	resp *skillsvcv1.PublishSkillResponse
}

func (s *scriptedPublish) Context() context.Context { return s.ctx }

func (s *scriptedPublish) Recv() (*skillsvcv1.PublishSkillRequest, error) {
	if s.read == len(s.msgs) {
		return nil, io.EOF
	}
	s.read++
	return s.msgs[s.read-1], nil
}

func (s *scriptedPublish) SendAndClose(r *skillsvcv1.PublishSkillResponse) error {
	s.resp = r
	return nil
}

// publishScript turns fuzz input into a stream: an optional header, then
// one chunk per line "path\tdata" (a line without a tab is a second
// header).
func publishScript(header bool, name, category, spec string) []*skillsvcv1.PublishSkillRequest {
	h := &skillsvcv1.PublishSkillRequest{Msg: &skillsvcv1.PublishSkillRequest_Header{Header: &skillsvcv1.PublishSkillHeader{Name: name, Category: category}}}
	var msgs []*skillsvcv1.PublishSkillRequest
	if header {
		msgs = append(msgs, h)
	}
	for line := range strings.SplitSeq(spec, "\n") {
		p, data, ok := strings.Cut(line, "\t")
		if !ok {
			msgs = append(msgs, h)
			continue
		}
		msgs = append(msgs, &skillsvcv1.PublishSkillRequest{Msg: &skillsvcv1.PublishSkillRequest_Chunk{Chunk: &skillsvcv1.FileChunk{Path: p, Data: []byte(strings.ReplaceAll(data, `\n`, "\n"))}}})
	}
	return msgs
}

// FuzzPublish sends PublishSkill streams of any shape (header missing or
// repeated, any name, category and paths) to the handler over a fresh
// library. The property: a publish either succeeds, having written only
// under the caller's library and versions root, with a live copy of
// exactly the files sent (each path canonical); or fails with a caller's
// error kind, having written nothing.
func FuzzPublish(f *testing.F) {
	md := `SKILL.md	---\nname: pdf\ndescription: Read PDFs.\n---\nbody\n`
	f.Add(true, "pdf", "", md)
	f.Add(true, "pdf", "docs", md+"\nscripts/run.py\tprint()\nscripts/run.py\t more")
	f.Add(true, "pdf", "docs", md+"\n../x\ty")
	f.Add(true, "pdf", "../up", md)
	f.Add(true, "PDF", "", md)
	f.Add(false, "pdf", "", md)
	f.Add(true, "pdf", "", md+"\nheader again")
	f.Add(true, "pdf", "", md+"\na.md\tx\nSKILL.md\tagain")
	f.Add(true, "pdf", "", "sub/SKILL.md\tx\n\tempty path")
	table := mounts.Default()
	caller, err := table.Identify(mounts.Identity{User: "alice", Thread: "t1"})
	if err != nil {
		f.Fatal(err)
	}
	ctx := auth.NewContext(context.Background(), auth.Principal{Identity: mounts.Identity{User: "alice", Thread: "t1"}, Caller: caller})
	f.Fuzz(func(t *testing.T, header bool, name, category, spec string) {
		b := memory.New()
		lib := skillstest.Library(t, b, nil)
		defer lib.Close()
		v := &Versions{Pub: authors.New(b, lib.Catalog, authors.DefaultConfig(), cache.NewLRU(1<<20)), Table: table}
		stream := &scriptedPublish{ctx: ctx, msgs: publishScript(header, name, category, spec)}
		err := NewLibrary(v, lib.Catalog).PublishSkill(stream)
		var keys []string
		if werr := objstore.Walk(ctx, b, "", func(o objstore.Object) error { keys = append(keys, o.Key); return nil }); werr != nil {
			t.Fatal(werr)
		}
		// The catalog persists its own index when it reads the library.
		keys = slices.DeleteFunc(keys, func(k string) bool { return k == "alice/settings/skills.index" || k == "_shared/settings/skills.index" })
		if err != nil {
			switch errkind.Of(err) {
			case errkind.InvalidArgument, errkind.FailedPrecondition:
			default:
				t.Fatalf("PublishSkill: %v (kind %v)", err, errkind.Of(err))
			}
			if len(keys) > 0 {
				t.Fatalf("a refused publish (%v) wrote %q", err, keys)
			}
			return
		}
		live := "alice/skills/" + name + "/"
		if category != "" {
			live = "alice/skills/" + category + "/" + name + "/"
		}
		var liveFiles []string
		for _, k := range keys {
			switch {
			case strings.HasPrefix(k, live):
				liveFiles = append(liveFiles, strings.TrimPrefix(k, live))
			case strings.HasPrefix(k, "alice/versions/"):
			default:
				t.Fatalf("a publish of %q wrote %s", live, k)
			}
		}
		var sent []string
		for _, m := range stream.msgs {
			if c := m.GetChunk(); c != nil && !slices.Contains(sent, c.GetPath()) {
				sent = append(sent, c.GetPath())
			}
		}
		slices.Sort(sent)
		if !slices.Equal(liveFiles, sent) {
			t.Fatalf("live files %q, sent %q", liveFiles, sent)
		}
		for _, p := range sent {
			if !mounts.Addressable(p) {
				t.Fatalf("accepted path %q is not canonical", p)
			}
		}
		if stream.resp.GetVersion().GetFileCount() != int32(len(sent)) {
			t.Fatalf("version = %v", stream.resp.GetVersion())
		}
	})
}
