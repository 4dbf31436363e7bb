package kinds

// ConfigMaps: upstream's size limit and key rules.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// configMapsEntry describes the configmaps resource (core/v1 ConfigMap).
func configMapsEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "configmaps", "ConfigMap", true, "/registry/configmaps",
		func() runtime.Object { return &corev1.ConfigMap{} }, func() runtime.Object { return &corev1.ConfigMapList{} },
		&registry.Resource{ShortNames: []string{"cm"}, Strategy: configMapStrategy, Printer: configMapPrinter})
}

var configMapPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
		rest.AgeColumn,
	},
	func(cm *corev1.ConfigMap, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp.Time, now)}}
	},
)

// configMapMaxBytes is upstream's limit on a config map's data (1 MiB).
const configMapMaxBytes = 1024 * 1024

var configMapStrategy = &rest.Strategy{
	ValidateName: validation.NameIsDNSSubdomain,
	Validate: func(obj runtime.Object) field.ErrorList {
		cm := obj.(*corev1.ConfigMap)
		var errs field.ErrorList
		total := 0
		for key, value := range cm.Data {
			for _, msg := range utilvalidation.IsConfigMapKey(key) {
				errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, msg))
			}
			if _, dup := cm.BinaryData[key]; dup {
				errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, "duplicate of key present in binaryData"))
			}
			total += len(value)
		}
		for key, value := range cm.BinaryData {
			for _, msg := range utilvalidation.IsConfigMapKey(key) {
				errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(key), key, msg))
			}
			total += len(value)
		}
		if total > configMapMaxBytes {
			errs = append(errs, field.TooLong(field.NewPath(""), "", configMapMaxBytes))
		}
		return errs
	},
}
