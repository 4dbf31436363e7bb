// Package kubeversion derives the Kubernetes version minicp reports from
// the k8s.io modules it is built with: k8s.io/api v0.N.P carries the types
// of Kubernetes v1.N.P, so /version (and kubectl version) and the
// simulated kubelets say v1.N.P. The version is read from the binary's
// build information (runtime/debug.ReadBuildInfo), so a dependency bump
// changes it with no constant to edit.
//
// A test binary records no dependencies in its build information. There
// the version comes from the go.mod of the module under test, found from
// the working directory up (go test runs a test in its package's
// directory), whose require list names the k8s.io/api version the test
// binary was built with.
//
// Invariant: Get never fails; a binary with neither source reports
// Fallback.
package kubeversion

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// typesModule is the module whose version names the Kubernetes release of
// the API types minicp serves.
const typesModule = "k8s.io/api"

// Fallback is reported when the build information is missing.
var Fallback = Version{Major: "1", Minor: "0", GitVersion: "v1.0.0-unknown"}

// Version is a Kubernetes version as /version splits it.
type Version struct {
	Major, Minor string
	// GitVersion is "v1.N.P", as kube-apiserver and kubelet report it.
	GitVersion string
}

var (
	once   sync.Once
	cached Version // set once by Get
)

// Get returns the Kubernetes version of the k8s.io/api module in this
// binary's build information.
func Get() Version {
	once.Do(func() {
		cached = Fallback
		if build, ok := debug.ReadBuildInfo(); ok {
			if v, ok := fromBuild(build); ok {
				cached = v
				return
			}
		}
		if dir, err := os.Getwd(); err == nil {
			if v, ok := fromGoMod(dir); ok {
				cached = v
			}
		}
	})
	return cached
}

// fromBuild finds k8s.io/api among the dependencies (following a replace)
// and maps v0.N.P to v1.N.P.
func fromBuild(build *debug.BuildInfo) (Version, bool) {
	for _, dep := range build.Deps {
		if dep.Path != typesModule {
			continue
		}
		if dep.Replace != nil && dep.Replace.Version != "" {
			dep = dep.Replace
		}
		return FromModuleVersion(dep.Version)
	}
	return Version{}, false
}

// fromGoMod reads the k8s.io/api requirement of the first go.mod found in
// dir or above it.
func fromGoMod(dir string) (Version, bool) {
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			return requiredVersion(string(data))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return Version{}, false
		}
		dir = parent
	}
}

// requiredVersion finds "k8s.io/api vX" in a go.mod's require lines, in a
// block or on their own.
func requiredVersion(gomod string) (Version, bool) {
	for _, line := range strings.Split(gomod, "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && fields[0] == typesModule {
			return FromModuleVersion(fields[1])
		}
	}
	return Version{}, false
}

// FromModuleVersion maps a k8s.io module version ("v0.37.2") to the
// Kubernetes release it belongs to ("v1.37.2"); a pre-release keeps its
// suffix ("v0.38.0-alpha.1" -> "v1.38.0-alpha.1"). ok is false for
// anything else.
func FromModuleVersion(v string) (_ Version, ok bool) {
	rest, found := strings.CutPrefix(v, "v0.")
	minor, patch, dotted := strings.Cut(rest, ".")
	patchNumber, _, _ := strings.Cut(patch, "-") // "2" of "2-alpha.1"
	if !found || !dotted || !isNumber(minor) || !isNumber(patchNumber) {
		return Version{}, false
	}
	return Version{Major: "1", Minor: minor, GitVersion: "v1." + rest}, true
}

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}
