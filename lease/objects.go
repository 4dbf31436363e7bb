package lease

import (
	"time"

	"minicp/internal/kubeversion"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What a simulated node reports about itself: its kubelet is of the
// release whose API types minicp is built with, the version /version
// reports too.
const simRuntime = "minicp-sim://0.1"

// newNode is the Node a simulated node registers: labels, capacity,
// addresses, node info and its conditions, heartbeat at now.
func newNode(name string, index int, now time.Time) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				corev1.LabelHostname:   name,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: "amd64",
				SimulatedLabel:         "true",
			},
		},
	}
	n.Status = corev1.NodeStatus{
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU:              resource.MustParse("4"),
			corev1.ResourceMemory:           resource.MustParse("16Gi"),
			corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
			corev1.ResourcePods:             resource.MustParse("110"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: internalIP(index)},
			{Type: corev1.NodeHostName, Address: name},
		},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion:          kubeversion.Get().GitVersion,
			ContainerRuntimeVersion: simRuntime,
			OperatingSystem:         "linux",
			Architecture:            "amd64",
			OSImage:                 "minicp simulated node",
			KernelVersion:           "none (simulated)",
		},
	}
	n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	setHealthyConditions(&n.Status, now)
	return n
}

// healthyConditions are what a kubelet reports on a node with nothing
// wrong: Ready, and no memory, disk or PID pressure.
var healthyConditions = []struct {
	typ     corev1.NodeConditionType
	status  corev1.ConditionStatus
	reason  string
	message string
}{
	{corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
	{corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
	{corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
	{corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"},
}

// setHealthyConditions writes the healthy conditions into status with
// heartbeat now. A condition that already had the healthy status keeps its
// lastTransitionTime; one that changes (e.g. Ready back from Unknown) gets
// now, as the kubelet does.
//
// It returns the conditions that changed, in healthyConditions' order: the
// kubelet records an event for each (events.go).
func setHealthyConditions(status *corev1.NodeStatus, now time.Time) []corev1.NodeConditionType {
	t := metav1.NewTime(now)
	var changed []corev1.NodeConditionType
	for _, want := range healthyConditions {
		c := conditionOf(status, want.typ)
		if c == nil {
			status.Conditions = append(status.Conditions, corev1.NodeCondition{Type: want.typ})
			c = &status.Conditions[len(status.Conditions)-1]
		}
		if c.Status != want.status {
			c.LastTransitionTime = t
			changed = append(changed, want.typ)
		}
		c.Status, c.Reason, c.Message, c.LastHeartbeatTime = want.status, want.reason, want.message, t
	}
	return changed
}

// conditionOf returns a pointer into status.Conditions, or nil.
func conditionOf(status *corev1.NodeStatus, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == typ {
			return &status.Conditions[i]
		}
	}
	return nil
}

// newLease is a node's Lease as the kubelet creates it: held by the node,
// owned by the Node object (so that deleting the node deletes it).
func newLease(node *corev1.Node, duration time.Duration, now time.Time) *coordinationv1.Lease {
	seconds := int32(duration / time.Second)
	holder := node.Name
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      node.Name,
			Namespace: NodeLeaseNamespace,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: corev1.SchemeGroupVersion.String(),
				Kind:       "Node",
				Name:       node.Name,
				UID:        node.UID,
			}},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &holder,
			LeaseDurationSeconds: &seconds,
			RenewTime:            &metav1.MicroTime{Time: now},
		},
	}
}
