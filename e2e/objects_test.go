package e2e

import (
	"strconv"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func nodeLease(node string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(node),
			LeaseDurationSeconds: ptr.To(int32(40)),
			RenewTime:            &metav1.MicroTime{Time: metav1.Now().Time},
		},
	}
}

// revision parses a resourceVersion the way only a test may: minicp's
// resourceVersions are etcd revisions, but clients must treat them as opaque.
func revision(t testing.TB, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q is not an etcd revision: %v", rv, err)
	}
	return n
}
