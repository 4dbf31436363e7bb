package trim

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestManagedFieldsAreDroppedAndTheRestKept(t *testing.T) {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name: "n1", Labels: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}},
	}}
	out, err := ManagedFields(lease)
	if err != nil || out != lease || lease.ManagedFields != nil || lease.Labels["a"] != "b" {
		t.Errorf("got %v, %v with managedFields %v, want the same lease without them", out, err, lease.ManagedFields)
	}
	partial := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}}}
	if _, err := ManagedFields(partial); err != nil || partial.ManagedFields != nil {
		t.Errorf("PartialObjectMetadata kept %v (%v)", partial.ManagedFields, err)
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/n", Obj: lease}
	if out, err := ManagedFields(tomb); err != nil || out != tomb {
		t.Errorf("a tombstone: got %v, %v, want it unchanged", out, err)
	}
}
