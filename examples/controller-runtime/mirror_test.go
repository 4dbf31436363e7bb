package mirror

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"minicp/e2e/framework"
)

// startManager runs a controller-runtime manager with the mirror
// controller against the minicp stack s until the test ends.
func startManager(t *testing.T, s *framework.Stack) {
	t.Helper()
	mgr, err := ctrl.NewManager(s.RESTConfig, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"}, // no metrics listener
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatalf("creating the manager: %v", err)
	}
	if err := (&Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatalf("setting up the controller: %v", err)
	}
	runManager(t, mgr)
}

// runManager starts mgr and returns a stop that cancels it and waits for
// it to return; stop runs at the end of the test too, so a test that
// fails before calling it leaves no manager running.
func runManager(t *testing.T, mgr ctrl.Manager) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1) // receives the manager's result when it stops
	// The manager runs until cancel; stop waits for it to return.
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func TestALabelledConfigMapIsMirroredAndKeptInStep(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	startManager(t, s)
	ctx := framework.Context(t, 60*time.Second)
	cms := s.Clientset.CoreV1().ConfigMaps("default")

	src, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Labels: map[string]string{Label: "true"}},
		Data:       map[string]string{"mode": "fast"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	mirror := waitForMirror(t, ctx, s, "settings", map[string]string{"mode": "fast"})
	if ref := metav1.GetControllerOf(mirror); ref == nil || ref.UID != src.UID || ref.Kind != "ConfigMap" {
		t.Errorf("mirror's controller reference: got %+v, want ConfigMap settings (uid %s)", ref, src.UID)
	}

	src.Data["mode"] = "safe"
	if _, err := cms.Update(ctx, src, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForMirror(t, ctx, s, "settings", map[string]string{"mode": "safe"})

	// The unlabelled ConfigMap got no mirror. The labelled one's second
	// mirror was written after the first event for it, so by now the
	// controller has seen (and ignored) the unlabelled one's.
	if _, err := cms.Get(ctx, "unlabelled"+Suffix, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("mirror of an unlabelled ConfigMap: got %v, want NotFound", err)
	}
}

// waitForMirror polls until the mirror of name holds want.
func waitForMirror(t *testing.T, ctx context.Context, s *framework.Stack, name string, want map[string]string) *corev1.ConfigMap {
	t.Helper()
	var got *corev1.ConfigMap
	framework.Eventually(t, 30*time.Second, "the mirror of "+name+" to hold "+want["mode"], func() bool {
		cm, err := s.Clientset.CoreV1().ConfigMaps("default").Get(ctx, name+Suffix, metav1.GetOptions{})
		if err != nil {
			return false
		}
		got = cm
		return maps.Equal(cm.Data, want)
	})
	return got
}
