package ui

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"minicp/embedetcd"
)

// defaultQuotaBytes is etcd's --quota-backend-bytes when it is 0.
const defaultQuotaBytes = 2 << 30

// etcdStatusTimeout bounds the status reads of one request.
const etcdStatusTimeout = 3 * time.Second

// EtcdView is what GET /debug/etcd answers: the revision axis's two ends,
// who leads in which term, and the database against its quota.
type EtcdView struct {
	// Embedded is true when minicp runs etcd in-process; false with
	// --etcd-servers (then read through the client's Maintenance API).
	Embedded bool `json:"embedded"`
	// Revision is etcd's current revision (the leader's; the highest
	// member's when there is no leader); CompactedRevision the revision
	// history is compacted to (0: never). Watches and reads from before
	// CompactedRevision fail with "required revision has been compacted".
	Revision          int64 `json:"revision"`
	CompactedRevision int64 `json:"compactedRevision"`
	// Leader is the leading member's name ("" during an election) and
	// RaftTerm its term: every election adds one.
	Leader   string       `json:"leader"`
	RaftTerm uint64       `json:"raftTerm"`
	Members  []MemberView `json:"members"`
	// DBSize is the largest member's database file; QuotaBytes the size
	// that raises NOSPACE (0 when unknown: etcd v3.5 does not report it).
	DBSize      int64 `json:"dbSize"`
	DBSizeInUse int64 `json:"dbSizeInUse"`
	QuotaBytes  int64 `json:"quotaBytes"`
	// Alarms raised, e.g. "NOSPACE on member 8e9e05c52164694d".
	Alarms []string `json:"alarms"`
	// LeaseCheckpoint is nil when unknown (an external etcd).
	LeaseCheckpoint *LeaseCheckpointView `json:"leaseCheckpoint,omitempty"`
	// Clusters has one axis per etcd cluster, the main one (the figures
	// above) first, then those holding resources apart.
	Clusters []ClusterView `json:"clusters"`
}

// MemberView is one member's line.
type MemberView struct {
	Name            string `json:"name"`
	ID              string `json:"id"` // hexadecimal, as etcdctl prints it
	ClientURL       string `json:"clientURL"`
	Running         bool   `json:"running"`
	IsLeader        bool   `json:"isLeader"`
	RaftTerm        uint64 `json:"raftTerm"`
	RaftIndex       uint64 `json:"raftIndex"`
	Revision        int64  `json:"revision"`
	CompactRevision int64  `json:"compactRevision"`
	DBSize          int64  `json:"dbSize"`
	DBSizeInUse     int64  `json:"dbSizeInUse"`
}

// LeaseCheckpointView is the lease checkpoint setting (M13): off, a leader change restarts every lease's TTL.
type LeaseCheckpointView struct {
	Enabled  bool   `json:"enabled"`
	Interval string `json:"interval"`
}

// ClusterView is one etcd cluster on its own revision axis: the main one,
// and each cluster that holds some resources apart (events on their own
// etcd, M10), whose revisions count that cluster's writes only.
type ClusterView struct {
	// Name is "main" for the etcd holding everything not listed
	// elsewhere, else what the cluster holds, e.g. "events".
	Name string `json:"name"`
	// Resources are the resources it holds, as /debug/watchcache names
	// them; empty for the main cluster (every other resource).
	Resources         []string     `json:"resources"`
	Revision          int64        `json:"revision"`
	CompactedRevision int64        `json:"compactedRevision"`
	Leader            string       `json:"leader"`
	RaftTerm          uint64       `json:"raftTerm"`
	Members           []MemberView `json:"members"`
	DBSize            int64        `json:"dbSize"`
}

// EtcdStatus reads the etcd view now: the main cluster's figures, and
// every cluster's axis in Clusters (the main one first).
func (v *Views) EtcdStatus(ctx context.Context) (EtcdView, error) {
	view := EtcdView{Embedded: v.cfg.Cluster != nil}
	st, err := clusterStatus(ctx, v.cfg.Cluster, v.cfg.EtcdClient)
	if err != nil {
		return EtcdView{}, err
	}
	if v.cfg.Cluster != nil {
		view.QuotaBytes = v.cfg.Etcd.QuotaBackendBytes
		if view.QuotaBytes == 0 {
			view.QuotaBytes = defaultQuotaBytes
		}
		view.QuotaBytes = max(view.QuotaBytes, 0) // negative: no quota
		view.LeaseCheckpoint = &LeaseCheckpointView{Enabled: v.cfg.Etcd.EnableLeaseCheckpoint, Interval: v.cfg.Etcd.LeaseCheckpointInterval.String()}
	}
	main := clusterView("main", nil, st)
	view.Revision, view.CompactedRevision, view.Leader, view.RaftTerm, view.Members = main.Revision, main.CompactedRevision, main.Leader, main.RaftTerm, main.Members
	view.Alarms = st.Alarms
	if view.Alarms == nil {
		view.Alarms = []string{}
	}
	for _, m := range main.Members {
		view.DBSizeInUse = max(view.DBSizeInUse, m.DBSizeInUse)
	}
	view.DBSize = main.DBSize
	view.Clusters = []ClusterView{main}
	for _, other := range v.cfg.Others {
		ost, err := clusterStatus(ctx, other.Cluster, other.Client)
		if err != nil {
			return EtcdView{}, fmt.Errorf("the %s etcd: %w", other.Name, err)
		}
		view.Clusters = append(view.Clusters, clusterView(other.Name, other.Resources, ost))
	}
	return view, nil
}

// clusterStatus reads a cluster's status: in-process when it is embedded,
// through the client's Maintenance API otherwise.
func clusterStatus(ctx context.Context, cluster *embedetcd.Cluster, client *clientv3.Client) (embedetcd.Status, error) {
	if cluster != nil {
		return cluster.Status(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, etcdStatusTimeout)
	defer cancel()
	return embedetcd.StatusOf(ctx, client)
}

// clusterView is one cluster's axis from its status: the leader's revision
// and term (the most advanced member's without a leader), the highest
// compacted revision, the largest database.
func clusterView(name string, resources []string, st embedetcd.Status) ClusterView {
	c := ClusterView{Name: name, Resources: resources, Leader: st.Leader, Members: []MemberView{}}
	if c.Resources == nil {
		c.Resources = []string{}
	}
	for _, m := range st.Members {
		c.Members = append(c.Members, MemberView{
			Name: m.Name, ID: strconv.FormatUint(m.ID, 16), ClientURL: m.ClientURL, Running: m.Running, IsLeader: m.IsLeader,
			RaftTerm: m.RaftTerm, RaftIndex: m.RaftIndex, Revision: m.Revision, CompactRevision: m.CompactRevision,
			DBSize: m.DBSize, DBSizeInUse: m.DBSizeInUse,
		})
		c.CompactedRevision = max(c.CompactedRevision, m.CompactRevision)
		c.DBSize = max(c.DBSize, m.DBSize)
		if m.Name == st.Leader && m.Running {
			c.Revision, c.RaftTerm = m.Revision, m.RaftTerm
		}
	}
	if st.Leader == "" { // no leader: the most advanced member
		for _, m := range c.Members {
			c.Revision, c.RaftTerm = max(c.Revision, m.Revision), max(c.RaftTerm, m.RaftTerm)
		}
	}
	return c
}

func (v *Views) serveEtcd(w http.ResponseWriter, req *http.Request) {
	view, err := v.EtcdStatus(req.Context())
	if err != nil {
		v.cfg.Logger.Debug("etcd status failed", "err", err)
		writeStatus(w, apierrors.NewServiceUnavailable("etcd did not report its status: "+err.Error()+"; is etcd running? (minictl etcd status asks it directly)"))
		return
	}
	writeJSON(w, view)
}
