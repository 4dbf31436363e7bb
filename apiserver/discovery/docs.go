package discovery

import (
	"crypto/sha256"
	"encoding/base64"
	"runtime"
	"runtime/debug"
	"slices"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"minicp/internal/kubeversion"
	"minicp/registry"
)

// This file builds the discovery documents from the resource table; the
// handler in discovery.go only chooses which one to send.

// Group is one API group with its versions, in table order.
type Group struct {
	Name     string
	Versions []Version
}

// Version is one group-version with its resources, in table order.
type Version struct {
	GroupVersion schema.GroupVersion
	Resources    []*registry.Resource
}

func (g Group) versionNames() []string {
	names := make([]string, len(g.Versions))
	for i, v := range g.Versions {
		names[i] = v.GroupVersion.Version
	}
	return names
}

// ByGroup arranges resources by group and version, keeping the order in
// which the table first mentions each group and resource: discovery output
// is stable. A group's versions are in upstream's priority order (v2, v1,
// v1beta1, ...; see sortVersions), so that the first, the preferred one,
// is the same whichever of a group's CRDs was established first.
func ByGroup(resources []*registry.Resource) []Group {
	var groups []Group
	for _, r := range resources {
		gi := -1
		for i := range groups {
			if groups[i].Name == r.GroupVersion.Group {
				gi = i
			}
		}
		if gi < 0 {
			groups = append(groups, Group{Name: r.GroupVersion.Group})
			gi = len(groups) - 1
		}
		g := &groups[gi]
		vi := -1
		for i := range g.Versions {
			if g.Versions[i].GroupVersion == r.GroupVersion {
				vi = i
			}
		}
		if vi < 0 {
			g.Versions = append(g.Versions, Version{GroupVersion: r.GroupVersion})
			vi = len(g.Versions) - 1
		}
		g.Versions[vi].Resources = append(g.Versions[vi].Resources, r)
	}
	for _, g := range groups {
		sortVersions(g.Versions)
	}
	return groups
}

// sortVersions orders a group's versions by Kubernetes version priority,
// highest first, as upstream's discovery does (GA by number, then betas,
// then alphas, then anything else by name).
func sortVersions(versions []Version) {
	slices.SortStableFunc(versions, func(a, b Version) int {
		return -version.CompareKubeAwareVersionStrings(a.GroupVersion.Version, b.GroupVersion.Version)
	})
}

// apiVersions is the legacy /api document. serverAddress is where the
// client reached us (the request's Host), as upstream reports its
// advertised address.
func apiVersions(versions []string, serverAddress string) *metav1.APIVersions {
	return &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: versions,
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: serverAddress},
		},
	}
}

// apiGroup is the legacy /apis/<group> document (and one entry of /apis).
func apiGroup(name string, versions []string) metav1.APIGroup {
	g := metav1.APIGroup{Name: name}
	for _, v := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{
			GroupVersion: schema.GroupVersion{Group: name, Version: v}.String(), Version: v,
		})
	}
	if len(g.Versions) > 0 {
		g.PreferredVersion = g.Versions[0]
	}
	return g
}

// apiResourceList is the legacy /api/v1 or /apis/<group>/<version>
// document: one entry per resource and one per subresource ("pods/status").
func apiResourceList(gv schema.GroupVersion, resources []*registry.Resource) *metav1.APIResourceList {
	list := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(),
	}
	for _, r := range resources {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name:               r.Name,
			SingularName:       r.SingularName,
			Namespaced:         r.Namespaced,
			Kind:               r.Kind,
			Verbs:              resourceVerbs(r),
			ShortNames:         r.ShortNames,
			Categories:         r.Categories,
			StorageVersionHash: storageVersionHash(r.GroupVersionKind()),
		})
		for _, sub := range r.Subresources {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name:       r.Name + "/" + sub,
				Namespaced: r.Namespaced,
				Kind:       r.Kind,
				Verbs:      SubresourceVerbs(sub),
			})
		}
	}
	return list
}

// aggregatedVersion is one version of an aggregated discovery group.
func aggregatedVersion(version string, resources []*registry.Resource) apidiscoveryv2.APIVersionDiscovery {
	v := apidiscoveryv2.APIVersionDiscovery{Version: version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	for _, r := range resources {
		kind := metav1.GroupVersionKind(r.GroupVersionKind())
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		res := apidiscoveryv2.APIResourceDiscovery{
			Resource:         r.Name,
			ResponseKind:     &kind,
			Scope:            scope,
			SingularResource: r.SingularName,
			Verbs:            resourceVerbs(r),
			ShortNames:       r.ShortNames,
			Categories:       r.Categories,
		}
		for _, sub := range r.Subresources {
			res.Subresources = append(res.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource: sub, ResponseKind: &kind, Verbs: SubresourceVerbs(sub),
			})
		}
		v.Resources = append(v.Resources, res)
	}
	return v
}

// storageVersionHash is upstream's opaque hash of the version a resource is
// stored in (here always the served one): the first 8 bytes of
// sha256("group/version/kind"), base64. Storage-migration tools compare it.
func storageVersionHash(gvk schema.GroupVersionKind) string {
	sum := sha256.Sum256([]byte(gvk.Group + "/" + gvk.Version + "/" + gvk.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// serverVersion is the /version document. The Kubernetes version is the
// release of the k8s.io/api module minicp is built with (k8s.io/api
// v0.37.2: v1.37.2), whose types it serves; the commit and date come from
// the Go build information when the binary was built from a checkout.
func serverVersion() *version.Info {
	kube := kubeversion.Get()
	info := &version.Info{
		Major: kube.Major, Minor: kube.Minor,
		EmulationMajor: kube.Major, EmulationMinor: kube.Minor,
		GitVersion:   kube.GitVersion,
		GitTreeState: "clean",
		BuildDate:    "1970-01-01T00:00:00Z",
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     runtime.GOOS + "/" + runtime.GOARCH,
	}
	build, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	for _, s := range build.Settings {
		switch s.Key {
		case "vcs.revision":
			info.GitCommit = s.Value
		case "vcs.time":
			info.BuildDate = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				info.GitTreeState = "dirty"
			}
		}
	}
	return info
}
