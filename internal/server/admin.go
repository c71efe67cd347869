package server

import (
	"context"
	"fmt"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// Admin serves skillsvc.v1.AdminService, the operators' calls. They carry no
// worker identity (auth exempts the service): the request names the user.
type Admin struct {
	skillsvcv1.UnimplementedAdminServiceServer
	catalog *skills.Catalog
}

// NewAdmin returns the service over the catalog whose caches it drops.
func NewAdmin(c *skills.Catalog) *Admin {
	return &Admin{catalog: c}
}

// DropSkillIndex implements AdminService. The catalog validates the user ID.
func (a *Admin) DropSkillIndex(ctx context.Context, req *skillsvcv1.DropSkillIndexRequest) (*skillsvcv1.DropSkillIndexResponse, error) {
	user, shared := req.GetUser(), req.GetShared()
	var err error
	switch {
	case user != "" && shared:
		return nil, fmt.Errorf("%w: give user or shared, not both", errkind.InvalidArgument)
	case shared:
		err = a.catalog.DropSharedIndex(ctx)
	case user != "":
		err = a.catalog.DropIndex(ctx, user)
	default:
		return nil, fmt.Errorf("%w: user or shared is required", errkind.InvalidArgument)
	}
	if err != nil {
		return nil, err
	}
	return &skillsvcv1.DropSkillIndexResponse{}, nil
}
