package crd

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func crdWithNames(names apiextensionsv1.CustomResourceDefinitionNames) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Spec.Group, crd.Spec.Names = "example.com", names
	return crd
}

func TestNamesAreAcceptedUnlessAnotherCRDOfTheGroupHoldsThem(t *testing.T) {
	widgets := apiextensionsv1.CustomResourceDefinitionNames{
		Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList", ShortNames: []string{"wd"},
	}
	used := namesInUse{
		resources: map[string]bool{"gadgets": true, "gadget": true, "wd": true},
		kinds:     map[string]bool{"Gadget": true, "GadgetList": true},
	}
	cases := []struct {
		name       string
		names      apiextensionsv1.CustomResourceDefinitionNames
		accepted   apiextensionsv1.CustomResourceDefinitionNames // already accepted
		wantReason string
		wantPlural string
	}{
		{name: "free names are accepted", names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			wantReason: "NoConflicts", wantPlural: "widgets"},
		{name: "a short name held by another CRD is refused", names: widgets, wantReason: "ShortNamesConflict", wantPlural: "widgets"},
		{name: "a short name the CRD already holds stays", names: widgets, accepted: widgets, wantReason: "NoConflicts", wantPlural: "widgets"},
		{name: "a plural held by another CRD is refused and not accepted",
			names:      apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			wantReason: "PluralConflict", wantPlural: ""},
		{name: "a kind held by another CRD is refused",
			names:      apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Gadget", ListKind: "WidgetList"},
			wantReason: "KindConflict", wantPlural: "widgets"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			crd := crdWithNames(tc.names)
			crd.Status.AcceptedNames = tc.accepted
			names, cond := acceptNames(crd, used)
			if cond.Reason != tc.wantReason || names.Plural != tc.wantPlural {
				t.Fatalf("got reason %s, plural %q; want %s, %q", cond.Reason, names.Plural, tc.wantReason, tc.wantPlural)
			}
			wantStatus := apiextensionsv1.ConditionFalse
			if tc.wantReason == "NoConflicts" {
				wantStatus = apiextensionsv1.ConditionTrue
			}
			if cond.Status != wantStatus {
				t.Fatalf("got status %s, want %s", cond.Status, wantStatus)
			}
		})
	}
}
