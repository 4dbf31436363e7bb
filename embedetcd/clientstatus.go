package embedetcd

// The cluster status of an etcd minicp did not start (--etcd-servers),
// read through the client's Cluster and Maintenance APIs: the same Status
// that (*Cluster).Status reads in-process.

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/types"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// memberStatusTimeout bounds the wait for one member's status, so that a
// member that is down only makes its own line "not running".
const memberStatusTimeout = time.Second

// StatusOf reports the state of every member of the etcd cluster client
// reaches, as (*Cluster).Status does for an embedded one: it lists the
// members, asks each one's first client URL for its status (a member that
// does not answer within a second is reported not Running), and reads the
// compacted revision and the alarms once for the cluster. It fails only
// when the member list or the alarm list cannot be read.
func StatusOf(ctx context.Context, client *clientv3.Client) (Status, error) {
	list, err := client.MemberList(ctx)
	if err != nil {
		return Status{}, fmt.Errorf("listing etcd members: %w", err)
	}
	var st Status
	for _, m := range list.Members {
		ms := MemberStatus{Name: m.Name, ID: m.ID}
		if len(m.ClientURLs) > 0 {
			ms.ClientURL = m.ClientURLs[0]
			memberStatus(ctx, client, &ms)
		}
		st.Members = append(st.Members, ms)
	}
	compacted, err := CompactedRevision(ctx, client)
	if err != nil {
		return Status{}, err
	}
	for i := range st.Members {
		if st.Members[i].Running {
			st.Members[i].CompactRevision = compacted
		}
	}
	alarms, err := ListAlarms(ctx, client)
	if err != nil {
		return Status{}, err
	}
	for _, a := range alarms {
		st.Alarms = append(st.Alarms, fmt.Sprintf("%s on member %s", a.Alarm, types.ID(a.MemberID)))
	}
	st.Leader = agreedLeader(st.Members)
	return st, nil
}

// memberStatus fills in what the member at ms.ClientURL says of itself.
func memberStatus(ctx context.Context, client *clientv3.Client, ms *MemberStatus) {
	ctx, cancel := context.WithTimeout(ctx, memberStatusTimeout)
	defer cancel()
	resp, err := client.Status(ctx, ms.ClientURL)
	if err != nil {
		return // reported as not running
	}
	ms.Running = true
	ms.Leader = resp.Leader
	ms.IsLeader = resp.Leader == ms.ID
	ms.RaftTerm = resp.RaftTerm
	ms.RaftIndex = resp.RaftAppliedIndex
	ms.Revision = resp.Header.Revision
	ms.DBSize, ms.DBSizeInUse = resp.DbSize, resp.DbSizeInUse
}

// agreedLeader is the name of the member every running member follows, or
// "" when they know of none or disagree.
func agreedLeader(members []MemberStatus) string {
	leaders := map[uint64]bool{}
	for _, ms := range members {
		if ms.Running {
			leaders[ms.Leader] = true
		}
	}
	if len(leaders) != 1 {
		return ""
	}
	for _, ms := range members {
		if leaders[ms.ID] {
			return ms.Name
		}
	}
	return ""
}
