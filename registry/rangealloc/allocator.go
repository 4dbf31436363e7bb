package rangealloc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Upstream's keys for the two ranges.
const (
	ServiceIPsKey       = "/registry/ranges/serviceips"
	ServiceNodePortsKey = "/registry/ranges/servicenodeports"
)

// Errors an allocation returns; the registry turns them into 422s.
var (
	ErrFull       = errors.New("range is full")
	ErrAllocated  = errors.New("provided value is already allocated")
	ErrNotInRange = errors.New("provided value is not in the valid range")
)

// Allocator is one range kept at one etcd key. It is safe for concurrent
// use: every operation reads the key, changes a copy of its bitmap and
// writes it back only if the key did not change in between.
type Allocator struct {
	kv       clientv3.KV
	key      string
	spec     string // the range as stored: "10.0.0.0/24", "30000-32767"
	size     int
	reserved int // lower band kept for values asked for by number
	codec    runtime.Codec

	// mu guards rnd (math/rand's generators are not safe for concurrent use).
	mu  sync.Mutex
	rnd *rand.Rand
}

func newAllocator(kv clientv3.KV, codec runtime.Codec, key, spec string, size, reserved int) *Allocator {
	return &Allocator{kv: kv, key: key, spec: spec, size: size, reserved: reserved, codec: codec,
		rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
}

// update runs change on the stored bitmap and writes the result, retrying
// with the fresh state when another writer got there first, until ctx ends
// (as upstream's GuaranteedUpdate). change returns whether anything
// changed; nothing is written otherwise.
func (a *Allocator) update(ctx context.Context, change func(*bitmap) (bool, error)) error {
	for ctx.Err() == nil {
		resp, err := a.kv.Get(ctx, a.key)
		if err != nil {
			return err
		}
		bm := newBitmap(a.size)
		var modRev int64
		if len(resp.Kvs) == 1 {
			kv := resp.Kvs[0]
			modRev = kv.ModRevision
			stored := &corev1.RangeAllocation{}
			if _, _, err := a.codec.Decode(kv.Value, nil, stored); err != nil {
				return fmt.Errorf("decoding %s: %w", a.key, err)
			}
			// A range changed by a flag starts empty, as upstream's
			// repair does before it marks what Services hold.
			if stored.Range == a.spec {
				bm.restore(stored.Data)
			}
		}
		changed, err := change(bm)
		if err != nil || !changed {
			return err
		}
		data, err := runtime.Encode(a.codec, &corev1.RangeAllocation{Range: a.spec, Data: bm.bytes()})
		if err != nil {
			return err
		}
		txn, err := a.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(a.key), "=", modRev)).
			Then(clientv3.OpPut(a.key, string(data))).Commit()
		if err != nil {
			return err
		}
		if txn.Succeeded {
			return nil
		}
	}
	return fmt.Errorf("%s: %w", a.key, ctx.Err())
}

// allocate marks offset used; ErrAllocated if it was.
func (a *Allocator) allocate(ctx context.Context, offset int) error {
	return a.update(ctx, func(bm *bitmap) (bool, error) {
		if !bm.allocate(offset) {
			return false, ErrAllocated
		}
		return true, nil
	})
}

// allocateNext marks a free offset used and returns it; ErrFull if none.
func (a *Allocator) allocateNext(ctx context.Context) (int, error) {
	var got int
	err := a.update(ctx, func(bm *bitmap) (bool, error) {
		a.mu.Lock()
		offset, ok := bm.allocateNext(a.reserved, a.rnd)
		a.mu.Unlock()
		if !ok {
			return false, ErrFull
		}
		got = offset
		return true, nil
	})
	return got, err
}

// release marks offset free; releasing a free offset changes nothing.
func (a *Allocator) release(ctx context.Context, offset int) error {
	return a.update(ctx, func(bm *bitmap) (bool, error) {
		if !bm.has(offset) {
			return false, nil
		}
		bm.release(offset)
		return true, nil
	})
}

// has reports whether offset is allocated.
func (a *Allocator) has(ctx context.Context, offset int) (bool, error) {
	var used bool
	err := a.update(ctx, func(bm *bitmap) (bool, error) {
		used = bm.has(offset)
		return false, nil
	})
	return used, err
}

// IPs allocates ClusterIPs from one IPRange.
type IPs struct {
	a *Allocator
	r *IPRange
}

// NewIPs keeps r's allocations at ServiceIPsKey through kv; codec encodes
// the stored RangeAllocation (protobuf or JSON, as the registry stores
// everything else).
func NewIPs(kv clientv3.KV, codec runtime.Codec, r *IPRange) *IPs {
	return &IPs{a: newAllocator(kv, codec, ServiceIPsKey, r.String(), r.Size(), r.reservedBand()), r: r}
}

// Range returns the range addresses come from.
func (p *IPs) Range() *IPRange { return p.r }

// Allocate reserves ip; ErrNotInRange or ErrAllocated if it cannot.
func (p *IPs) Allocate(ctx context.Context, ip net.IP) error {
	offset, ok := p.r.Offset(ip)
	if !ok {
		return ErrNotInRange
	}
	return p.a.allocate(ctx, offset)
}

// AllocateNext reserves a free address; ErrFull if none is left.
func (p *IPs) AllocateNext(ctx context.Context) (net.IP, error) {
	offset, err := p.a.allocateNext(ctx)
	if err != nil {
		return nil, err
	}
	return p.r.IP(offset), nil
}

// Release frees ip; an address outside the range or free is ignored.
func (p *IPs) Release(ctx context.Context, ip net.IP) error {
	offset, ok := p.r.Offset(ip)
	if !ok {
		return nil
	}
	return p.a.release(ctx, offset)
}

// Has reports whether ip is allocated.
func (p *IPs) Has(ctx context.Context, ip net.IP) (bool, error) {
	offset, ok := p.r.Offset(ip)
	if !ok {
		return false, nil
	}
	return p.a.has(ctx, offset)
}

// Ports allocates NodePorts from one PortRange.
type Ports struct {
	a *Allocator
	r *PortRange
}

// NewPorts keeps r's allocations at ServiceNodePortsKey through kv.
func NewPorts(kv clientv3.KV, codec runtime.Codec, r *PortRange) *Ports {
	return &Ports{a: newAllocator(kv, codec, ServiceNodePortsKey, r.String(), r.Size, r.reservedBand()), r: r}
}

// Range returns the range ports come from.
func (p *Ports) Range() *PortRange { return p.r }

func (p *Ports) offset(port int32) (int, bool) {
	off := int(port) - p.r.Base
	return off, off >= 0 && off < p.r.Size
}

// Allocate reserves port; ErrNotInRange or ErrAllocated if it cannot.
func (p *Ports) Allocate(ctx context.Context, port int32) error {
	offset, ok := p.offset(port)
	if !ok {
		return ErrNotInRange
	}
	return p.a.allocate(ctx, offset)
}

// AllocateNext reserves a free port; ErrFull if none is left.
func (p *Ports) AllocateNext(ctx context.Context) (int32, error) {
	offset, err := p.a.allocateNext(ctx)
	if err != nil {
		return 0, err
	}
	return int32(p.r.Base + offset), nil
}

// Release frees port; a port outside the range or free is ignored.
func (p *Ports) Release(ctx context.Context, port int32) error {
	offset, ok := p.offset(port)
	if !ok {
		return nil
	}
	return p.a.release(ctx, offset)
}
