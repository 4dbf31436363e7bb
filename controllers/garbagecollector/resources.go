package garbagecollector

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// resources is what discovery says about the served resources: the ones
// the collector watches, and how to reach an owner named by apiVersion and
// kind (what an ownerReference holds).
type resources struct {
	// watched are the resources that can be listed, watched and deleted:
	// the ones whose objects can be owners or dependents.
	watched []schema.GroupVersionResource
	// byKind maps a group-version-kind to its resource and scope.
	byKind map[schema.GroupVersionKind]kindInfo
}

type kindInfo struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// discover reads discovery's preferred version of every resource, as
// upstream's collector does: it watches every deletable resource but the
// ignored ones (Config.IgnoredResources).
func discover(d discovery.DiscoveryInterface, ignored map[schema.GroupResource]bool) (*resources, error) {
	lists, err := discovery.ServerPreferredResources(d)
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovering resources: %w", err)
	}
	out := &resources{byKind: map[schema.GroupVersionKind]kindInfo{}}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // subresources
			}
			gvr := gv.WithResource(r.Name)
			out.byKind[gv.WithKind(r.Kind)] = kindInfo{gvr: gvr, namespaced: r.Namespaced}
			if slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch") && slices.Contains(r.Verbs, "delete") &&
				!ignored[gvr.GroupResource()] {
				out.watched = append(out.watched, gvr)
			}
		}
	}
	return out, err
}

// lookup finds the resource of apiVersion and kind. An ownerReference may
// name a version discovery does not prefer: any version of the group
// reaches the same objects.
func (r *resources) lookup(apiVersion, kind string) (kindInfo, bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return kindInfo{}, false
	}
	if info, ok := r.byKind[gv.WithKind(kind)]; ok {
		return info, true
	}
	for gvk, info := range r.byKind {
		if gvk.Group == gv.Group && gvk.Kind == kind {
			return info, true
		}
	}
	return kindInfo{}, false
}

// kindOf is the kind of a resource's objects, for event references; ""
// when discovery did not list it.
func (r *resources) kindOf(gvr schema.GroupVersionResource) string {
	for gvk, info := range r.byKind {
		if info.gvr == gvr {
			return gvk.Kind
		}
	}
	return ""
}
