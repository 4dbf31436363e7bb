package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"minicp/registry"
)

// Point is where a fault is injected.
type Point string

// The fault points.
const (
	Admission Point = "admission"  // the admission chain, as a slow or failing webhook would
	EtcdRange Point = "etcd.range" // etcd reads (GET, LIST, quorum checks)
	EtcdTxn   Point = "etcd.txn"   // etcd writes (create, update, delete transactions)
	EtcdWatch Point = "etcd.watch" // each response of an etcd watch stream
	EtcdLease Point = "etcd.lease" // etcd lease grants, keep-alives and lookups
)

// Points lists every fault point.
var Points = []Point{Admission, EtcdRange, EtcdTxn, EtcdWatch, EtcdLease}

// Errors an etcd fault can answer with, as etcd would.
const (
	ErrorTimeout  = "timeout"   // "etcdserver: request timed out" -> 504 from the apiserver
	ErrorNoLeader = "no-leader" // "etcdserver: no leader" -> 500
)

// Fault is one injected fault.
type Fault struct {
	Point Point `json:"point"`
	// Resource limits the fault to requests on one resource, named as
	// metrics name it: "pods", "events", "leases.coordination.k8s.io".
	// Empty: every request at the point. (etcd lease requests have no
	// resource: only point-wide faults reach them.)
	Resource string `json:"resource,omitempty"`
	// Delay holds each request back this long (or until its deadline).
	Delay Duration `json:"delay,omitempty"`
	// Error fails each request after the delay. For etcd points:
	// "timeout" or "no-leader"; a watch fault with any error cuts the
	// stream. For admission: any text, answered as 500 InternalError.
	Error string `json:"error,omitempty"`
	// Hits counts the requests the fault has applied to (read-only).
	Hits int64 `json:"hits"`
}

// Duration is a time.Duration written as Go writes it ("1.5s") in JSON.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a delay is a string such as \"2s\" or \"300ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Validate reports what is wrong with f, in words a user can act on.
func (f *Fault) Validate() error {
	var errs []error
	known := false
	for _, p := range Points {
		known = known || f.Point == p
	}
	if !known {
		errs = append(errs, fmt.Errorf("unknown point %q: use one of %v", f.Point, Points))
	}
	if f.Delay < 0 {
		errs = append(errs, fmt.Errorf("delay must not be negative, got %s", time.Duration(f.Delay)))
	}
	if f.Delay == 0 && f.Error == "" {
		errs = append(errs, errors.New("a fault needs a delay, an error, or both"))
	}
	if f.Point != Admission && f.Point != EtcdWatch && f.Error != "" && f.Error != ErrorTimeout && f.Error != ErrorNoLeader {
		errs = append(errs, fmt.Errorf("etcd faults fail with %q or %q, not %q", ErrorTimeout, ErrorNoLeader, f.Error))
	}
	return errors.Join(errs...)
}

// err is the error a request hit by f fails with, nil if none.
func (f *Fault) err() error {
	switch {
	case f.Error == "":
		return nil
	case f.Point == Admission:
		return fmt.Errorf("fault injected at admission: %s", f.Error)
	case f.Error == ErrorNoLeader:
		return rpctypes.ErrNoLeader
	case f.Error == ErrorTimeout:
		return rpctypes.ErrTimeout
	}
	return fmt.Errorf("fault injected at %s: %s", f.Point, f.Error)
}

type faultKey struct {
	point    Point
	resource string
}

// Set is the active faults. The zero value is not usable; use NewSet.
type Set struct {
	// mu guards faults; it is never held while a fault sleeps.
	mu     sync.Mutex
	faults map[faultKey]*Fault
	// members, if set (SetMembers, before serving), can be stopped and
	// restarted through the HTTP API.
	members Members
}

// NewSet returns an empty Set.
func NewSet() *Set { return &Set{faults: map[faultKey]*Fault{}} }

var _ registry.FaultHook = (*Set)(nil)

// Add adds f, replacing the fault with the same point and resource.
func (s *Set) Add(f Fault) error {
	if err := f.Validate(); err != nil {
		return err
	}
	f.Hits = 0
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[faultKey{f.Point, f.Resource}] = &f
	return nil
}

// Clear removes the faults of point, or every fault when point is "", and
// returns how many it removed.
func (s *Set) Clear(point Point) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.faults {
		if point == "" || k.point == point {
			delete(s.faults, k)
			n++
		}
	}
	return n
}

// List returns the active faults, sorted by point and resource.
func (s *Set) List() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fault, 0, len(s.faults))
	for _, f := range s.faults {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Point != out[j].Point {
			return out[i].Point < out[j].Point
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

// hit finds the fault for a request at point on resource and counts it.
func (s *Set) hit(point Point, resource string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.faults[faultKey{point, resource}]
	if !ok {
		f, ok = s.faults[faultKey{point, ""}]
	}
	if !ok {
		return Fault{}, false
	}
	f.Hits++
	return *f, true
}

// apply runs the fault for a request at point, if there is one: it waits
// out the delay (or the request's deadline) and returns the fault's error.
func (s *Set) apply(ctx context.Context, point Point, resource string) error {
	f, ok := s.hit(point, resource)
	if !ok {
		return nil
	}
	if f.Delay > 0 {
		timer := time.NewTimer(time.Duration(f.Delay))
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return f.err()
}

// BeforeEtcd implements registry.FaultHook.
func (s *Set) BeforeEtcd(ctx context.Context, op registry.EtcdOp, resource string) error {
	return s.apply(ctx, Point("etcd."+string(op)), resource)
}
