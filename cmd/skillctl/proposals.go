package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// The admins' bulk clean-up of the authors' path.

func (a *app) deleteVersionsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete-versions NAME VERSION...",
		Short: "Delete versions or proposals of a skill by full id (not a labelled one)",
		Long: `delete-versions asks the server (AdminService.DeleteSkillVersions) to delete versions or proposals of
a skill by full id, unreadable records too. A version a label points at is refused: move the label
(latest: roll back or delete the skill) first. Their blobs go with the next "skillctl gc".`,
		Example: "  skillctl admin delete-versions sql sha256:0123… --library shared",
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.adminCall(cmd, true, func(ctx context.Context, c skillsvcv1.AdminServiceClient) (proto.Message, string, error) {
				r, err := c.DeleteSkillVersions(ctx, &skillsvcv1.DeleteSkillVersionsRequest{Library: a.libraryRef(), Name: args[0], Versions: args[1:]})
				return r, fmt.Sprintf("deleted %d", r.GetDeleted()), err
			})
		},
	}
}

func (a *app) rejectProposalsCmd() *cobra.Command {
	var author, comment string
	var olderThan time.Duration
	var del bool
	cmd := &cobra.Command{
		Use:   "reject-proposals [NAME]",
		Short: "Reject (or delete) pending proposals in bulk: of a skill or the whole library, of an author, older than an age",
		Long: `reject-proposals asks the server (AdminService.RejectProposals) to reject the pending proposals
(non-admins' publishes under --library.review) of one skill, or of the whole library without NAME;
--author picks one author's (a user ID), --older-than expires those older than it. --delete deletes
the proposals picked, rejected ones too, which frees the skill's --library.max-proposals.`,
		Example: `  skillctl admin reject-proposals sql --library shared --author mallory --comment spam
  skillctl admin reject-proposals --library shared --older-than 720h --comment expired
  skillctl admin reject-proposals sql --library team:legal --delete`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.adminCall(cmd, true, func(ctx context.Context, c skillsvcv1.AdminServiceClient) (proto.Message, string, error) {
				req := &skillsvcv1.RejectProposalsRequest{Library: a.libraryRef(), Author: author, Comment: comment, Delete: del}
				if len(args) == 1 {
					req.Name = args[0]
				}
				if olderThan > 0 {
					req.CreatedBefore = timestamppb.New(time.Now().Add(-olderThan))
				}
				r, err := c.RejectProposals(ctx, req)
				text := fmt.Sprintf("rejected %d, deleted %d", r.GetRejected(), r.GetDeleted())
				if u := r.GetUnreadableRecords(); len(u) > 0 {
					text += "\nunreadable records left (delete-versions removes them): " + strings.Join(u, ", ")
				}
				return r, text, err
			})
		},
	}
	cmd.Flags().StringVar(&author, "author", "", "only this author's proposals (a user ID)")
	cmd.Flags().StringVar(&comment, "comment", "", "the review comment the authors read")
	cmd.Flags().DurationVar(&olderThan, "older-than", 0, "only proposals created longer ago than this")
	cmd.Flags().BoolVar(&del, "delete", false, "delete the proposals picked, rejected ones too, instead of rejecting")
	return cmd
}
