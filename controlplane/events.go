package controlplane

import (
	"context"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
)

// eventSink is the broadcaster the control plane's own clients record
// their events through, as kube-controller-manager's controllers do: the
// node lifecycle controller, the simulated kubelets and the garbage
// collector. client-go's adapter picks the API: events.k8s.io/v1 when the
// apiserver serves it, core/v1 otherwise. Its writing goroutine runs from
// startEvents until stopEvents.
type eventSink struct {
	adapter events.EventBroadcasterAdapter
	// stop is closed by stopEvents, for the broadcaster's sink.
	stop chan struct{}
}

// startEvents starts the broadcaster once the apiserver serves (it asks
// discovery which events API to use).
func (cp *ControlPlane) startEvents(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: cp.api.URL(), QPS: -1})
	if err != nil {
		return err
	}
	// Not ctx: it bounds only the start-up, and the broadcaster runs until stopEvents.
	cp.events = &eventSink{adapter: events.NewEventBroadcasterAdapterWithContext(context.WithoutCancel(ctx), cs), stop: make(chan struct{})}
	cp.events.adapter.StartRecordingToSink(cp.events.stop)
	return nil
}

// recorder is component's recorder (its events' source), or nil before
// startEvents.
func (cp *ControlPlane) recorder(component string) events.EventRecorder {
	if cp.events == nil {
		return nil
	}
	return cp.events.adapter.NewRecorder(component)
}

// stopEvents ends the broadcaster, after every client recording through it.
func (cp *ControlPlane) stopEvents() {
	if cp.events == nil {
		return
	}
	close(cp.events.stop)
	cp.events.adapter.Shutdown()
}
