package watchcache

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

// The write load of the storage-level fan-out benchmark: 100 pods/s for 5 s.
const (
	fanOutRate   = 100
	fanOutWrites = 500
)

// BenchmarkFanOut measures fan-out at the storage layer, without HTTP: N
// consumers watch pods through registry.Interface while 100 pods/s are
// created, and each consumer encodes every event to JSON with the
// apiserver's encoder, as a watch handler does. From the cache, an event's
// object is encoded once whatever N; from etcd (the Store, the baseline in
// the same run), every consumer has its own etcd watch and decodes and
// encodes every event itself. Reports the delay from each create's return
// to its receipt by the last consumer, and the process's CPU (etcd
// included) per second.
//
//	go test -run XXX -bench BenchmarkFanOut -benchtime 1x -count 5 ./watchcache/
func BenchmarkFanOut(b *testing.B) {
	for _, sc := range []struct {
		name      string
		consumers int
		fromCache bool
	}{
		{"cache/watchers-100", 100, true},
		{"cache/watchers-1000", 1000, true},
		{"etcd/watchers-1000", 1000, false},
	} {
		b.Run(sc.name, func(b *testing.B) {
			for b.Loop() {
				runStorageFanOut(b, sc.consumers, sc.fromCache)
			}
		})
	}
}

func runStorageFanOut(b *testing.B, consumers int, fromCache bool) {
	h := startCache(b)
	h.createNamespace("default")
	var storage registry.Interface = h.store
	if fromCache {
		storage = h.cache
	}
	start := h.listPods("default", registry.ListOptions{}).ResourceVersion
	lastArrival := make([]atomic.Int64, fanOutWrites)
	var received atomic.Int64
	var wg sync.WaitGroup
	for range consumers {
		w, err := storage.Watch(h.ctx, podsRes, "default", registry.ListOptions{ResourceVersion: start})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		wg.Add(1)
		// One consumer: encode each event as the apiserver would, then
		// record its arrival.
		go func() {
			defer wg.Done()
			consume(w, lastArrival, &received)
		}()
	}

	cpuBefore, began := processCPU(b), time.Now()
	written := make([]time.Time, fanOutWrites)
	tick := time.NewTicker(time.Second / fanOutRate)
	var writers sync.WaitGroup
	errs := make(chan error, fanOutWrites)
	for i := range fanOutWrites { // open loop: a slow create does not delay the next
		<-tick.C
		writers.Add(1)
		go func() {
			defer writers.Done()
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fan-%d", i)},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
			}
			if _, err := h.cache.Create(h.ctx, podsRes, "default", pod, registry.WriteOptions{}); err != nil {
				errs <- err
			}
			written[i] = time.Now()
		}()
	}
	tick.Stop()
	writers.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	want := int64(fanOutWrites * consumers)
	for deadline := time.Now().Add(time.Minute); received.Load() < want && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	elapsed, cpu := time.Since(began), processCPU(b)-cpuBefore

	var delays []time.Duration
	for i := range fanOutWrites {
		if at := lastArrival[i].Load(); at != 0 {
			delays = append(delays, max(0, time.Duration(at-written[i].UnixNano())))
		}
	}
	slices.Sort(delays)
	if len(delays) == 0 {
		b.Fatal("nothing delivered")
	}
	b.ReportMetric(float64(received.Load())/elapsed.Seconds(), "events/s")
	b.ReportMetric(ms(delays[len(delays)/2]), "p50-ms")
	b.ReportMetric(ms(delays[len(delays)*99/100]), "p99-ms")
	b.ReportMetric(ms(delays[len(delays)-1]), "max-ms")
	b.ReportMetric(cpu.Seconds()/elapsed.Seconds(), "cores")
	b.ReportMetric(float64(want-received.Load()), "lost")
	b.ReportMetric(float64(h.podCache().stats.encodings.Load()), "encodings")
}

// consume reads a watch until it ends, encoding every event's object.
func consume(w watch.Interface, lastArrival []atomic.Int64, received *atomic.Int64) {
	for ev := range w.ResultChan() {
		if ev.Type != watch.Added {
			continue
		}
		// As the apiserver writes an event: straight to the connection.
		if err := jsonEncoder.Encode(ev.Object, io.Discard); err != nil {
			panic(err)
		}
		now := time.Now().UnixNano()
		obj := ev.Object
		if co, ok := obj.(*cachingObject); ok {
			obj = co.obj // read-only: no copy per consumer
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			panic(err)
		}
		num, ok := strings.CutPrefix(m.GetName(), "fan-")
		i, err := strconv.Atoi(num)
		if !ok || err != nil {
			continue
		}
		for {
			prev := lastArrival[i].Load()
			if now <= prev || lastArrival[i].CompareAndSwap(prev, now) {
				break
			}
		}
		received.Add(1)
	}
}

// jsonEncoder encodes pods to JSON as the apiserver's watch handler does.
var jsonEncoder = func() runtime.Encoder {
	info, _ := runtime.SerializerInfoForMediaType(registry.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	return registry.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
}()

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// processCPU is this process's user+system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
