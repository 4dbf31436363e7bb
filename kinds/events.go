package kinds

// Events, at both group versions. events.k8s.io/v1 Events are core/v1
// Events in another shape, as upstream serves them: one object, one key
// (/registry/events/<namespace>/<name>), stored as core/v1; a client of
// either group reads what a client of the other wrote. coreEventFromV1,
// v1EventFromCore and eventsStoredAsCore are the whole conversion.

import (
	"fmt"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// eventSelectableFields are upstream's event fields for field selectors.
func eventSelectableFields(obj runtime.Object) fields.Set {
	ev := obj.(*corev1.Event)
	return fields.Set{
		"involvedObject.kind":            ev.InvolvedObject.Kind,
		"involvedObject.namespace":       ev.InvolvedObject.Namespace,
		"involvedObject.name":            ev.InvolvedObject.Name,
		"involvedObject.uid":             string(ev.InvolvedObject.UID),
		"involvedObject.apiVersion":      ev.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": ev.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       ev.InvolvedObject.FieldPath,
		"reason":                         ev.Reason,
		"reportingComponent":             ev.ReportingController,
		"source":                         ev.Source.Component,
		"type":                           ev.Type,
	}
}

// eventsV1Entry describes the events resource (events.k8s.io/v1 Event).
func eventsV1Entry() *registry.Resource {
	return entry(apigroups.EventsV1, "events", "Event", true, "/registry/events",
		func() runtime.Object { return &eventsv1.Event{} }, func() runtime.Object { return &eventsv1.EventList{} },
		&registry.Resource{ShortNames: []string{"ev"}, TTL: registry.TTLEvent, AllowCreateOnUpdate: true, Strategy: eventsV1Strategy,
			StoredAs: eventsStoredAsCore, Printer: eventsV1Printer, GarbageCollectorIgnored: true})
}

// eventsEntry describes the events resource (core/v1 Event), whose keys
// etcd deletes after --event-ttl.
func eventsEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "events", "Event", true, "/registry/events",
		func() runtime.Object { return &corev1.Event{} }, func() runtime.Object { return &corev1.EventList{} },
		&registry.Resource{ShortNames: []string{"ev"}, TTL: registry.TTLEvent, AllowCreateOnUpdate: true, Strategy: eventStrategy,
			GarbageCollectorIgnored: true,
			SelectableFields:        eventSelectableFields, Printer: eventPrinter})
}

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
	GroupVersion: apigroups.CoreV1,
	New:          func() runtime.Object { return &corev1.Event{} },
	ToStorage:    func(obj runtime.Object) runtime.Object { return coreEventFromV1(obj.(*eventsv1.Event)) },
	FromStorage:  func(obj runtime.Object) runtime.Object { return v1EventFromCore(obj.(*corev1.Event)) },
}

var eventsV1Strategy = kindStrategy(kindRules[*eventsv1.Event]{
	validate: func(e *eventsv1.Event) field.ErrorList { return eventStrategy.Validate(coreEventFromV1(e)) },
})

// eventsV1Printer prints events.k8s.io/v1 Events with the core/v1 Event
// columns, as upstream does (they are one object).
var eventsV1Printer = &rest.Printer{Columns: eventPrinter.Columns, Row: func(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
	ev, ok := obj.(*eventsv1.Event)
	if !ok {
		return metav1.TableRow{}, fmt.Errorf("table printer for events.k8s.io cannot print %T", obj)
	}
	return eventRow(coreEventFromV1(ev), now), nil
}}

var eventPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		{Name: "Last Seen", Type: "string", Description: corev1.Event{}.SwaggerDoc()["lastTimestamp"]},
		{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
		{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
		{Name: "Object", Type: "string", Description: corev1.Event{}.SwaggerDoc()["involvedObject"]},
		{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
		{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
		{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
		{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
		{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
		{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	},
	eventRow,
)

// eventRow prints an event as kubectl get events does. Events written
// through events.k8s.io carry eventTime and series instead of the
// first/last timestamps and count of core/v1, so both are read.
func eventRow(ev *corev1.Event, now time.Time) metav1.TableRow {
	firstSeen := age(ev.FirstTimestamp.Time, now)
	if ev.FirstTimestamp.IsZero() {
		firstSeen = age(ev.EventTime.Time, now)
	}
	lastSeen := age(ev.LastTimestamp.Time, now)
	if ev.LastTimestamp.IsZero() {
		lastSeen = firstSeen
	}
	count := ev.Count
	if ev.Series != nil {
		lastSeen = age(ev.Series.LastObservedTime.Time, now)
		count = ev.Series.Count
	} else if count == 0 {
		count = 1
	}
	object := strings.ToLower(ev.InvolvedObject.Kind)
	if ev.InvolvedObject.Name != "" {
		object = fmt.Sprintf("%s/%s", object, ev.InvolvedObject.Name)
	}
	return metav1.TableRow{Cells: []any{
		lastSeen, ev.Type, ev.Reason, object, ev.InvolvedObject.FieldPath, eventSource(ev),
		strings.TrimSpace(ev.Message), firstSeen, int64(count), ev.Name,
	}}
}

// eventSource is "component, host", falling back to the reporting
// controller and instance of newer events.
func eventSource(ev *corev1.Event) string {
	component, host := ev.Source.Component, ev.Source.Host
	if component == "" {
		component = ev.ReportingController
	}
	if host == "" {
		host = ev.ReportingInstance
	}
	if host == "" {
		return component
	}
	return component + ", " + host
}

// eventStrategy: minicp requires the involved object's kind and name, and,
// as upstream, an event about a namespaced object lives in its namespace
// (about a cluster-scoped one, in "default" or no namespace).
var eventStrategy = &rest.Strategy{
	ValidateName: validation.NameIsDNSSubdomain,
	Validate: func(obj runtime.Object) field.ErrorList {
		ev := obj.(*corev1.Event)
		var errs field.ErrorList
		p := field.NewPath("involvedObject")
		if ev.InvolvedObject.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), ""))
		}
		if ev.InvolvedObject.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		ns := ev.InvolvedObject.Namespace
		if (ns == "" && ev.Namespace != metav1.NamespaceNone && ev.Namespace != metav1.NamespaceDefault) ||
			(ns != "" && ns != ev.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), ns, "does not match event.namespace"))
		}
		return errs
	},
}
