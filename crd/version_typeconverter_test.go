package crd

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields/managedfieldstest"
)

func TestTypeConverterAppliesAndFindsConflicts(t *testing.T) {
	v := testVersion(t)
	tc, err := v.TypeConverter()
	if err != nil {
		t.Fatalf("TypeConverter: %v", err)
	}
	if again, _ := v.TypeConverter(); again != tc {
		t.Error("TypeConverter built a second converter, want the first one shared")
	}
	// The descriptor's lazy converter is the same converter, built on use.
	fm := managedfieldstest.NewTestFieldManager(v.LazyTypeConverter(), v.GroupVersionKind())

	first := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default}, spec: {size: small, ports: [{name: http, port: 80}]}}")
	if err := fm.Apply(first, "alice", false); err != nil {
		t.Fatalf("alice's apply: %v", err)
	}
	// Bob adds a port: the ports list is a map keyed by name, so his entry
	// merges beside alice's instead of replacing the list.
	second := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default}, spec: {ports: [{name: https, port: 443}]}}")
	if err := fm.Apply(second, "bob", false); err != nil {
		t.Fatalf("bob's apply: %v", err)
	}
	ports, _, _ := unstructured.NestedSlice(fm.Live().(*unstructured.Unstructured).Object, "spec", "ports")
	if len(ports) != 2 {
		t.Fatalf("spec.ports = %v, want alice's and bob's entries", ports)
	}
	managers := []string{}
	for _, e := range fm.ManagedFields() {
		managers = append(managers, e.Manager)
	}
	if strings.Join(managers, ",") != "alice,bob" {
		t.Errorf("managers = %v, want alice and bob", managers)
	}

	// Bob changing alice's size conflicts, unless he forces it.
	third := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default}, spec: {size: large}}")
	err = fm.Apply(third, "bob", false)
	if err == nil || !strings.Contains(err.Error(), `conflict with "alice"`) || !strings.Contains(err.Error(), ".spec.size") {
		t.Fatalf("bob's apply of spec.size = %v, want a conflict with alice on .spec.size", err)
	}
	if err := fm.Apply(third, "bob", true); err != nil {
		t.Fatalf("bob's forced apply: %v", err)
	}
	if got, _, _ := unstructured.NestedString(fm.Live().(*unstructured.Unstructured).Object, "spec", "size"); got != "large" {
		t.Errorf("spec.size = %q, want large after the forced apply", got)
	}
}

func TestTypeConverterRefusesAFieldTheSchemaDoesNotHave(t *testing.T) {
	tc, err := testVersion(t).TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {nosuchfield: 1}}")
	if _, err := tc.ObjectToTyped(u); err == nil {
		t.Fatal("ObjectToTyped accepted spec.nosuchfield, want an error")
	}
}
