package lease

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sync does what node n is due for (register, post status, renew its
// lease) and returns when it is next due: its next renewal or status
// report, or, after a failure, the end of its backoff.
func (a *Agent) sync(ctx context.Context, n *simNode) time.Time {
	now := a.clock.Now()
	if err := a.syncOnce(ctx, n, now); err != nil {
		if ctx.Err() != nil { // cut short by Stop: not a failure
			return now
		}
		return a.failed(n, err, now)
	}
	n.failures = 0
	if n.statusStale.Load() { // flagged while this sync ran
		return now
	}
	return earliest(n.renewAt, n.statusAt)
}

func (a *Agent) syncOnce(ctx context.Context, n *simNode, now time.Time) error {
	if n.node == nil {
		if err := a.register(ctx, n, now); err != nil {
			return err
		}
	}
	// Status and Lease are the kubelet's two separate loops: a status post
	// that fails must not keep the Lease from being renewed.
	var statusErr error
	if n.statusStale.Load() || !now.Before(n.statusAt) {
		statusErr = a.postStatus(ctx, n, now)
	}
	if n.lease == nil || !now.Before(n.renewAt) {
		return errors.Join(statusErr, a.renew(ctx, n, now))
	}
	return statusErr
}

// failed schedules a retry of n after the backoff: 200 ms after the first
// failure, doubling with each further one, at most 7 s.
func (a *Agent) failed(n *simNode, err error, now time.Time) time.Time {
	n.failures++
	a.stats.RecordFailure()
	backoff := initialBackoff
	for i := 1; i < n.failures && backoff < maxBackoff; i++ {
		backoff *= 2
	}
	backoff = min(backoff, maxBackoff)
	if n.failures == 1 {
		a.log.Info("node heartbeat failed; retrying with backoff", "node", n.name, "retry", backoff, "err", err)
	} else {
		a.log.Debug("node heartbeat failed again", "node", n.name, "failures", n.failures, "retry", backoff, "err", err)
	}
	return now.Add(backoff)
}

// register creates n's Node, or adopts it if it exists already (a
// restarted agent), in which case its status is posted next.
func (a *Agent) register(ctx context.Context, n *simNode, now time.Time) error {
	nodes := a.client.CoreV1().Nodes()
	created, err := nodes.Create(ctx, newNode(n.name, n.ordinal, now), metav1.CreateOptions{})
	adopted := apierrors.IsAlreadyExists(err)
	if adopted {
		created, err = nodes.Get(ctx, n.name, metav1.GetOptions{})
		n.statusStale.Store(true)
	}
	if err != nil {
		return err
	}
	ref := kubeletNodeRef(n.name)
	recordEvent(a.cfg.Recorder, ref, ReasonStarting, actionRegister, "Starting kubelet.")
	if !adopted { // a new Node: every condition went from nothing to healthy
		a.recordConditions(n.name, healthyTypes())
	}
	n.node = created
	n.statusAt = now.Add(a.cfg.StatusReportInterval)
	a.log.Debug("node registered", "node", n.name)
	return nil
}

// postStatus writes n's status (healthy conditions, heartbeat now) from
// the last Node it wrote; on a 409 it reads the Node and tries once more.
func (a *Agent) postStatus(ctx context.Context, n *simNode, now time.Time) error {
	n.statusStale.Store(false) // a change seen from here on is a new one
	nodes := a.client.CoreV1().Nodes()
	node := n.node.DeepCopy()
	changed := setHealthyConditions(&node.Status, now)
	updated, err := nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		a.stats.RecordConflict()
		if node, err = nodes.Get(ctx, n.name, metav1.GetOptions{}); err == nil {
			changed = setHealthyConditions(&node.Status, now)
			updated, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
		}
	}
	if apierrors.IsNotFound(err) {
		n.node = nil // deleted: register again
	}
	if err != nil {
		n.statusStale.Store(true) // still to be posted
		return err
	}
	n.node = updated
	n.statusAt = now.Add(a.cfg.StatusReportInterval)
	a.stats.add(&a.stats.statuses)
	a.recordConditions(n.name, changed)
	return nil
}

// recordConditions records the kubelet's event for each condition that
// became healthy, e.g. NodeReady when Ready comes back from Unknown.
func (a *Agent) recordConditions(node string, changed []corev1.NodeConditionType) {
	for _, typ := range changed {
		reason := conditionEvents[typ]
		recordEvent(a.cfg.Recorder, kubeletNodeRef(node), reason, actionStatusChange, statusMessage(node, reason))
	}
}

// healthyTypes lists the conditions a kubelet reports, in its order.
func healthyTypes() []corev1.NodeConditionType {
	types := make([]corev1.NodeConditionType, len(healthyConditions))
	for i, c := range healthyConditions {
		types[i] = c.typ
	}
	return types
}

// renew writes n's Lease with renewTime now and schedules the next
// renewal.
func (a *Agent) renew(ctx context.Context, n *simNode, now time.Time) error {
	start := a.clock.Now()
	out, err := a.writeLease(ctx, n, now)
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			n.lease = nil // read it afresh next time
		}
		return err
	}
	done := a.clock.Now()
	lapsed := !n.lastRenew.IsZero() && done.Sub(n.lastRenew) > a.cfg.LeaseDuration
	if lapsed {
		a.log.Info("node lease renewed after it had lapsed", "node", n.name, "since last renewal", done.Sub(n.lastRenew))
	}
	a.stats.RecordRenewal(done.Sub(start), lapsed)
	interval := a.cfg.renewInterval()
	if n.lastRenew.IsZero() {
		// First renewal of this agent's life: pick a random point in the
		// interval, so that nodes started together do not renew together.
		n.renewAt = now.Add(time.Duration(rand.Int64N(int64(interval)) + 1))
	} else {
		n.renewAt = now.Add(time.Duration(float64(interval) * (1 + renewJitter*rand.Float64())))
	}
	n.lease, n.lastRenew = out, done
	if !n.everRegistered { // registered, and its Lease exists: it heartbeats
		n.everRegistered = true
		a.stats.nodeRegistered()
		if a.unregistered.Add(-1) == 0 {
			close(a.registered)
		}
	}
	return nil
}

// writeLease renews n's Lease as upstream's lease controller does: from
// the last Lease it wrote, with no GET; after a 409 Conflict (someone else
// wrote it) or a 404, from a fresh read, or a create; at most
// maxUpdateRetries writes in a row.
func (a *Agent) writeLease(ctx context.Context, n *simNode, now time.Time) (*coordinationv1.Lease, error) {
	leases := a.client.CoordinationV1().Leases(NodeLeaseNamespace)
	base := n.lease
	for attempt := 1; ; attempt++ {
		if base == nil {
			current, created, err := a.readLease(ctx, n, now)
			if err != nil || created {
				return current, err
			}
			base = current
		}
		out, err := leases.Update(ctx, renewed(base, now), metav1.UpdateOptions{})
		if err == nil || attempt == maxUpdateRetries {
			return out, err
		}
		switch {
		case apierrors.IsConflict(err):
			a.stats.RecordConflict()
			base = nil
		case apierrors.IsNotFound(err):
			base = nil
		default:
			return nil, err
		}
	}
}

// readLease reads n's Lease, with the fields its node owns set as they
// should be, or creates it if it is missing (created: that write was the
// renewal).
func (a *Agent) readLease(ctx context.Context, n *simNode, now time.Time) (l *coordinationv1.Lease, created bool, err error) {
	leases := a.client.CoordinationV1().Leases(NodeLeaseNamespace)
	want := newLease(n.node, a.cfg.LeaseDuration, now)
	l, err = leases.Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l, err = leases.Create(ctx, want, metav1.CreateOptions{})
		return l, err == nil, err
	}
	if err != nil {
		return nil, false, err
	}
	l.Spec.HolderIdentity = want.Spec.HolderIdentity
	l.Spec.LeaseDurationSeconds = want.Spec.LeaseDurationSeconds
	l.OwnerReferences = want.OwnerReferences
	return l, false, nil
}

// renewed returns a copy of l with renewTime now.
func renewed(l *coordinationv1.Lease, now time.Time) *coordinationv1.Lease {
	l = l.DeepCopy()
	l.Spec.RenewTime = &metav1.MicroTime{Time: now}
	return l
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
