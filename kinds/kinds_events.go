package kinds

// events.k8s.io/v1 Events are core/v1 Events in another shape, as upstream
// serves them: one object, one key (/registry/events/<namespace>/<name>),
// stored as core/v1; a client of either group reads what a client of the
// other wrote. These two functions and eventsStoredAsCore are the whole conversion.

import (
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
)

// coreEventFromV1 is the core/v1 Event an events.k8s.io/v1 Event stands for.
func coreEventFromV1(e *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		ObjectMeta:          e.ObjectMeta,
		InvolvedObject:      e.Regarding,
		Reason:              e.Reason,
		Message:             e.Note,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
		Type:                e.Type,
		EventTime:           e.EventTime,
		Related:             e.Related,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
		Action:              e.Action,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

// v1EventFromCore is the events.k8s.io/v1 shape of a core/v1 Event.
func v1EventFromCore(e *corev1.Event) *eventsv1.Event {
	out := &eventsv1.Event{
		ObjectMeta:               e.ObjectMeta,
		EventTime:                e.EventTime,
		ReportingController:      e.ReportingController,
		ReportingInstance:        e.ReportingInstance,
		Action:                   e.Action,
		Reason:                   e.Reason,
		Regarding:                e.InvolvedObject,
		Related:                  e.Related,
		Note:                     e.Message,
		Type:                     e.Type,
		DeprecatedSource:         e.Source,
		DeprecatedFirstTimestamp: e.FirstTimestamp,
		DeprecatedLastTimestamp:  e.LastTimestamp,
		DeprecatedCount:          e.Count,
	}
	if e.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

// eventsStoredAsCore stores events.k8s.io/v1 Events as core/v1 Events.
var eventsStoredAsCore = &registry.StoredForm{
	GroupVersion: coreV1,
	New:          func() runtime.Object { return &corev1.Event{} },
	ToStorage:    func(obj runtime.Object) runtime.Object { return coreEventFromV1(obj.(*eventsv1.Event)) },
	FromStorage:  func(obj runtime.Object) runtime.Object { return v1EventFromCore(obj.(*corev1.Event)) },
}
