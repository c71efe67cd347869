package skills

import (
	"context"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/replies"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// getReply answers a GetSkill call as the server's handler does
// (internal/server's getReply): from rc when the skill's reply is kept
// there, else encoded by enc and kept as the snapshot says (its version
// current, admitted).
func getReply(ctx context.Context, lib *Library, rc *replies.Cache, id mounts.Caller, ref string, enc func(skillview.Detail) ([]byte, error)) ([]byte, error) {
	snap, err := lib.Catalog.Snapshot(ctx, id)
	if err != nil {
		return nil, err
	}
	sk, err := snap.Skill(ref)
	if err != nil {
		return nil, err
	}
	key, early := sk.ReplyKey()
	if early {
		if b, ok := rc.Hit(replies.KindGet, key); ok {
			return b, nil
		}
	}
	f, err := sk.Read(ctx)
	if err != nil {
		return nil, err
	}
	build := func() ([]byte, error) {
		d, err := f.Detail(ctx)
		if err != nil {
			return nil, err
		}
		return enc(d)
	}
	if !f.Current() || !sk.Admit(key) {
		return build()
	}
	return rc.Get(ctx, replies.KindGet, key, build)
}
