package kinds

// What the kinds' printers share: columns, ages, short lists, as
// upstream's printers write them.

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// column is a table column; priority 1 columns show with -o wide only.
func column(name, typ, description string, priority int32) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: description, Priority: priority}
}

var containersColumn = column("Containers", "string", "Names of each container in the template.", 1)

var imagesColumn = column("Images", "string", "Images referenced by each container in the template.", 1)

var selectorColumn = column("Selector", "string", "Label selector for the pods this object manages.", 1)

// containersAndImages joins a template's container names and images.
func containersAndImages(spec *corev1.PodSpec) (string, string) {
	var names, images []string
	for _, c := range spec.Containers {
		names, images = append(names, c.Name), append(images, c.Image)
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

// selectorString prints a label selector as upstream's printers do ("" for
// none).
func selectorString(s *metav1.LabelSelector) string {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "<error>"
	}
	return sel.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// age prints how long ago t was as kubectl does ("5m", "3d4h"), or
// "<unknown>" for the zero time.
func age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// createdAtColumn is the column of printers that show only the name and
// the creation time.
var createdAtColumn = column("Created At", "date", metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"], 0)

func createdAt(m metav1.Object) string {
	return m.GetCreationTimestamp().UTC().Format(time.RFC3339)
}

// maxShownEndpoints is how many addresses kubectl shows before "+ N more...".
const maxShownEndpoints = 3

// shortList joins the first few items and says how many more there are.
func shortList(items []string) string {
	if len(items) == 0 {
		return "<none>"
	}
	if len(items) <= maxShownEndpoints {
		return strings.Join(items, ",")
	}
	return strings.Join(items[:maxShownEndpoints], ",") + fmt.Sprintf(" + %d more...", len(items)-maxShownEndpoints)
}

func deref(s *string, unset string) string {
	if s == nil {
		return unset
	}
	return *s
}
