package apiserver

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"minicp/crd"
	"minicp/registry"
)

// sharedListCases are lists whose shared encoding must equal the typed
// list's: empty, one object, and objects whose fields need escaping, maps
// (whose keys both encoders must sort), and unicode.
func sharedListCases() map[string]struct {
	res  *registry.Resource
	objs []runtime.Object
} {
	pod := func(name string) runtime.Object {
		p := testPod(name)
		p.Namespace, p.UID, p.ResourceVersion = "default", types.UID("uid-"+name), "17"
		p.Labels = map[string]string{"z": "1", "a": "2", "app": "web"}
		p.Annotations = map[string]string{"note": `<b>"quoted" & ünïcode</b>`}
		p.Spec.NodeName = "node-1"
		p.Status.Phase = corev1.PodRunning
		return p
	}
	holder, seconds := "node-1", int32(40)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "kube-node-lease", ResourceVersion: "9"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds},
	}
	var many []runtime.Object
	for i := range 50 {
		many = append(many, pod(fmt.Sprintf("pod-%02d", i)))
	}
	gizmos := gizmosResource()
	gizmo := func(name string) runtime.Object {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Gizmo",
			"metadata": map[string]any{
				"name": name, "namespace": "default", "uid": "uid-" + name, "resourceVersion": "17",
				"labels":      map[string]any{"z": "1", "a": "2"},
				"annotations": map[string]any{"note": `<b>"items":[] & ünïcode</b>`},
			},
			"spec": map[string]any{"size": int64(3), "colors": []any{"red", "blue"}, "nested": map[string]any{"b": true, "a": 1.5}},
		}}
		return u
	}
	var gizmoList []runtime.Object
	for i := range 20 {
		gizmoList = append(gizmoList, gizmo(fmt.Sprintf("gizmo-%02d", i)))
	}
	pods := mustLookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	leases := mustLookup(schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"})
	return map[string]struct {
		res  *registry.Resource
		objs []runtime.Object
	}{
		"empty":  {pods, nil},
		"one":    {pods, []runtime.Object{pod("a")}},
		"many":   {pods, many},
		"leases": {leases, []runtime.Object{lease}},
		// Custom resources: an UnstructuredList, written as a map.
		"custom-empty": {gizmos, nil},
		"custom-many":  {gizmos, gizmoList},
	}
}

// gizmosResource is a custom resource's descriptor, as the CRD controller
// builds it.
func gizmosResource() *registry.Resource {
	preserve := true
	def := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
	res, err := crd.ResourceFor(def, "v1")
	if err != nil {
		panic(err)
	}
	return res
}

func mustLookup(gvr schema.GroupVersionResource) *registry.Resource {
	res, ok := testResources.Lookup(gvr)
	if !ok {
		panic("no resource " + gvr.String())
	}
	return res
}

// TestSharedListEncodesAsTheTypedList checks that a list written around its
// items' encodings has exactly the bytes of the typed list encoded whole,
// in JSON and protobuf, and that a second encoding reuses the items' bytes.
func TestSharedListEncodesAsTheTypedList(t *testing.T) {
	for name, tc := range sharedListCases() {
		for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
			if tc.res.TextOnly && mediaType == runtime.ContentTypeProtobuf {
				continue // served as JSON only
			}
			t.Run(name+"/"+mediaType, func(t *testing.T) {
				const rv = 42
				typed := tc.res.NewList()
				if err := meta.SetList(typed, tc.objs); err != nil {
					t.Fatal(err)
				}
				if err := registry.StampList(typed, rv); err != nil {
					t.Fatal(err)
				}
				var want bytes.Buffer
				info := mediaTypeInfo(mediaType)
				if err := encoderFor(info.Serializer, tc.res.GroupVersion, typed).Encode(typed, &want); err != nil {
					t.Fatal(err)
				}

				shared := &registry.SharedList{ResourceVersion: rv}
				var encodings int
				for _, obj := range tc.objs {
					shared.Items = append(shared.Items, &memoObject{obj: obj, encodings: &encodings})
				}
				for round := range 2 { // the second round uses the items' kept bytes
					var got bytes.Buffer
					var err error
					if mediaType == runtime.ContentTypeProtobuf {
						err = encodeSharedListProtobuf(&got, tc.res, shared)
					} else {
						err = encodeSharedListJSON(&got, tc.res, shared)
					}
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got.Bytes(), want.Bytes()) {
						t.Fatalf("round %d: shared encoding differs from the typed list's\n got: %q\nwant: %q", round, got.Bytes(), want.Bytes())
					}
					if encodings != len(tc.objs) {
						t.Fatalf("round %d: %d item encodings for %d items, want one each", round, encodings, len(tc.objs))
					}
				}
			})
		}
	}
}

// memoObject is a runtime.CacheableObject as the watch cache's: it
// encodes once per identifier, counting in encodings, and writes the kept
// bytes in one Write.
type memoObject struct {
	obj       runtime.Object
	encodings *int
	kept      map[runtime.Identifier][]byte
}

func (m *memoObject) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	raw, ok := m.kept[id]
	if !ok {
		var buf bytes.Buffer
		if err := encode(m.obj, &buf); err != nil {
			return err
		}
		*m.encodings++
		raw = buf.Bytes()
		if m.kept == nil {
			m.kept = map[runtime.Identifier][]byte{}
		}
		m.kept[id] = raw
	}
	_, err := w.Write(raw)
	return err
}

func (m *memoObject) GetObject() runtime.Object        { return m.obj.DeepCopyObject() }
func (m *memoObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (m *memoObject) DeepCopyObject() runtime.Object {
	return &memoObject{obj: m.obj.DeepCopyObject(), encodings: m.encodings}
}

// encodeSharedListJSON and encodeSharedListProtobuf write the whole list to
// w, as writeSharedList does after its headers.
func encodeSharedListJSON(w io.Writer, res *registry.Resource, list *registry.SharedList) error {
	body, err := sharedListJSON(res, list)
	if err == nil {
		_, err = body.writeTo(w)
	}
	return err
}

func encodeSharedListProtobuf(w io.Writer, res *registry.Resource, list *registry.SharedList) error {
	body, err := sharedListProtobuf(res, list)
	if err == nil {
		_, err = body.writeTo(w)
	}
	return err
}
