package kinds

// StorageClasses, CSIDrivers, CSINodes and VolumeAttachments
// (storage.k8s.io/v1): upstream's defaults and columns.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// storageClassesEntry describes the storageclasses resource (storage.k8s.io/v1 StorageClass).
func storageClassesEntry() *registry.Resource {
	return entry(apigroups.StorageV1, "storageclasses", "StorageClass", false, "/registry/storageclasses",
		func() runtime.Object { return &storagev1.StorageClass{} }, func() runtime.Object { return &storagev1.StorageClassList{} },
		&registry.Resource{ShortNames: []string{"sc"}, Strategy: storageClassStrategy, Printer: storageClassPrinter})
}

// csiDriversEntry describes the csidrivers resource (storage.k8s.io/v1 CSIDriver).
func csiDriversEntry() *registry.Resource {
	return entry(apigroups.StorageV1, "csidrivers", "CSIDriver", false, "/registry/csidrivers",
		func() runtime.Object { return &storagev1.CSIDriver{} }, func() runtime.Object { return &storagev1.CSIDriverList{} },
		&registry.Resource{Strategy: csiDriverStrategy, Printer: csiDriverPrinter})
}

// csiNodesEntry describes the csinodes resource (storage.k8s.io/v1 CSINode).
func csiNodesEntry() *registry.Resource {
	return entry(apigroups.StorageV1, "csinodes", "CSINode", false, "/registry/csinodes",
		func() runtime.Object { return &storagev1.CSINode{} }, func() runtime.Object { return &storagev1.CSINodeList{} },
		&registry.Resource{Strategy: csiNodeStrategy, Printer: csiNodePrinter})
}

// volumeAttachmentsEntry describes the volumeattachments resource (storage.k8s.io/v1 VolumeAttachment).
func volumeAttachmentsEntry() *registry.Resource {
	return entry(apigroups.StorageV1, "volumeattachments", "VolumeAttachment", false, "/registry/volumeattachments",
		func() runtime.Object { return &storagev1.VolumeAttachment{} }, func() runtime.Object { return &storagev1.VolumeAttachmentList{} },
		&registry.Resource{Strategy: volumeAttachmentStrategy, Subresources: []string{"status"}, Printer: volumeAttachmentPrinter})
}

// defaultStorageClass: volumes are deleted with their claims and bound at once.
func defaultStorageClass(sc *storagev1.StorageClass) {
	if sc.ReclaimPolicy == nil {
		policy := corev1.PersistentVolumeReclaimDelete
		sc.ReclaimPolicy = &policy
	}
	if sc.VolumeBindingMode == nil {
		mode := storagev1.VolumeBindingImmediate
		sc.VolumeBindingMode = &mode
	}
}

// defaultCSIDriver: attach required, no pod info, persistent volumes,
// fsGroup applied for ReadWriteOnce volumes with a filesystem type.
func defaultCSIDriver(d *storagev1.CSIDriver) {
	spec := &d.Spec
	boolDefault := func(p **bool, v bool) {
		if *p == nil {
			*p = &v
		}
	}
	boolDefault(&spec.AttachRequired, true)
	boolDefault(&spec.PodInfoOnMount, false)
	boolDefault(&spec.StorageCapacity, false)
	boolDefault(&spec.RequiresRepublish, false)
	if spec.FSGroupPolicy == nil {
		policy := storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy
		spec.FSGroupPolicy = &policy
	}
	if len(spec.VolumeLifecycleModes) == 0 {
		spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
}

var storageClassStrategy = kindStrategy(kindRules[*storagev1.StorageClass]{defaults: defaultStorageClass})

var csiDriverStrategy = kindStrategy(kindRules[*storagev1.CSIDriver]{defaults: defaultCSIDriver})

var csiNodeStrategy = kindStrategy(kindRules[*storagev1.CSINode]{})

var volumeAttachmentStrategy = kindStrategy(kindRules[*storagev1.VolumeAttachment]{})

var storageClassPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Provisioner", "string", storagev1.StorageClass{}.SwaggerDoc()["provisioner"], 0),
		column("ReclaimPolicy", "string", storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"], 0),
		column("VolumeBindingMode", "string", storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"], 0),
		column("AllowVolumeExpansion", "string", storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"], 0),
		rest.AgeColumn,
	},
	func(sc *storagev1.StorageClass, now time.Time) metav1.TableRow {
		name := sc.Name
		if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			name += " (default)"
		}
		reclaim, binding := string(corev1.PersistentVolumeReclaimDelete), string(storagev1.VolumeBindingImmediate)
		if sc.ReclaimPolicy != nil {
			reclaim = string(*sc.ReclaimPolicy)
		}
		if sc.VolumeBindingMode != nil {
			binding = string(*sc.VolumeBindingMode)
		}
		return metav1.TableRow{Cells: []any{
			name, sc.Provisioner, reclaim, binding, sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion, age(sc.CreationTimestamp.Time, now),
		}}
	},
)

var csiDriverPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("AttachRequired", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["attachRequired"], 0),
		column("PodInfoOnMount", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["podInfoOnMount"], 0),
		column("StorageCapacity", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["storageCapacity"], 0),
		column("TokenRequests", "string", storagev1.CSIDriverSpec{}.SwaggerDoc()["tokenRequests"], 0),
		column("RequiresRepublish", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["requiresRepublish"], 0),
		column("Modes", "string", storagev1.CSIDriverSpec{}.SwaggerDoc()["volumeLifecycleModes"], 0),
		rest.AgeColumn,
	},
	func(d *storagev1.CSIDriver, now time.Time) metav1.TableRow {
		flag := func(b *bool) bool { return b != nil && *b }
		var audiences, modes []string
		for _, t := range d.Spec.TokenRequests {
			audiences = append(audiences, t.Audience)
		}
		for _, m := range d.Spec.VolumeLifecycleModes {
			modes = append(modes, string(m))
		}
		tokens := "<unset>"
		if len(audiences) > 0 {
			tokens = strings.Join(audiences, ",")
		}
		return metav1.TableRow{Cells: []any{
			d.Name, flag(d.Spec.AttachRequired), flag(d.Spec.PodInfoOnMount), flag(d.Spec.StorageCapacity), tokens,
			flag(d.Spec.RequiresRepublish), strings.Join(modes, ","), age(d.CreationTimestamp.Time, now),
		}}
	},
)

var csiNodePrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn, column("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node", 0), rest.AgeColumn,
	},
	func(n *storagev1.CSINode, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{n.Name, int64(len(n.Spec.Drivers)), age(n.CreationTimestamp.Time, now)}}
	},
)

var volumeAttachmentPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Attacher", "string", storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"], 0),
		column("PV", "string", storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"], 0),
		column("Node", "string", storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"], 0),
		column("Attached", "boolean", storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"], 0),
		rest.AgeColumn,
	},
	func(va *storagev1.VolumeAttachment, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{
			va.Name, va.Spec.Attacher, deref(va.Spec.Source.PersistentVolumeName, ""), va.Spec.NodeName, va.Status.Attached, age(va.CreationTimestamp.Time, now),
		}}
	},
)
