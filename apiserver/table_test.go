package apiserver

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/registry"
)

// tableNow is the instant every table test computes ages against.
var tableNow = time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(tableNow.Add(-d)) }

func resourceFor(t *testing.T, group, resource string) *registry.Resource {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}
	res, ok := testResources.Lookup(gvr)
	if !ok {
		t.Fatalf("no resource %v", gvr)
	}
	return res
}

// rowCells renders obj as a one-row table and returns that row's cells.
func rowCells(t *testing.T, obj runtime.Object, res *registry.Resource) []any {
	t.Helper()
	table, err := toTableAt(obj, res, metav1.TableOptions{}, tableNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(table.Rows))
	}
	if len(table.Rows[0].Cells) != len(table.ColumnDefinitions) {
		t.Errorf("got %d cells for %d columns", len(table.Rows[0].Cells), len(table.ColumnDefinitions))
	}
	return table.Rows[0].Cells
}

func columnNames(cols []metav1.TableColumnDefinition, priority int32) []string {
	var names []string
	for _, c := range cols {
		if c.Priority == priority {
			names = append(names, c.Name)
		}
	}
	return names
}

func TestTablesHaveUpstreamColumns(t *testing.T) {
	cases := []struct {
		group, resource string
		want, wide      []string
	}{
		{"", "namespaces", []string{"Name", "Status", "Age"}, nil},
		{"", "nodes", []string{"Name", "Status", "Roles", "Age", "Version"},
			[]string{"Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"}},
		{"", "pods", []string{"Name", "Ready", "Status", "Restarts", "Age"},
			[]string{"IP", "Node", "Nominated Node", "Readiness Gates"}},
		{"", "configmaps", []string{"Name", "Data", "Age"}, nil},
		{"", "events", []string{"Last Seen", "Type", "Reason", "Object", "Message"},
			[]string{"Subobject", "Source", "First Seen", "Count", "Name"}},
		{"coordination.k8s.io", "leases", []string{"Name", "Holder", "Age"}, nil},
	}
	for _, tc := range cases {
		res := resourceFor(t, tc.group, tc.resource)
		table, err := toTableAt(res.NewList(), res, metav1.TableOptions{}, tableNow)
		if err != nil {
			t.Fatal(err)
		}
		if got := columnNames(table.ColumnDefinitions, 0); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s columns: got %q, want %q", tc.resource, got, tc.want)
		}
		if got := columnNames(table.ColumnDefinitions, 1); !reflect.DeepEqual(got, tc.wide) {
			t.Errorf("%s wide columns: got %q, want %q", tc.resource, got, tc.wide)
		}
		if table.Rows == nil {
			t.Errorf("%s: empty list gives nil rows, want [] so the JSON has \"rows\": []", tc.resource)
		}
	}
}

func TestRunningPodRowShowsReadyContainersRestartsAndWideCells(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", CreationTimestamp: ago(3 * time.Hour)},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app"}, {Name: "proxy"}}},
		Status: corev1.PodStatus{
			Phase:  corev1.PodRunning,
			PodIPs: []corev1.PodIP{{IP: "10.0.0.7"}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
					RestartCount: 2, LastTerminationState: corev1.ContainerState{
						Terminated: &corev1.ContainerStateTerminated{FinishedAt: ago(5 * time.Minute)}}},
				{Name: "proxy", Ready: false, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			},
		},
	}
	got := rowCells(t, pod, resourceFor(t, "", "pods"))
	want := []any{"web-0", "1/2", "Running", "2 (5m ago)", "3h", "10.0.0.7", "node-1", "<none>", "<none>"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPodStatusColumnSummarisesContainersAsUpstream(t *testing.T) {
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
	}
	terminated := func(reason string, code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code}}
	}
	cases := []struct {
		name   string
		mutate func(*corev1.Pod)
		want   string
	}{
		{"a pending pod shows its phase", func(p *corev1.Pod) {}, "Pending"},
		{"a waiting container's reason wins over the phase", func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: waiting("ContainerCreating")}}
		}, "ContainerCreating"},
		{"a terminated container without reason shows its exit code", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: terminated("", 3)}}
		}, "ExitCode:3"},
		{"an init container in the way shows its progress", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "a"}, {Name: "b"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", State: terminated("Completed", 0)}, {Name: "b", State: waiting("PodInitializing")}}
		}, "Init:1/2"},
		{"a crashing init container shows its reason", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "a"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "a", State: waiting("CrashLoopBackOff")}}
		}, "Init:CrashLoopBackOff"},
		{"a pod being deleted is Terminating", func(p *corev1.Pod) {
			now := metav1.NewTime(tableNow)
			p.DeletionTimestamp = &now
			p.Status.Phase = corev1.PodRunning
		}, "Terminating"},
		{"a pod evicted with a reason shows the reason", func(p *corev1.Pod) {
			p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
		}, "Evicted"},
	}
	res := resourceFor(t, "", "pods")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: ago(time.Minute)},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
				Status:     corev1.PodStatus{Phase: corev1.PodPending},
			}
			tc.mutate(pod)
			if got := rowCells(t, pod, res)[2]; got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNodeRowShowsReadinessRolesAndSystemInfo(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", CreationTimestamp: ago(49 * time.Hour), Labels: map[string]string{
			"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/worker": "", "kubernetes.io/hostname": "node-1",
		}},
		Spec: corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown"}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "node-1"}, {Type: corev1.NodeInternalIP, Address: "192.168.0.11"}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.33.0-minicp", OSImage: "minicp simulated node"},
		},
	}
	got := rowCells(t, node, resourceFor(t, "", "nodes"))
	want := []any{"node-1", "NotReady,SchedulingDisabled", "control-plane,worker", "2d1h", "v1.33.0-minicp",
		"192.168.0.11", "<none>", "minicp simulated node", "<unknown>", "<unknown>"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}

	bare := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "new", CreationTimestamp: ago(10 * time.Second)}}
	if got := rowCells(t, bare, resourceFor(t, "", "nodes"))[1:3]; !reflect.DeepEqual(got, []any{"Unknown", "<none>"}) {
		t.Errorf("node without conditions or roles: got %q, want [Unknown <none>]", got)
	}
}

func TestEventRowShowsLastSeenObjectAndMessage(t *testing.T) {
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "node-1.17f3a", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "node-1"},
		Reason:         "NodeNotReady",
		Message:        "Node node-1 status is now: NodeNotReady\n",
		Type:           corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "node-controller"},
		FirstTimestamp: ago(10 * time.Minute),
		LastTimestamp:  ago(90 * time.Second),
		Count:          4,
	}
	got := rowCells(t, ev, resourceFor(t, "", "events"))
	want := []any{"90s", "Normal", "NodeNotReady", "node/node-1", "", "node-controller",
		"Node node-1 status is now: NodeNotReady", "10m", int64(4), "node-1.17f3a"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSmallKindsRowsMatchUpstream(t *testing.T) {
	holder := "node-1"
	cases := []struct {
		resource, group string
		obj             runtime.Object
		want            []any
	}{
		{"namespaces", "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", CreationTimestamp: ago(72 * time.Hour)},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}, []any{"kube-system", "Active", "3d"}},
		{"configmaps", "", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", CreationTimestamp: ago(30 * time.Second)},
			Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": nil}}, []any{"cfg", int64(3), "30s"}},
		{"leases", "coordination.k8s.io", &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-1", CreationTimestamp: ago(time.Hour)},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}, []any{"node-1", "node-1", "60m"}},
		{"leases", "coordination.k8s.io", &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "free"}},
			[]any{"free", "", "<unknown>"}},
	}
	for _, tc := range cases {
		if got := rowCells(t, tc.obj, resourceFor(t, tc.group, tc.resource)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.resource, got, tc.want)
		}
	}
}

func TestListTableKeepsListMetaAndRowOrder(t *testing.T) {
	remaining := int64(5)
	list := &corev1.ConfigMapList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "token", RemainingItemCount: &remaining},
		Items:    []corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b"}}},
	}
	table, err := toTableAt(list, resourceFor(t, "", "configmaps"), metav1.TableOptions{}, tableNow)
	if err != nil {
		t.Fatal(err)
	}
	if table.ResourceVersion != "42" || table.Continue != "token" || table.RemainingItemCount == nil || *table.RemainingItemCount != 5 {
		t.Errorf("list meta: got %+v, want resourceVersion 42, continue token, remaining 5", table.ListMeta)
	}
	if len(table.Rows) != 2 || table.Rows[0].Cells[0] != "a" || table.Rows[1].Cells[0] != "b" {
		t.Errorf("rows: got %v, want a then b", table.Rows)
	}
	if table.APIVersion != "meta.k8s.io/v1" || table.Kind != "Table" {
		t.Errorf("type: got %s %s, want meta.k8s.io/v1 Table", table.APIVersion, table.Kind)
	}
}

func TestRowObjectFollowsIncludeObject(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "p", Namespace: "ns", ResourceVersion: "7", Labels: map[string]string{"app": "web"},
	}, Spec: corev1.PodSpec{NodeName: "node-1"}}
	res := resourceFor(t, "", "pods")
	cases := []struct {
		include  metav1.IncludeObjectPolicy
		wantJSON map[string]any
	}{
		{"", map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "hasSpec": false}},
		{metav1.IncludeMetadata, map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "hasSpec": false}},
		{metav1.IncludeObject, map[string]any{"kind": "Pod", "apiVersion": "v1", "hasSpec": true}},
	}
	for _, tc := range cases {
		table, err := toTableAt(pod, res, metav1.TableOptions{IncludeObject: tc.include}, tableNow)
		if err != nil {
			t.Fatal(err)
		}
		if table.ResourceVersion != "7" {
			t.Errorf("%q: table resourceVersion %q, want the object's 7", tc.include, table.ResourceVersion)
		}
		raw, err := json.Marshal(table.Rows[0].Object)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		md, _ := got["metadata"].(map[string]any)
		_, hasSpec := got["spec"]
		if got["kind"] != tc.wantJSON["kind"] || got["apiVersion"] != tc.wantJSON["apiVersion"] || hasSpec != tc.wantJSON["hasSpec"] ||
			md["namespace"] != "ns" || md["labels"] == nil {
			t.Errorf("%q: row object %s, want %v with namespace and labels", tc.include, raw, tc.wantJSON)
		}
	}
	if pod.Kind != "" {
		t.Errorf("IncludeObject set the kind on the caller's object: %q", pod.Kind)
	}
	table, err := toTableAt(pod, res, metav1.TableOptions{IncludeObject: metav1.IncludeNone, NoHeaders: true}, tableNow)
	if err != nil {
		t.Fatal(err)
	}
	if table.Rows[0].Object.Object != nil || table.ColumnDefinitions != nil {
		t.Errorf("None and noHeaders: got object %v and columns %v, want neither", table.Rows[0].Object.Object, table.ColumnDefinitions)
	}
}

func TestTableEncodesThroughTheSchemeCodec(t *testing.T) {
	res := resourceFor(t, "", "pods")
	table, err := toTableAt(&corev1.PodList{Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "p"}}}}, res, metav1.TableOptions{}, tableNow)
	if err != nil {
		t.Fatal(err)
	}
	info, ok := runtime.SerializerInfoForMediaType(registry.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		t.Fatal("no JSON serializer")
	}
	data, err := runtime.Encode(registry.Codecs.EncoderForVersion(info.Serializer, metaV1), table)
	if err != nil {
		t.Fatal(err)
	}
	var decoded metav1.Table
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded.Rows) != 1 || decoded.Rows[0].Cells[0] != "p" || len(decoded.Rows[0].Object.Raw) == 0 {
		t.Errorf("decoded %s, want one row p with its metadata", data)
	}
}
