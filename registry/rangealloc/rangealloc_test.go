package rangealloc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"minicp/internal/testetcd"
)

func TestBitmapAllocatesEveryOffsetOnceThenIsFull(t *testing.T) {
	bm := newBitmap(40)
	rnd := rand.New(rand.NewPCG(1, 2))
	seen := map[int]bool{}
	for i := 0; i < 40; i++ {
		off, ok := bm.allocateNext(16, rnd)
		if !ok || seen[off] {
			t.Fatalf("allocation %d: got %d (ok %v), already given: %v", i, off, ok, seen[off])
		}
		// The upper part of the range is used up before the reserved band.
		if i < 24 && off < 16 {
			t.Fatalf("allocation %d came from the reserved band: %d", i, off)
		}
		seen[off] = true
	}
	if _, ok := bm.allocateNext(16, rnd); ok {
		t.Fatal("a full bitmap allocated again")
	}
	bm.release(7)
	if off, ok := bm.allocateNext(16, rnd); !ok || off != 7 {
		t.Fatalf("got %d %v, want the released 7", off, ok)
	}
}

func TestBitmapBytesRoundTrip(t *testing.T) {
	bm := newBitmap(300)
	for _, off := range []int{0, 9, 255, 299} {
		bm.allocate(off)
	}
	again := newBitmap(300)
	again.restore(bm.bytes())
	for off := 0; off < 300; off++ {
		if again.has(off) != bm.has(off) {
			t.Fatalf("offset %d: got %v, want %v", off, again.has(off), bm.has(off))
		}
	}
	if again.free() != 296 {
		t.Fatalf("free: got %d, want 296", again.free())
	}
}

func TestIPRangeLeavesOutNetworkAndBroadcast(t *testing.T) {
	r, err := ParseIPRange("10.0.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != 254 {
		t.Fatalf("size: got %d, want 254", r.Size())
	}
	if got := r.IP(0).String(); got != "10.0.0.1" {
		t.Fatalf("offset 0: got %s, want 10.0.0.1", got)
	}
	if got := r.IP(253).String(); got != "10.0.0.254" {
		t.Fatalf("last offset: got %s, want 10.0.0.254", got)
	}
	for _, ip := range []string{"10.0.0.0", "10.0.0.255", "10.0.1.1"} {
		if _, ok := r.Offset(net.ParseIP(ip)); ok {
			t.Errorf("%s is in the usable range", ip)
		}
	}
	if off, ok := r.Offset(net.ParseIP("10.0.0.10")); !ok || off != 9 {
		t.Fatalf("10.0.0.10: got %d %v, want 9", off, ok)
	}
	if r.reservedBand() != 16 {
		t.Fatalf("reserved band: got %d, want 16", r.reservedBand())
	}
	if _, err := ParseIPRange("10.0.0.0/8"); err == nil {
		t.Fatal("a /8 was accepted")
	}
}

func TestParsePortRange(t *testing.T) {
	r, err := ParsePortRange("30000-32767")
	if err != nil || r.Base != 30000 || r.Size != 2768 || r.String() != "30000-32767" {
		t.Fatalf("got %+v, %v", r, err)
	}
	for _, bad := range []string{"", "3-1", "0-10", "1-70000", "a-b"} {
		if _, err := ParsePortRange(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

func startEtcd(t *testing.T) *clientv3.Client {
	t.Helper()
	return testetcd.Start(t).Client()
}

func protobufCodec(t *testing.T) runtime.Codec {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(scheme)
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), "application/vnd.kubernetes.protobuf")
	return codecs.CodecForVersions(info.Serializer, info.Serializer, corev1.SchemeGroupVersion, corev1.SchemeGroupVersion)
}

// Concurrent allocators on one key (two apiservers, or one restarted) never
// hand out an address twice, and the key holds upstream's RangeAllocation.
func TestIPsNeverGiveAnAddressTwiceAcrossAllocators(t *testing.T) {
	client := startEtcd(t)
	codec := protobufCodec(t)
	r, _ := ParseIPRange("10.0.0.0/27") // 30 addresses
	ctx := context.Background()
	first, second := NewIPs(client, codec, r), NewIPs(client, codec, r)
	if err := first.Allocate(ctx, net.ParseIP("10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if err := second.Allocate(ctx, net.ParseIP("10.0.0.1")); !errors.Is(err, ErrAllocated) {
		t.Fatalf("second allocation of 10.0.0.1: got %v, want ErrAllocated", err)
	}
	var mu sync.Mutex
	got := map[string]bool{"10.0.0.1": true}
	var wg sync.WaitGroup
	for i := 0; i < 29; i++ {
		wg.Add(1)
		go func(a *IPs) {
			defer wg.Done()
			ip, err := a.AllocateNext(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil || got[ip.String()] {
				t.Errorf("got %v %v (given before: %v)", ip, err, got[ip.String()])
				return
			}
			got[ip.String()] = true
		}([]*IPs{first, second}[i%2])
	}
	wg.Wait()
	if _, err := first.AllocateNext(ctx); !errors.Is(err, ErrFull) {
		t.Fatalf("31st allocation: got %v, want ErrFull", err)
	}
	if err := second.Release(ctx, net.ParseIP("10.0.0.9")); err != nil {
		t.Fatal(err)
	}
	if ip, err := first.AllocateNext(ctx); err != nil || ip.String() != "10.0.0.9" {
		t.Fatalf("after a release: got %v %v, want 10.0.0.9", ip, err)
	}

	resp, err := client.Get(ctx, ServiceIPsKey)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("reading %s: %v", ServiceIPsKey, err)
	}
	stored := &corev1.RangeAllocation{}
	if _, _, err := codec.Decode(resp.Kvs[0].Value, nil, stored); err != nil {
		t.Fatal(err)
	}
	if stored.Range != "10.0.0.0/27" || fmt.Sprintf("%x", stored.Data) != "3fffffff" {
		t.Fatalf("stored: range %q data %x, want 10.0.0.0/27 3fffffff", stored.Range, stored.Data)
	}
}

func TestPortsAllocateAndRelease(t *testing.T) {
	client := startEtcd(t)
	r, _ := ParsePortRange("30000-30009")
	ports := NewPorts(client, protobufCodec(t), r)
	ctx := context.Background()
	if err := ports.Allocate(ctx, 29999); !errors.Is(err, ErrNotInRange) {
		t.Fatalf("29999: got %v, want ErrNotInRange", err)
	}
	if err := ports.Allocate(ctx, 30005); err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{30005: true}
	for i := 0; i < 9; i++ {
		p, err := ports.AllocateNext(ctx)
		if err != nil || seen[p] {
			t.Fatalf("got %d %v", p, err)
		}
		seen[p] = true
	}
	if _, err := ports.AllocateNext(ctx); !errors.Is(err, ErrFull) {
		t.Fatalf("got %v, want ErrFull", err)
	}
	if err := ports.Release(ctx, 30005); err != nil {
		t.Fatal(err)
	}
	if err := ports.Allocate(ctx, 30005); err != nil {
		t.Fatalf("allocating a released port: %v", err)
	}
}
