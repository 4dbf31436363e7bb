package controlplane

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
)

// eventSink is the broadcaster the control plane's own clients record
// their events through, as kube-controller-manager's controllers do: the
// node lifecycle controller, the simulated kubelets and the garbage
// collector. It uses events.k8s.io/v1 when the apiserver serves it and
// core/v1 otherwise, as client-go's broadcaster adapter decides. Its
// writing goroutine runs from startEvents until stopEvents; writes under
// way then finish, events still queued are dropped, not written to an
// apiserver that is stopping.
type eventSink struct {
	newAPI events.EventBroadcaster // events.k8s.io/v1; nil when not served
	legacy record.EventBroadcaster // core/v1; nil when newAPI is used
	// gate lets writes through until stopEvents closes it.
	gate writeGate
	// stop is closed by stopEvents, for the events.k8s.io/v1 sink.
	stop chan struct{}
}

// startEvents starts the broadcaster once the apiserver serves (it asks
// discovery which events API to use).
func (cp *ControlPlane) startEvents(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(withQPS(cp.clientConfig(), -1))
	if err != nil {
		return err
	}
	es := &eventSink{stop: make(chan struct{})}
	if _, err := cs.Discovery().ServerResourcesForGroupVersion(eventsv1.SchemeGroupVersion.String()); err == nil {
		es.newAPI = events.NewBroadcaster(&newSink{sink: &events.EventSinkImpl{Interface: cs.EventsV1()}, gate: &es.gate})
		es.newAPI.StartRecordingToSink(es.stop)
	} else {
		// Not ctx: it bounds only the start-up; the broadcaster runs until stopEvents.
		es.legacy = record.NewBroadcaster(record.WithContext(context.WithoutCancel(ctx)))
		es.legacy.StartRecordingToSink(&legacySink{sink: &typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")}, gate: &es.gate})
	}
	cp.events = es
	return nil
}

// recorder is component's recorder (its events' source), or nil before
// startEvents.
func (cp *ControlPlane) recorder(component string) events.EventRecorder {
	switch {
	case cp.events == nil:
		return nil
	case cp.events.newAPI != nil:
		return cp.events.newAPI.NewRecorder(scheme.Scheme, component)
	}
	return record.NewEventRecorderAdapter(cp.events.legacy.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component}))
}

// stopEvents ends the broadcaster, after every client recording through
// it and before the apiserver stops.
func (cp *ControlPlane) stopEvents() {
	if cp.events == nil {
		return
	}
	cp.events.gate.close()
	close(cp.events.stop)
	if cp.events.newAPI != nil {
		cp.events.newAPI.Shutdown()
	} else {
		cp.events.legacy.Shutdown()
	}
}

// writeGate lets event writes through until it is closed; close waits for
// the writes under way, so that none is cut off by the apiserver's
// shutdown (which closes connections it has not read a request from).
type writeGate struct {
	mu     sync.Mutex     // guards closed and the Add of writing
	closed bool           // set once by close
	writes sync.WaitGroup // the writes under way
}

// enter reports whether a write may go ahead; if so, leave must follow.
func (g *writeGate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.writes.Add(1)
	return true
}

func (g *writeGate) leave() { g.writes.Done() }

// close stops further writes and waits for those under way.
func (g *writeGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.writes.Wait()
}

// legacySink writes core/v1 events until its gate closes, then drops them,
// answering as if written so that the broadcaster neither retries nor logs.
type legacySink struct {
	sink record.EventSink
	gate *writeGate
}

func (s *legacySink) Create(e *corev1.Event) (*corev1.Event, error) {
	if !s.gate.enter() {
		return e, nil
	}
	defer s.gate.leave()
	return s.sink.Create(e)
}

func (s *legacySink) Update(e *corev1.Event) (*corev1.Event, error) {
	if !s.gate.enter() {
		return e, nil
	}
	defer s.gate.leave()
	return s.sink.Update(e)
}

func (s *legacySink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	if !s.gate.enter() {
		return e, nil
	}
	defer s.gate.leave()
	return s.sink.Patch(e, data)
}

// newSink is legacySink for events.k8s.io/v1.
type newSink struct {
	sink events.EventSink
	gate *writeGate
}

func (s *newSink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	if !s.gate.enter() {
		return e, nil
	}
	defer s.gate.leave()
	return s.sink.Create(ctx, e)
}

func (s *newSink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	if !s.gate.enter() {
		return e, nil
	}
	defer s.gate.leave()
	return s.sink.Update(ctx, e)
}

func (s *newSink) Patch(ctx context.Context, e *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	if !s.gate.enter() {
		return e, nil
	}
	defer s.gate.leave()
	return s.sink.Patch(ctx, e, data)
}
