package e2e

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"minicp/e2e/framework"
)

// BenchmarkCRDCreateToFirstCustomResource measures what a controller's
// test suite waits for after installing a CRD: from the CRD's create to
// the first create of one of its custom resources that succeeds (names
// accepted, Established, served, its watch cache started). The create is
// retried every millisecond until it does, so the figure is the delay
// plus at most one millisecond. Each iteration installs a CRD of its own.
// Besides the mean (ms/served) it reports the median and the first CRD's
// figure: the first CRD of a process pays for work done once.
func BenchmarkCRDCreateToFirstCustomResource(b *testing.B) {
	s := framework.Start(b, framework.Options{})
	ctx := framework.Context(b, 10*time.Minute)
	ext := clientset.NewForConfigOrDie(s.RESTConfig)
	dyn := dynamic.NewForConfigOrDie(s.RESTConfig)
	var served []time.Duration
	for i := 0; b.Loop(); i++ {
		crd := crontabCRD()
		crd.Spec.Group = fmt.Sprintf("g%d.example.com", i)
		crd.Name = "crontabs." + crd.Spec.Group
		gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: "v1", Resource: "crontabs"}
		obj := crontab("first", "* * * * *")
		obj.SetAPIVersion(crd.Spec.Group + "/v1")
		start := time.Now()
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := dyn.Resource(gvr).Namespace("default").Create(ctx, obj.DeepCopy(), metav1.CreateOptions{}); err == nil {
				break
			}
			if time.Since(start) > 10*time.Second {
				b.Fatalf("no %s served 10 s after its CRD was created", gvr)
			}
			time.Sleep(time.Millisecond) // a retry loop's pause, not synchronization: the create is what tells
		}
		served = append(served, time.Since(start))
	}
	var total time.Duration
	for _, d := range served {
		total += d
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/served")
	b.ReportMetric(ms(served[0]), "first-ms")
	b.ReportMetric(ms(median(served)), "median-ms")
}
