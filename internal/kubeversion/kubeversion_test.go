package kubeversion

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestFromModuleVersionMapsV0ToV1(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" = not a k8s.io module version
	}{
		{"v0.37.2", "v1.37.2"},
		{"v0.33.0", "v1.33.0"},
		{"v0.38.0-alpha.1", "v1.38.0-alpha.1"},
		{"v1.2.3", ""},
		{"v0.37", ""},
		{"v0.x.1", ""},
		{"(devel)", ""},
		{"", ""},
	} {
		got, ok := FromModuleVersion(tc.in)
		if tc.want == "" {
			if ok {
				t.Errorf("%q: got %+v, want not ok", tc.in, got)
			}
			continue
		}
		if !ok || got.GitVersion != tc.want || got.Major != "1" {
			t.Errorf("%q: got %+v %v, want %s", tc.in, got, ok, tc.want)
		}
	}
}

func TestFromBuildFollowsAReplace(t *testing.T) {
	build := &debug.BuildInfo{Deps: []*debug.Module{
		{Path: "k8s.io/apimachinery", Version: "v0.37.2"},
		{Path: "k8s.io/api", Version: "v0.37.2", Replace: &debug.Module{Path: "k8s.io/api", Version: "v0.38.1"}},
	}}
	if got, ok := fromBuild(build); !ok || got.GitVersion != "v1.38.1" || got.Minor != "38" {
		t.Errorf("got %+v %v, want v1.38.1, minor 38", got, ok)
	}
	if _, ok := fromBuild(&debug.BuildInfo{}); ok {
		t.Error("a build without k8s.io/api: got ok, want not ok")
	}
}

func TestFromGoModReadsTheRequirementOfTheNearestModule(t *testing.T) {
	root := t.TempDir()
	gomod := "module example\n\ngo 1.26\n\nrequire (\n\tk8s.io/apimachinery v0.37.2\n\tk8s.io/api v0.37.2 // indirect\n)\n"
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte(gomod), 0o600); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(pkg, 0o700); err != nil {
		t.Fatal(err)
	}
	if got, ok := fromGoMod(pkg); !ok || got.GitVersion != "v1.37.2" {
		t.Errorf("from %s: got %+v %v, want v1.37.2", pkg, got, ok)
	}
	if got, ok := requiredVersion("module x\nrequire k8s.io/api v0.36.1\n"); !ok || got.GitVersion != "v1.36.1" {
		t.Errorf("a one-line require: got %+v %v, want v1.36.1", got, ok)
	}
	if _, ok := requiredVersion("module x\nrequire k8s.io/apimachinery v0.36.1\n"); ok {
		t.Error("a go.mod without k8s.io/api: got ok, want not ok")
	}
}
