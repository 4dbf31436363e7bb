package ui

import (
	"context"
	"net/http"
	"strconv"
	"time"

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

// EtcdStatus reads the etcd view now.
func (v *Views) EtcdStatus(ctx context.Context) (EtcdView, error) {
	var st embedetcd.Status
	view := EtcdView{Embedded: v.cfg.Cluster != nil}
	if v.cfg.Cluster != nil {
		st = v.cfg.Cluster.Status()
		view.QuotaBytes = v.cfg.Etcd.QuotaBackendBytes
		if view.QuotaBytes == 0 {
			view.QuotaBytes = defaultQuotaBytes
		}
		view.QuotaBytes = max(view.QuotaBytes, 0) // negative: no quota
		view.LeaseCheckpoint = &LeaseCheckpointView{Enabled: v.cfg.Etcd.EnableLeaseCheckpoint, Interval: v.cfg.Etcd.LeaseCheckpointInterval.String()}
	} else {
		ctx, cancel := context.WithTimeout(ctx, etcdStatusTimeout)
		defer cancel()
		var err error
		if st, err = embedetcd.StatusOf(ctx, v.cfg.EtcdClient); err != nil {
			return EtcdView{}, err
		}
	}
	view.Leader, view.Alarms = st.Leader, st.Alarms
	if view.Alarms == nil {
		view.Alarms = []string{}
	}
	for _, m := range st.Members {
		view.Members = append(view.Members, MemberView{
			Name: m.Name, ID: strconv.FormatUint(m.ID, 16), ClientURL: m.ClientURL, Running: m.Running, IsLeader: m.IsLeader,
			RaftTerm: m.RaftTerm, RaftIndex: m.RaftIndex, Revision: m.Revision, CompactRevision: m.CompactRevision,
			DBSize: m.DBSize, DBSizeInUse: m.DBSizeInUse,
		})
		view.CompactedRevision = max(view.CompactedRevision, m.CompactRevision)
		view.DBSize, view.DBSizeInUse = max(view.DBSize, m.DBSize), max(view.DBSizeInUse, m.DBSizeInUse)
		if m.Name == st.Leader && m.Running {
			view.Revision, view.RaftTerm = m.Revision, m.RaftTerm
		}
	}
	if st.Leader == "" { // no leader: the most advanced member
		for _, m := range view.Members {
			view.Revision, view.RaftTerm = max(view.Revision, m.Revision), max(view.RaftTerm, m.RaftTerm)
		}
	}
	return view, nil
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
