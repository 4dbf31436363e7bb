package ui

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"minicp/embedetcd"
	"minicp/lease"
	"minicp/registry"
)

const (
	defaultPageSize = 50
	maxPageSize     = 200
	// ageBuckets split [0, grace period) for the renewal-age histogram;
	// one more bucket counts the nodes past it.
	ageBuckets = 10
	// nominalGrace scales the histogram when no controller runs here
	// (upstream's --node-monitor-grace-period).
	nominalGrace = lease.DefaultGracePeriod
)

// NodesView is what GET /debug/nodes answers: every node counted, one page
// of them in detail. Query parameters: page (from 0), pageSize (1-200,
// default 50), ready (True, False or Unknown: only those nodes) and sort
// ("name", the default, or "renewal": the longest silent first).
type NodesView struct {
	Now time.Time `json:"now"`
	// GracePeriodSeconds is the lifecycle controller's grace period; 0
	// when no controller runs in this process (ControllerRunning false).
	GracePeriodSeconds float64 `json:"gracePeriodSeconds"`
	ControllerRunning  bool    `json:"controllerRunning"`
	// Total nodes; Ready counts them by Ready condition status ("True",
	// "False", "Unknown"; "None" for a node without the condition).
	Total int            `json:"total"`
	Ready map[string]int `json:"ready"`
	// NoLease counts nodes without a Lease in kube-node-lease.
	NoLease int `json:"noLease"`
	// Ages is the histogram of seconds since each node's last renewal.
	Ages AgeHistogram `json:"ages"`
	// The page: Matching nodes pass the ready filter, in Pages pages.
	Page     int       `json:"page"`
	PageSize int       `json:"pageSize"`
	Pages    int       `json:"pages"`
	Matching int       `json:"matching"`
	Sort     string    `json:"sort"`
	Filter   string    `json:"readyFilter,omitempty"`
	Nodes    []NodeRow `json:"nodes"`
	// EtcdLeaseError says why the page's etcd lease TTLs are missing.
	EtcdLeaseError string `json:"etcdLeaseError,omitempty"`
}

// AgeHistogram counts nodes by time since their last renewal: Counts[i]
// for ages in [i, i+1) x BucketSeconds, the last entry for the grace
// period and beyond.
type AgeHistogram struct {
	BucketSeconds float64 `json:"bucketSeconds"`
	Counts        []int   `json:"counts"`
}

// NodeRow is one node of the page.
type NodeRow struct {
	Name        string    `json:"name"`
	Ready       string    `json:"ready"` // True, False, Unknown or None
	ReadyReason string    `json:"readyReason,omitempty"`
	ReadySince  time.Time `json:"readySince,omitzero"`
	Unreachable bool      `json:"unreachable"` // tainted node.kubernetes.io/unreachable
	// Lease: its duration, last renewal, and the seconds since (-1: no Lease).
	LeaseDurationSeconds int32     `json:"leaseDurationSeconds,omitempty"`
	RenewTime            time.Time `json:"renewTime,omitzero"`
	SecondsSinceRenewal  float64   `json:"secondsSinceRenewal"`
	LeaseResourceVersion string    `json:"leaseResourceVersion,omitempty"`
	// EtcdLease is the etcd lease the Lease key is bound to; nil when the
	// key has none (upstream's plain keys) or was not looked up.
	EtcdLease *EtcdLeaseView `json:"etcdLease,omitempty"`
}

// EtcdLeaseView is an etcd lease's countdown: GrantedTTL seconds when
// renewed, TTL left now (-1: expired, and the key deleted with it).
type EtcdLeaseView struct {
	ID         string `json:"id"` // hexadecimal, as etcdctl prints it
	GrantedTTL int64  `json:"grantedTTL"`
	TTL        int64  `json:"ttl"`
}

// pageQuery is the parsed query of /debug/nodes.
type pageQuery struct {
	page, size  int
	ready, sort string
}

func parsePageQuery(req *http.Request) (pageQuery, *apierrors.StatusError) {
	q := pageQuery{ready: req.URL.Query().Get("ready"), sort: cmp.Or(req.URL.Query().Get("sort"), "name")}
	var err *apierrors.StatusError
	if q.page, err = intParam(req, "page", 0); err != nil {
		return q, err
	}
	if q.size, err = intParam(req, "pageSize", defaultPageSize); err != nil {
		return q, err
	}
	if q.size < 1 || q.size > maxPageSize {
		return q, apierrors.NewBadRequest(fmt.Sprintf("pageSize must be between 1 and %d, got %d", maxPageSize, q.size))
	}
	if !slices.Contains([]string{"", "True", "False", "Unknown", "None"}, q.ready) {
		return q, apierrors.NewBadRequest(fmt.Sprintf("ready must be True, False, Unknown or None, got %q", q.ready))
	}
	if q.sort != "name" && q.sort != "renewal" {
		return q, apierrors.NewBadRequest(fmt.Sprintf(`sort must be "name" or "renewal", got %q`, q.sort))
	}
	return q, nil
}

// nodes reads every Node and Node Lease (from the cache's memory), counts
// them, and details one page, with the etcd lease TTLs of that page only:
// 5,000 nodes cost two in-memory lists and one etcd read per page row.
func (v *Views) nodes(ctx context.Context, q pageQuery) (NodesView, error) {
	nodes, leases, err := v.readNodes(ctx)
	if err != nil {
		return NodesView{}, err
	}
	now := v.cfg.Clock.Now()
	grace := cmp.Or(v.cfg.GracePeriod, nominalGrace)
	view := NodesView{
		Now: now, GracePeriodSeconds: v.cfg.GracePeriod.Seconds(), ControllerRunning: v.cfg.GracePeriod > 0,
		Total: len(nodes), Ready: map[string]int{"True": 0, "False": 0, "Unknown": 0, "None": 0},
		Ages: AgeHistogram{BucketSeconds: grace.Seconds() / ageBuckets, Counts: make([]int, ageBuckets+1)},
		Page: q.page, PageSize: q.size, Sort: q.sort, Filter: q.ready, Nodes: []NodeRow{},
	}
	var rows []NodeRow
	for i := range nodes {
		row := nodeRow(&nodes[i], leases[nodes[i].Name], now)
		view.Ready[row.Ready]++
		if row.SecondsSinceRenewal < 0 {
			view.NoLease++
		} else {
			view.Ages.Counts[min(int(row.SecondsSinceRenewal/view.Ages.BucketSeconds), ageBuckets)]++
		}
		if q.ready == "" || q.ready == row.Ready {
			rows = append(rows, row)
		}
	}
	sortRows(rows, q.sort)
	view.Matching = len(rows)
	view.Pages = max((len(rows)+q.size-1)/q.size, 1)
	if start := q.page * q.size; start < len(rows) {
		view.Nodes = rows[start:min(start+q.size, len(rows))]
	}
	if err := v.addEtcdLeases(ctx, view.Nodes); err != nil {
		view.EtcdLeaseError = "etcd lease TTLs unavailable: " + err.Error()
	}
	return view, nil
}

// readNodes lists Nodes and the Leases of kube-node-lease at
// resourceVersion "0": whatever the cache holds, without asking etcd.
func (v *Views) readNodes(ctx context.Context) ([]corev1.Node, map[string]*coordinationv1.Lease, error) {
	if v.nodesRes == nil || v.leasesRes == nil {
		return nil, nil, apierrors.NewNotFound(corev1.Resource("nodes"), "")
	}
	anyState := registry.ListOptions{ResourceVersion: "0"}
	nodeList, err := v.cfg.Store.List(ctx, v.nodesRes, "", anyState)
	if err != nil {
		return nil, nil, err
	}
	leaseList, err := v.cfg.Store.List(ctx, v.leasesRes, lease.NodeLeaseNamespace, anyState)
	if err != nil {
		return nil, nil, err
	}
	leases := map[string]*coordinationv1.Lease{}
	for i, l := range leaseList.(*coordinationv1.LeaseList).Items {
		leases[l.Name] = &leaseList.(*coordinationv1.LeaseList).Items[i]
	}
	return nodeList.(*corev1.NodeList).Items, leases, nil
}

// nodeRow describes a node and its lease at now.
func nodeRow(node *corev1.Node, l *coordinationv1.Lease, now time.Time) NodeRow {
	row := NodeRow{Name: node.Name, Ready: "None", SecondsSinceRenewal: -1}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			row.Ready, row.ReadyReason, row.ReadySince = string(c.Status), c.Reason, c.LastTransitionTime.Time
		}
	}
	for _, t := range node.Spec.Taints {
		row.Unreachable = row.Unreachable || t.Key == corev1.TaintNodeUnreachable
	}
	if l == nil {
		return row
	}
	row.LeaseResourceVersion = l.ResourceVersion
	if l.Spec.LeaseDurationSeconds != nil {
		row.LeaseDurationSeconds = *l.Spec.LeaseDurationSeconds
	}
	if l.Spec.RenewTime != nil {
		row.RenewTime = l.Spec.RenewTime.Time
		row.SecondsSinceRenewal = max(now.Sub(row.RenewTime).Seconds(), 0)
	}
	return row
}

func sortRows(rows []NodeRow, by string) {
	slices.SortFunc(rows, func(a, b NodeRow) int {
		if by == "renewal" {
			if c := cmp.Compare(b.SecondsSinceRenewal, a.SecondsSinceRenewal); c != 0 {
				return c
			}
		}
		return cmp.Or(naturalCompare(a.Name, b.Name), strings.Compare(a.Name, b.Name))
	})
}

// naturalCompare orders names as people count: node-2 before node-10.
// Runs of digits compare by value, everything else byte by byte.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitRun is the length of the run of ASCII digits s starts with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// addEtcdLeases looks up the etcd lease bound to each row's Lease key.
func (v *Views) addEtcdLeases(ctx context.Context, rows []NodeRow) error {
	var keys []string
	for _, r := range rows {
		keys = append(keys, registry.KeyFor(v.leasesRes, lease.NodeLeaseNamespace, r.Name))
	}
	if len(keys) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, etcdStatusTimeout)
	defer cancel()
	kls, err := embedetcd.KeyLeases(ctx, v.cfg.EtcdClient, keys)
	if err != nil {
		return err
	}
	for i, kl := range kls {
		if kl.LeaseID != 0 {
			rows[i].EtcdLease = &EtcdLeaseView{ID: strconv.FormatInt(kl.LeaseID, 16), GrantedTTL: kl.GrantedTTL, TTL: kl.TTL}
		}
	}
	return nil
}

func (v *Views) serveNodes(w http.ResponseWriter, req *http.Request) {
	q, bad := parsePageQuery(req)
	if bad != nil {
		writeStatus(w, bad)
		return
	}
	view, err := v.nodes(req.Context(), q)
	if err != nil {
		if st, ok := err.(*apierrors.StatusError); ok {
			writeStatus(w, st)
			return
		}
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	writeJSON(w, view)
}
