package kinds

// PersistentVolumes and PersistentVolumeClaims: the main rules of
// upstream's validation, those a client meets first (access modes, a
// size, one volume source, what an update may change).

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	volumeAccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany,
		corev1.ReadWriteMany, corev1.ReadWriteOncePod}
	volumeModes            = []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}
	volumeReclaimPolicies  = []corev1.PersistentVolumeReclaimPolicy{corev1.PersistentVolumeReclaimRecycle, corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRetain}
	storageResourceSupport = []corev1.ResourceName{corev1.ResourceStorage}
)

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

// validatePositiveQuantity: a size is more than zero.
func validatePositiveQuantity(q resource.Quantity, path *field.Path) field.ErrorList {
	if q.Cmp(resource.Quantity{}) <= 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be greater than zero")}
	}
	return nil
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

// keysOf lists a resource list's names, for a message.
func keysOf(list corev1.ResourceList) []string {
	var names []string
	for name := range list {
		names = append(names, string(name))
	}
	return names
}

// jsonName is a struct field's name in JSON.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}
