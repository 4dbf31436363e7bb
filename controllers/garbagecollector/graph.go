package garbagecollector

import (
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// node is one object the collector has seen, by its metadata only.
type node struct {
	gvr        schema.GroupVersionResource
	namespace  string
	name       string
	uid        types.UID
	owners     []metav1.OwnerReference
	finalizers []string
	deleting   bool // metadata.deletionTimestamp is set
}

func (n *node) hasFinalizer(f string) bool { return slices.Contains(n.finalizers, f) }

// dependent is one of an owner's dependents: the node and the reference it
// holds to the owner.
type dependent struct {
	node
	ref metav1.OwnerReference
}

// graph is the owner -> dependents graph built from the informers' events.
// Owners are indexed by UID, as ownerReferences name them: an owner need
// not be in nodes (it may be gone, or never have existed).
type graph struct {
	// mu guards nodes and dependentsOf; it is held only while the maps
	// are read or changed, never across an API request.
	mu    sync.Mutex
	nodes map[types.UID]*node
	// dependentsOf holds, for each owner UID, the UIDs of the nodes whose
	// ownerReferences name it.
	dependentsOf map[types.UID]map[types.UID]bool
}

func newGraph() *graph {
	return &graph{nodes: map[types.UID]*node{}, dependentsOf: map[types.UID]map[types.UID]bool{}}
}

// observe records obj's current metadata and returns the UIDs the
// collector must look at because of the change: obj itself when one of
// its owners is not in the graph, is being deleted or lives in another
// namespace, or when obj is being
// deleted with one of the collector's finalizers; and the owners obj
// stopped naming that are being deleted (a foreground owner may be done).
func (g *graph) observe(gvr schema.GroupVersionResource, obj *metav1.PartialObjectMetadata) []types.UID {
	n := &node{
		gvr: gvr, namespace: obj.Namespace, name: obj.Name, uid: obj.UID,
		owners: obj.OwnerReferences, finalizers: obj.Finalizers, deleting: obj.DeletionTimestamp != nil,
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var work []types.UID
	if old := g.nodes[n.uid]; old != nil {
		for _, ref := range old.owners {
			if !namesOwner(n.owners, ref.UID) {
				g.unlink(ref.UID, n.uid)
				if owner := g.nodes[ref.UID]; owner != nil && owner.deleting {
					work = append(work, owner.uid)
				}
			}
		}
	}
	g.nodes[n.uid] = n
	check := n.deleting && (n.hasFinalizer(metav1.FinalizerOrphanDependents) || n.hasFinalizer(metav1.FinalizerDeleteDependents))
	for _, ref := range n.owners {
		g.link(ref.UID, n.uid)
		// An owner in another namespace cannot own n: looked at, it is
		// reported (OwnerRefInvalidNamespace) and treated as upstream does.
		if owner := g.nodes[ref.UID]; owner == nil || owner.deleting || (owner.namespace != "" && owner.namespace != n.namespace) {
			check = true
		}
	}
	if check {
		work = append(work, n.uid)
	}
	return work
}

// forget removes a deleted object and returns the UIDs to look at: its
// dependents (their owner is gone) and its owners that are being deleted
// (a foreground owner waits for its dependents to go).
func (g *graph) forget(uid types.UID) []types.UID {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.nodes[uid]
	if n == nil {
		return nil
	}
	delete(g.nodes, uid)
	var work []types.UID
	for dep := range g.dependentsOf[uid] {
		work = append(work, dep)
	}
	for _, ref := range n.owners {
		g.unlink(ref.UID, uid)
		if owner := g.nodes[ref.UID]; owner != nil && owner.deleting {
			work = append(work, owner.uid)
		}
	}
	return work
}

// get returns a copy of the node with uid, or nil.
func (g *graph) get(uid types.UID) *node {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.nodes[uid]
	if n == nil {
		return nil
	}
	c := *n
	return &c
}

// dependents returns copies of the nodes that name owner, with the
// reference each holds.
func (g *graph) dependents(owner types.UID) []dependent {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []dependent
	for uid := range g.dependentsOf[owner] {
		n := g.nodes[uid]
		if n == nil {
			continue
		}
		for _, ref := range n.owners {
			if ref.UID == owner {
				out = append(out, dependent{node: *n, ref: ref})
				break
			}
		}
	}
	return out
}

// size returns how many objects the graph holds.
func (g *graph) size() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.nodes)
}

func (g *graph) link(owner, dep types.UID) {
	if g.dependentsOf[owner] == nil {
		g.dependentsOf[owner] = map[types.UID]bool{}
	}
	g.dependentsOf[owner][dep] = true
}

func (g *graph) unlink(owner, dep types.UID) {
	delete(g.dependentsOf[owner], dep)
	if len(g.dependentsOf[owner]) == 0 {
		delete(g.dependentsOf, owner)
	}
}

func namesOwner(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}
