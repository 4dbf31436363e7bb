package crd

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// namesInUse are the names the other CRDs of a group have accepted:
// resource names (plural, singular, short names) and kinds (kind, list
// kind), each its own space.
type namesInUse struct {
	resources, kinds map[string]bool
}

func (c *Controller) namesInUse(crd *apiextensionsv1.CustomResourceDefinition) (namesInUse, error) {
	used := namesInUse{resources: map[string]bool{}, kinds: map[string]bool{}}
	crds, err := c.lister.List(labels.Everything())
	if err != nil {
		return used, err
	}
	for _, other := range crds {
		if other.Spec.Group != crd.Spec.Group || other.Name == crd.Name {
			continue
		}
		n := other.Status.AcceptedNames
		for _, name := range append([]string{n.Plural, n.Singular}, n.ShortNames...) {
			used.resources[name] = true
		}
		used.kinds[n.Kind], used.kinds[n.ListKind] = true, true
	}
	return used, nil
}

// taken reports whether requested, which crd has not accepted already
// (accepted), belongs to another CRD.
func taken(requested, accepted string, used map[string]bool) error {
	if requested == accepted || requested == "" || !used[requested] {
		return nil
	}
	return fmt.Errorf("%q is already in use", requested)
}

// acceptNames computes crd's accepted names and its NamesAccepted
// condition: each requested name is accepted unless another CRD of the
// group holds it; the condition names the last conflict found.
func acceptNames(crd *apiextensionsv1.CustomResourceDefinition, used namesInUse) (apiextensionsv1.CustomResourceDefinitionNames, apiextensionsv1.CustomResourceDefinitionCondition) {
	want, have := crd.Spec.Names, crd.Status.AcceptedNames
	names := have
	cond := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue,
		Reason: "NoConflicts", Message: "no conflicts found",
	}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionFalse, reason, err.Error()
	}
	check := func(requested, accepted string, used map[string]bool, reason string, set func()) {
		if err := taken(requested, accepted, used); err != nil {
			conflict(reason, err)
			return
		}
		set()
	}
	check(want.Plural, have.Plural, used.resources, "PluralConflict", func() { names.Plural = want.Plural })
	check(want.Singular, have.Singular, used.resources, "SingularConflict", func() { names.Singular = want.Singular })
	shortOK := true
	for _, short := range want.ShortNames {
		if slices.Contains(have.ShortNames, short) {
			continue
		}
		if err := taken(short, "", used.resources); err != nil {
			conflict("ShortNamesConflict", err)
			shortOK = false
		}
	}
	if shortOK {
		names.ShortNames = want.ShortNames
	}
	check(want.Kind, have.Kind, used.kinds, "KindConflict", func() { names.Kind = want.Kind })
	check(want.ListKind, have.ListKind, used.kinds, "ListKindConflict", func() { names.ListKind = want.ListKind })
	names.Categories = want.Categories
	return names, cond
}

// accept brings crd's accepted names and its NamesAccepted and Established
// conditions up to date, with one status update when anything changed.
// Established becomes True once the names are accepted, and stays.
func (c *Controller) accept(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	used, err := c.namesInUse(crd)
	if err != nil {
		return err
	}
	names, namesCond := acceptNames(crd, used)
	established := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
		Reason: "NotAccepted", Message: "not all names are accepted",
	}
	if old := apihelpers.FindCRDCondition(crd, apiextensionsv1.Established); old != nil {
		established = *old
	}
	if established.Status != apiextensionsv1.ConditionTrue && namesCond.Status == apiextensionsv1.ConditionTrue {
		established = apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue,
			Reason: "InitialNamesAccepted", Message: "the initial names have been accepted",
		}
	}
	before := crd.Status.DeepCopy()
	namesChanged := !equality.Semantic.DeepEqual(crd.Status.AcceptedNames, names)
	crd.Status.AcceptedNames = names
	now := metav1.Now()
	namesCond.LastTransitionTime, established.LastTransitionTime = now, now
	apihelpers.SetCRDCondition(crd, namesCond) // keeps the old transition time when the status is unchanged
	apihelpers.SetCRDCondition(crd, established)
	if equality.Semantic.DeepEqual(before, &crd.Status) {
		return nil
	}
	if _, err := c.client.ApiextensionsV1().CustomResourceDefinitions().UpdateStatus(ctx, crd, metav1.UpdateOptions{}); err != nil {
		return err
	}
	c.log.Info("crd controller: names and conditions", "crd", crd.Name, "namesAccepted", namesCond.Status, "reason", namesCond.Reason, "established", established.Status)
	if namesChanged {
		// Names this CRD gave up may be what another one of the group waits for.
		c.enqueueGroup(crd.Spec.Group, crd.Name)
	}
	return nil
}
