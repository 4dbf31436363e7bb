package lease

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
)

// The events the node side records, with upstream's sources, reasons and
// messages, so that `kubectl get events` and `kubectl describe node` tell
// a node's story as on a real cluster: the kubelet says it started and
// that its node is healthy and Ready; the node lifecycle controller says
// it registered the node, that the node is NotReady when its heartbeats
// stop (M11), and that it removed it when the Node is deleted.
//
// Both record through client-go's event machinery (tools/events): events
// are aggregated and rate-limited per object and written by a broadcaster
// goroutine, so recording never blocks a heartbeat. Who builds the
// broadcaster chooses the API: events.k8s.io/v1 when the apiserver serves
// it, core/v1 otherwise (controlplane uses client-go's adapter for that).
const (
	// ControllerComponent and KubeletComponent are upstream's event sources.
	ControllerComponent = "node-controller"
	KubeletComponent    = "kubelet"

	// The node lifecycle controller's reasons.
	ReasonRegisteredNode = "RegisteredNode"
	ReasonRemovingNode   = "RemovingNode"
	ReasonNodeNotReady   = "NodeNotReady"

	// The kubelet's reasons: it started, then each condition it reports
	// healthy, recorded when the condition changes to that status.
	ReasonStarting                = "Starting"
	ReasonNodeHasSufficientMemory = "NodeHasSufficientMemory"
	ReasonNodeHasNoDiskPressure   = "NodeHasNoDiskPressure"
	ReasonNodeHasSufficientPID    = "NodeHasSufficientPID"
	ReasonNodeReady               = "NodeReady"
)

// Actions name what the reporting component did (events.k8s.io/v1 asks for
// one; core/v1 has no such field and drops it).
const (
	actionRegister     = "Register"
	actionStatusChange = "StatusChange"
)

// conditionEvents is the kubelet's event for each condition it reports
// healthy (upstream's node status setters record these on a change).
var conditionEvents = map[corev1.NodeConditionType]string{
	corev1.NodeMemoryPressure: ReasonNodeHasSufficientMemory,
	corev1.NodeDiskPressure:   ReasonNodeHasNoDiskPressure,
	corev1.NodePIDPressure:    ReasonNodeHasSufficientPID,
	corev1.NodeReady:          ReasonNodeReady,
}

// statusMessage is upstream's message for a node status event.
func statusMessage(node, reason string) string {
	return fmt.Sprintf("Node %s status is now: %s", node, reason)
}

// kubeletNodeRef is the reference the kubelet puts in its events: the
// node's name stands in for its UID (the kubelet does not look the UID
// up), which is why `kubectl describe node` also searches by name as UID.
func kubeletNodeRef(name string) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Node", Name: name, UID: types.UID(name)}
}

// controllerNodeRef is the node lifecycle controller's reference: the
// Node's real UID.
func controllerNodeRef(name string, uid types.UID) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: name, UID: uid}
}

// recordEvent records a Normal event if r is not nil.
func recordEvent(r events.EventRecorder, ref *corev1.ObjectReference, reason, action, note string) {
	if r == nil {
		return
	}
	r.Eventf(ref, nil, corev1.EventTypeNormal, reason, action, "%s", note)
}
