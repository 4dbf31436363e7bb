package lease

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Upstream's words for a node that stopped heartbeating, and for one whose
// kubelet never posted a condition.
const (
	ReasonNodeStatusUnknown       = "NodeStatusUnknown"
	MessageNodeStatusUnknown      = "Kubelet stopped posting node status."
	reasonNodeStatusNeverUpdated  = "NodeStatusNeverUpdated"
	messageNodeStatusNeverUpdated = "Kubelet never posted node status."
)

// monitoredConditions are the conditions set to Unknown when a node goes
// silent (NetworkUnavailable belongs to the network plugin and is kept).
var monitoredConditions = []corev1.NodeConditionType{
	corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure,
}

// markUnknown sets the monitored conditions of a silent node to Unknown,
// as upstream does, and returns the node as stored. Conditions already
// Unknown are left alone, so a node is written once, not at every pass.
func (c *Controller) markUnknown(ctx context.Context, node *corev1.Node, h *nodeHealth, now time.Time, why string) (*corev1.Node, error) {
	node = node.DeepCopy()
	t := metav1.NewTime(now)
	changed := false
	for _, typ := range monitoredConditions {
		cond := conditionOf(&node.Status, typ)
		switch {
		case cond == nil:
			node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{
				Type: typ, Status: corev1.ConditionUnknown,
				Reason: reasonNodeStatusNeverUpdated, Message: messageNodeStatusNeverUpdated,
				LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: t,
			})
			changed = true
		case cond.Status != corev1.ConditionUnknown:
			cond.Status, cond.Reason, cond.Message, cond.LastTransitionTime =
				corev1.ConditionUnknown, ReasonNodeStatusUnknown, MessageNodeStatusUnknown, t
			changed = true
		}
	}
	if !changed {
		return node, nil
	}
	updated, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	c.log.Info("node stopped heartbeating; Ready is now Unknown", "node", node.Name, "cause", why,
		"last sign of life", now.Sub(h.probe).Round(time.Millisecond))
	return updated, nil
}

// controllerTaints are the taints this controller owns.
var controllerTaints = []corev1.Taint{
	{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute},
}

// wantedTaints is the controller's taint key for a node with this Ready
// condition: unreachable when Unknown, not-ready when False, none when
// True (or before any Ready condition: the node is still starting).
func wantedTaints(node *corev1.Node) string {
	ready := conditionOf(&node.Status, corev1.NodeReady)
	switch {
	case ready == nil:
		return ""
	case ready.Status == corev1.ConditionUnknown:
		return corev1.TaintNodeUnreachable
	case ready.Status == corev1.ConditionFalse:
		return corev1.TaintNodeNotReady
	}
	return ""
}

// withTaints returns node's taints with the controller's set to key's
// NoSchedule and NoExecute pair (none for ""), and whether that changed
// anything. Other taints are kept in place.
func withTaints(taints []corev1.Taint, key string, now time.Time) ([]corev1.Taint, bool) {
	owned := func(t corev1.Taint) bool {
		return slices.ContainsFunc(controllerTaints, func(o corev1.Taint) bool { return o.MatchTaint(&t) })
	}
	var out []corev1.Taint
	changed := false
	for _, t := range taints {
		if owned(t) && t.Key != key {
			changed = true
			continue
		}
		out = append(out, t)
	}
	if key == "" {
		return out, changed
	}
	for _, effect := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute} {
		want := corev1.Taint{Key: key, Effect: effect}
		if slices.ContainsFunc(out, func(t corev1.Taint) bool { return t.MatchTaint(&want) }) {
			continue
		}
		if effect == corev1.TaintEffectNoExecute {
			added := metav1.NewTime(now)
			want.TimeAdded = &added
		}
		out = append(out, want)
		changed = true
	}
	return out, changed
}

// reconcileTaints makes node's controller taints match its Ready
// condition. On a 409 it reads the node and tries once more; anything
// else waits for the next pass.
func (c *Controller) reconcileTaints(ctx context.Context, node *corev1.Node, now time.Time) error {
	nodes := c.client.CoreV1().Nodes()
	for attempt := 0; ; attempt++ {
		key := wantedTaints(node)
		taints, changed := withTaints(node.Spec.Taints, key, now)
		if !changed {
			return nil
		}
		node = node.DeepCopy()
		node.Spec.Taints = taints
		_, err := nodes.Update(ctx, node, metav1.UpdateOptions{})
		if err == nil {
			if key == "" {
				c.log.Info("node is Ready again; taints removed", "node", node.Name)
			} else {
				c.log.Info("node tainted", "node", node.Name, "taint", key)
			}
			return nil
		}
		if !apierrors.IsConflict(err) || attempt > 0 {
			return err
		}
		if node, err = nodes.Get(ctx, node.Name, metav1.GetOptions{}); err != nil {
			return err
		}
	}
}
