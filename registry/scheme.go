package registry

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"minicp/apigroups"
)

// Scheme knows every type minicp serves (the group versions of
// package apigroups), plus the meta.k8s.io types the
// HTTP layer needs (Status, WatchEvent, Table, PartialObjectMetadata, options).
var Scheme = runtime.NewScheme()

// Codecs encodes and decodes JSON, YAML and protobuf for Scheme's types.
var Codecs = serializer.NewCodecFactory(Scheme)

// ParameterCodec decodes query parameters into metav1 option structs.
var ParameterCodec = runtime.NewParameterCodec(Scheme)

func init() {
	for _, gv := range apigroups.All {
		utilruntime.Must(gv.AddToScheme(Scheme))
	}
	utilruntime.Must(metav1.AddMetaToScheme(Scheme))
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
}
