package controlplane

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/kinds"
)

func TestControllersFlagChoosesLoopsAsUpstreamDoes(t *testing.T) {
	for _, tc := range []struct {
		list []string
		name string
		want bool
	}{
		{nil, "namespace-controller", true},
		{[]string{"*"}, "garbage-collector-controller", true},
		{[]string{"*", "-garbage-collector-controller"}, "garbage-collector-controller", false},
		{[]string{"*", "-garbage-collector-controller"}, "namespace-controller", true},
		{[]string{"namespace-controller"}, "namespace-controller", true},
		{[]string{"namespace-controller"}, "crd-controller", false},
	} {
		if got := controllerEnabled(tc.list, tc.name); got != tc.want {
			t.Errorf("controllerEnabled(%q, %s) = %v, want %v", tc.list, tc.name, got, tc.want)
		}
	}
}

func TestControllersFlagRefusesUnknownNames(t *testing.T) {
	c := NewConfig()
	fs := flag.NewFlagSet("minicp", flag.ContinueOnError)
	c.AddFlags(fs)
	if err := fs.Parse([]string{"--controllers=*,-namespace-controller"}); err != nil {
		t.Fatal(err)
	}
	if err := validateControllers(c.Controllers); err != nil {
		t.Fatalf("a valid --controllers: %v", err)
	}
	err := validateControllers([]string{"*", "-no-such", "replicaset"})
	if err == nil || !strings.Contains(err.Error(), `"-no-such"`) || !strings.Contains(err.Error(), `"replicaset"`) {
		t.Fatalf("validateControllers of unknown names = %v", err)
	}
}

func TestGarbageCollectorIgnoresWhatTheDescriptorsSay(t *testing.T) {
	got := gcIgnoredResources(kinds.NewTable())
	want := []schema.GroupResource{{Resource: "events"}, {Group: "events.k8s.io", Resource: "events"}}
	if len(got) != len(want) || !slices.Contains(got, want[0]) || !slices.Contains(got, want[1]) {
		t.Fatalf("the collector ignores %v, want the two events resources %v", got, want)
	}
}
