package e2e

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/internal/testsupport"
)

// The garbage collector follows resources that come and go: it starts
// watching a custom resource once discovery serves it (and collects a
// CronTab whose owner is gone), and stops once the CRD is deleted.
func TestGarbageCollectorFollowsCustomResourcesThatComeAndGo(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.GarbageCollectorResync = 200 * time.Millisecond
	}})
	ctx := framework.Context(t, time.Minute)
	ext := clientset.NewForConfigOrDie(s.RESTConfig)
	dyn := dynamic.NewForConfigOrDie(s.RESTConfig)
	// monitored reads the collector's gauge of watched resources; -1 when
	// it is not reported yet.
	monitored := func() float64 {
		families, err := s.ControlPlane.Metrics().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() == "garbagecollector_controller_monitored_resources" && len(f.GetMetric()) == 1 {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		return -1
	}
	var before float64
	framework.Eventually(t, framework.StateTimeout, "the collector to watch the built-in resources", func() bool {
		before = monitored()
		return before > 0
	})

	installCRD(t, ctx, ext, crontabCRD())
	owner, err := s.Clientset.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep := crontab("dependent", "* * * * *")
	dep.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}})
	createWhenServed(t, ctx, dyn, dep)
	framework.Eventually(t, framework.StateTimeout, "the collector to watch crontabs too", func() bool {
		return monitored() == before+1
	})
	if err := s.Clientset.CoreV1().ConfigMaps("default").Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.StateTimeout, "the CronTab whose owner is gone to be collected", func() bool {
		_, err := dyn.Resource(crontabsV1).Namespace("default").Get(ctx, "dependent", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})

	if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "crontabs.stable.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.StateTimeout, "the collector to stop watching crontabs", func() bool {
		return monitored() == before
	})
}

// When a CRD is deleted, the collector's informer of its resource meets a
// 404 and asks for a discovery at once, which drops the informer with one
// info line: no "Failed to watch" error at every retry until the next
// resync (issue 27: five such lines over 25 s).
func TestGarbageCollectorDropsADeletedCRDsInformerQuietly(t *testing.T) {
	var logs testsupport.SyncBuffer
	// Long enough that the drop cannot wait for it; short enough that
	// the collector starts watching the new CRD within the test.
	const resync = 5 * time.Second
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.GarbageCollectorResync = resync
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}})
	ctx := framework.Context(t, time.Minute)
	ext := clientset.NewForConfigOrDie(s.RESTConfig)
	dyn := dynamic.NewForConfigOrDie(s.RESTConfig)
	var before float64
	framework.Eventually(t, framework.StateTimeout, "the collector to watch the built-in resources", func() bool {
		before = gcMonitored(t, s)
		return before > 0
	})
	installCRD(t, ctx, ext, crontabCRD())
	createWhenServed(t, ctx, dyn, crontab("one", "* * * * *"))
	framework.Eventually(t, framework.StateTimeout, "the collector to watch crontabs", func() bool {
		return gcMonitored(t, s) == before+1
	})

	deleted := time.Now()
	if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "crontabs.stable.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	const stopped = "resource no longer served; stopped watching it"
	framework.Eventually(t, framework.StateTimeout, "the collector to stop watching crontabs", func() bool {
		return strings.Contains(logs.String(), stopped)
	})
	took := time.Since(deleted)
	// Let a few of the reflector's retries pass, had the informer lived on.
	framework.Eventually(t, framework.StateTimeout, "a resync after the drop", func() bool { return time.Since(deleted) > resync+time.Second })
	out := logs.String()
	if n := strings.Count(out, stopped); n != 1 {
		t.Errorf("%d lines say the collector stopped watching crontabs, want 1:\n%s", n, out)
	}
	if strings.Contains(out, "Failed to watch") {
		t.Errorf("the collector logged failed watches after the CRD was deleted:\n%s", out)
	}
	t.Logf("the informer was dropped %s after the CRD's deletion (resync every %s)", took.Round(time.Millisecond), resync)
}

// gcMonitored reads the collector's gauge of watched resources; -1 when
// it is not reported yet.
func gcMonitored(t *testing.T, s *framework.Stack) float64 {
	t.Helper()
	families, err := s.ControlPlane.Metrics().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "garbagecollector_controller_monitored_resources" && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}
