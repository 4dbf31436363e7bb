package rest

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestStatusUpdatesUseValidateStatusUpdateAloneWhenSet(t *testing.T) {
	var ran []string
	check := func(name string) func(obj runtime.Object) field.ErrorList {
		return func(runtime.Object) field.ErrorList { ran = append(ran, name); return nil }
	}
	checkUpdate := func(name string) func(obj, old runtime.Object) field.ErrorList {
		return func(runtime.Object, runtime.Object) field.ErrorList { ran = append(ran, name); return nil }
	}
	st := &Strategy{Validate: check("Validate"), ValidateUpdate: checkUpdate("ValidateUpdate"), ValidateStatusUpdate: checkUpdate("ValidateStatusUpdate")}
	obj := &corev1.ConfigMap{}
	for _, tc := range []struct {
		subresource string
		want        string
	}{
		{"", "Validate,ValidateUpdate"},
		{"status", "ValidateStatusUpdate"},
	} {
		ran = nil
		st.checkUpdate(obj, obj, tc.subresource)
		if got := strings.Join(ran, ","); got != tc.want {
			t.Errorf("update of %q ran %s, want %s", tc.subresource, got, tc.want)
		}
	}
	st.ValidateStatusUpdate = nil
	ran = nil
	st.checkUpdate(obj, obj, "status")
	if got := strings.Join(ran, ","); got != "Validate,ValidateUpdate" {
		t.Errorf("status update without ValidateStatusUpdate ran %s, want Validate,ValidateUpdate", got)
	}
}
