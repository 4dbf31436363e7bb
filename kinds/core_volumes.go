package kinds

// PersistentVolumes and PersistentVolumeClaims: upstream's defaults and the
// main rules of its validation, those a client meets first (access modes,
// a size, one volume source, what an update may change).

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// persistentVolumeClaimsEntry describes the persistentvolumeclaims resource (core/v1 PersistentVolumeClaim).
func persistentVolumeClaimsEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "persistentvolumeclaims", "PersistentVolumeClaim", true, "/registry/persistentvolumeclaims",
		func() runtime.Object { return &corev1.PersistentVolumeClaim{} }, func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },
		&registry.Resource{ShortNames: []string{"pvc"}, Strategy: claimStrategy, Subresources: []string{"status"}, Printer: claimPrinter})
}

// persistentVolumesEntry describes the persistentvolumes resource (core/v1 PersistentVolume).
func persistentVolumesEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "persistentvolumes", "PersistentVolume", false, "/registry/persistentvolumes",
		func() runtime.Object { return &corev1.PersistentVolume{} }, func() runtime.Object { return &corev1.PersistentVolumeList{} },
		&registry.Resource{ShortNames: []string{"pv"}, Strategy: volumeStrategy, Subresources: []string{"status"}, Printer: volumePrinter})
}

// defaultClaimSpec: a claim is for a filesystem unless it says block.
func defaultClaimSpec(spec *corev1.PersistentVolumeClaimSpec) {
	if spec.VolumeMode == nil {
		mode := corev1.PersistentVolumeFilesystem
		spec.VolumeMode = &mode
	}
}

// defaultPersistentVolume: Retain, Filesystem; a new volume is Pending.
func defaultPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		mode := corev1.PersistentVolumeFilesystem
		pv.Spec.VolumeMode = &mode
	}
}

var claimStrategy = kindStrategy(kindRules[*corev1.PersistentVolumeClaim]{
	defaults: func(pvc *corev1.PersistentVolumeClaim) { defaultClaimSpec(&pvc.Spec) },
	validate: validatePersistentVolumeClaim, validateUpdate: validatePersistentVolumeClaimUpdate,
})

var volumeStrategy = kindStrategy(kindRules[*corev1.PersistentVolume]{
	defaults: defaultPersistentVolume, validate: validatePersistentVolume, validateUpdate: validatePersistentVolumeUpdate,
})

var volumeAccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany,
	corev1.ReadWriteMany, corev1.ReadWriteOncePod}

var volumeModes = []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}

var volumeReclaimPolicies = []corev1.PersistentVolumeReclaimPolicy{corev1.PersistentVolumeReclaimRecycle, corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRetain}

var storageResourceSupport = []corev1.ResourceName{corev1.ResourceStorage}

// validateAccessModes: at least one, each known, ReadWriteOncePod alone.
func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, required string, path *field.Path) field.ErrorList {
	if len(modes) == 0 {
		return field.ErrorList{field.Required(path, required)}
	}
	var errs field.ErrorList
	for _, m := range modes {
		if !contains(volumeAccessModes, m) {
			errs = append(errs, field.NotSupported(path, m, volumeAccessModes))
		}
	}
	if contains(modes, corev1.ReadWriteOncePod) && len(modes) > 1 {
		errs = append(errs, field.Forbidden(path, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

// validateStorageClassName: empty (no class) or a DNS subdomain.
func validateStorageClassName(name *string, path *field.Path) field.ErrorList {
	if name == nil || *name == "" {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.NameIsDNSSubdomain(*name, false) {
		errs = append(errs, field.Invalid(path, *name, msg))
	}
	return errs
}

func validateVolumeMode(mode *corev1.PersistentVolumeMode, path *field.Path) field.ErrorList {
	if mode != nil && !contains(volumeModes, *mode) {
		return field.ErrorList{field.NotSupported(path, *mode, volumeModes)}
	}
	return nil
}

func validatePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	spec, path := &pvc.Spec, field.NewPath("spec")
	errs := validateAccessModes(spec.AccessModes, "at least 1 access mode is required", path.Child("accessModes"))
	if spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, path.Child("selector"))...)
	}
	storagePath := path.Child("resources").Key(string(corev1.ResourceStorage))
	if size, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(storagePath, ""))
	} else {
		errs = append(errs, validatePositiveQuantity(size, storagePath)...)
	}
	errs = append(errs, validateStorageClassName(spec.StorageClassName, path.Child("storageClassName"))...)
	return append(errs, validateVolumeMode(spec.VolumeMode, path.Child("volumeMode"))...)
}

// validatePersistentVolumeClaimUpdate: a claim's spec is fixed once
// created, except the volume it is bound to (set once) and, for a bound
// claim, its storage request (which may not go below the capacity in its
// status) and volumeAttributesClassName.
func validatePersistentVolumeClaimUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	newSpec, oldSpec := pvc.Spec.DeepCopy(), old.Spec.DeepCopy()
	if oldSpec.VolumeName == "" {
		oldSpec.VolumeName = newSpec.VolumeName
	}
	bound := pvc.Status.Phase == corev1.ClaimBound
	if bound && newSpec.Resources.Requests != nil {
		newSpec.Resources.Requests[corev1.ResourceStorage] = oldSpec.Resources.Requests[corev1.ResourceStorage]
	}
	if bound {
		newSpec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
	}
	var errs field.ErrorList
	if !equality.Semantic.DeepEqual(newSpec, oldSpec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"))
	}
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if capacity := old.Status.Capacity[corev1.ResourceStorage]; newSize.Cmp(oldSize) < 0 && newSize.Cmp(capacity) <= 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	return errs
}

func validatePersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	spec, path := &pv.Spec, field.NewPath("spec")
	errs := validateAccessModes(spec.AccessModes, "must specify at least 1 access mode", path.Child("accessModes"))
	capPath := path.Child("capacity")
	if len(spec.Capacity) == 0 {
		errs = append(errs, field.Required(capPath, ""))
	} else if _, ok := spec.Capacity[corev1.ResourceStorage]; !ok || len(spec.Capacity) > 1 {
		errs = append(errs, field.NotSupported(capPath, keysOf(spec.Capacity), storageResourceSupport))
	}
	for name, q := range spec.Capacity {
		errs = append(errs, validatePositiveQuantity(q, capPath.Key(string(name)))...)
	}
	if p := spec.PersistentVolumeReclaimPolicy; p != "" && !contains(volumeReclaimPolicies, p) {
		errs = append(errs, field.NotSupported(path.Child("persistentVolumeReclaimPolicy"), p, volumeReclaimPolicies))
	}
	errs = append(errs, validateVolumeSource(&spec.PersistentVolumeSource, path)...)
	errs = append(errs, validateStorageClassName(&spec.StorageClassName, path.Child("storageClassName"))...)
	return append(errs, validateVolumeMode(spec.VolumeMode, path.Child("volumeMode"))...)
}

// validateVolumeSource: exactly one volume type, with the fields the
// common ones cannot do without.
func validateVolumeSource(src *corev1.PersistentVolumeSource, path *field.Path) field.ErrorList {
	var set []string
	v, t := reflect.ValueOf(src).Elem(), reflect.TypeOf(src).Elem()
	for i := range t.NumField() {
		if !v.Field(i).IsNil() {
			set = append(set, jsonName(t.Field(i)))
		}
	}
	switch {
	case len(set) == 0:
		return field.ErrorList{field.Required(path, "must specify a volume type")}
	case len(set) > 1:
		return field.ErrorList{field.Forbidden(path.Child(set[1]), "may not specify more than 1 volume type")}
	}
	var errs field.ErrorList
	required := func(value string, p *field.Path) {
		if value == "" {
			errs = append(errs, field.Required(p, ""))
		}
	}
	switch {
	case src.HostPath != nil:
		required(src.HostPath.Path, path.Child("hostPath", "path"))
	case src.Local != nil:
		required(src.Local.Path, path.Child("local", "path"))
	case src.NFS != nil:
		required(src.NFS.Server, path.Child("nfs", "server"))
		required(src.NFS.Path, path.Child("nfs", "path"))
	case src.CSI != nil:
		required(src.CSI.Driver, path.Child("csi", "driver"))
		required(src.CSI.VolumeHandle, path.Child("csi", "volumeHandle"))
	}
	return errs
}

// validatePersistentVolumeUpdate: the volume source and mode are fixed,
// and so is a node affinity once set.
func validatePersistentVolumeUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	var errs field.ErrorList
	if !equality.Semantic.DeepEqual(pv.Spec.PersistentVolumeSource, old.Spec.PersistentVolumeSource) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"), "spec.persistentvolumesource is immutable after creation"))
	}
	errs = append(errs, validation.ValidateImmutableField(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil {
		errs = append(errs, validation.ValidateImmutableField(pv.Spec.NodeAffinity, old.Spec.NodeAffinity, field.NewPath("nodeAffinity"))...)
	}
	return errs
}

// accessModes prints "RWO,ROX" as kubectl does.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	short := map[corev1.PersistentVolumeAccessMode]string{
		corev1.ReadWriteOnce: "RWO", corev1.ReadOnlyMany: "ROX", corev1.ReadWriteMany: "RWX", corev1.ReadWriteOncePod: "RWOP",
	}
	var out []string
	for _, m := range modes {
		out = append(out, short[m])
	}
	return strings.Join(out, ",")
}

func volumeMode(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return "<unset>"
	}
	return string(*m)
}

var claimPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Status", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"], 0),
		column("Volume", "string", corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"], 0),
		column("Capacity", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"], 0),
		column("Access Modes", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"], 0),
		column("StorageClass", "string", "StorageClass of the pvc", 0),
		column("VolumeAttributesClass", "string", corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeAttributesClassName"], 0),
		rest.AgeColumn,
		column("VolumeMode", "string", corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"], 1),
	},
	func(pvc *corev1.PersistentVolumeClaim, now time.Time) metav1.TableRow {
		phase := string(pvc.Status.Phase)
		if pvc.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		capacity := ""
		if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
			capacity = q.String()
		}
		return metav1.TableRow{Cells: []any{
			pvc.Name, phase, pvc.Spec.VolumeName, capacity, accessModes(pvc.Status.AccessModes),
			deref(pvc.Spec.StorageClassName, ""), deref(pvc.Spec.VolumeAttributesClassName, "<unset>"),
			age(pvc.CreationTimestamp.Time, now), volumeMode(pvc.Spec.VolumeMode),
		}}
	},
)

var volumePrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Capacity", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"], 0),
		column("Access Modes", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"], 0),
		column("Reclaim Policy", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"], 0),
		column("Status", "string", corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"], 0),
		column("Claim", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"], 0),
		column("StorageClass", "string", "StorageClass of the pv", 0),
		column("VolumeAttributesClass", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeAttributesClassName"], 0),
		column("Reason", "string", corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"], 0),
		rest.AgeColumn,
		column("VolumeMode", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"], 1),
	},
	func(pv *corev1.PersistentVolume, now time.Time) metav1.TableRow {
		claim := ""
		if ref := pv.Spec.ClaimRef; ref != nil {
			claim = ref.Namespace + "/" + ref.Name
		}
		capacity := ""
		if q, ok := pv.Spec.Capacity[corev1.ResourceStorage]; ok {
			capacity = q.String()
		}
		phase := string(pv.Status.Phase)
		if pv.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		return metav1.TableRow{Cells: []any{
			pv.Name, capacity, accessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy), phase, claim,
			pv.Spec.StorageClassName, deref(pv.Spec.VolumeAttributesClassName, "<unset>"), pv.Status.Reason,
			age(pv.CreationTimestamp.Time, now), volumeMode(pv.Spec.VolumeMode),
		}}
	},
)
