package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// errNoLeader is returned when no member names a leader.
var errNoLeader = errors.New("no etcd member knows of a leader right now")

// clusterView is the membership and who leads, as the members see it.
type clusterView struct {
	members []*etcdserverpb.Member
	leader  uint64 // 0 when no reachable member names one
	term    uint64
}

// viewCluster lists the members and asks each reachable one who leads.
func viewCluster(ctx context.Context, client *clientv3.Client) (clusterView, error) {
	list, err := client.MemberList(ctx)
	if err != nil {
		return clusterView{}, fmt.Errorf("listing etcd members: %w", err)
	}
	v := clusterView{members: list.Members}
	slices.SortFunc(v.members, func(a, b *etcdserverpb.Member) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range list.Members {
		for _, ep := range m.ClientURLs {
			st, err := client.Status(ctx, ep)
			if err == nil && st.RaftTerm >= v.term {
				v.leader, v.term = st.Leader, st.RaftTerm
			}
		}
	}
	return v, nil
}

func (v clusterView) name(id uint64) string {
	for _, m := range v.members {
		if m.ID == id {
			return fmt.Sprintf("%s (%x)", m.Name, m.ID)
		}
	}
	return fmt.Sprintf("%x", id)
}

// find returns the member called nameOrID (its name or hex ID).
func (v clusterView) find(nameOrID string) (*etcdserverpb.Member, error) {
	id, idErr := strconv.ParseUint(nameOrID, 16, 64)
	var names []string
	for _, m := range v.members {
		if m.Name == nameOrID || (idErr == nil && m.ID == id) {
			return m, nil
		}
		names = append(names, m.Name)
	}
	return nil, fmt.Errorf("no etcd member %q: the members are %s", nameOrID, strings.Join(names, ", "))
}

// printMembers prints the members line of `etcd status`.
func printMembers(ctx context.Context, client *clientv3.Client, out io.Writer) error {
	v, err := viewCluster(ctx, client)
	if err != nil {
		return err
	}
	var parts []string
	for _, m := range v.members {
		part := v.name(m.ID)
		if m.ID == v.leader {
			part += " leader"
		}
		parts = append(parts, part)
	}
	fmt.Fprintf(out, "members:        %s\n", strings.Join(parts, ", "))
	return nil
}

func (a *app) moveLeaderCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "move-leader MEMBER",
		Short:   "hand raft leadership to MEMBER (a name or hex ID, see etcd status)",
		Example: "  minictl etcd move-leader minicp-etcd-1",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(cmd, "etcd move-leader takes one MEMBER, a name or hex ID (see minictl etcd status)")
			}
			return nil
		},
		RunE: a.withEtcd(func(ctx context.Context, client *clientv3.Client, args []string) error {
			return moveLeader(ctx, client, args[0], a.out)
		}),
	}
}

// moveLeader runs `etcd move-leader MEMBER`: the request must reach the
// current leader, so it is sent to the leader's own client URL.
func moveLeader(ctx context.Context, client *clientv3.Client, member string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := viewCluster(ctx, client)
	if err != nil {
		return err
	}
	target, err := v.find(member)
	if err != nil {
		return err
	}
	if v.leader == 0 {
		return errNoLeader
	}
	if v.leader == target.ID {
		fmt.Fprintf(out, "%s is already the leader (raft term %d)\n", v.name(target.ID), v.term)
		return nil
	}
	leader, err := v.find(strconv.FormatUint(v.leader, 16))
	if err != nil {
		return err
	}
	lc, err := clientv3.New(clientv3.Config{Endpoints: leader.ClientURLs, DialTimeout: 3 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("connecting to the leader %s: %w", v.name(leader.ID), err)
	}
	defer lc.Close()
	if _, err := lc.MoveLeader(ctx, target.ID); err != nil {
		return fmt.Errorf("moving the leader from %s to %s: %w", v.name(leader.ID), v.name(target.ID), err)
	}
	after, err := viewCluster(ctx, client)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "leader moved from %s to %s; raft term %d -> %d\n", v.name(leader.ID), after.name(after.leader), v.term, after.term)
	return nil
}
