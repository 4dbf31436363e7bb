package crd

// How custom resources are kept in etcd: as JSON, at the CRD's storage
// version, as upstream stores them. A request at another served version
// reads and writes the same bytes: with the None conversion strategy only
// apiVersion changes on the way in and out; with Webhook, minicp (which
// calls no webhooks) refuses any request whose object would need
// converting, with a Status that says so.

import (
	"fmt"
	"io"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// codec is the storage codec of one served version of a custom resource.
type codec struct {
	served   schema.GroupVersionKind // what the request's objects are
	storage  string                  // the storage version in etcd
	strategy apiextensionsv1.ConversionStrategyType
	// schema, when set, shapes every object read by the current schema of
	// the served version (Version.FromStorage): pruned and defaulted.
	schema *Version
}

var _ runtime.Codec = codec{}

func newCodec(served schema.GroupVersionKind, storage string, strategy apiextensionsv1.ConversionStrategyType) codec {
	return codec{served: served, storage: storage, strategy: strategy}
}

// Encode writes obj as JSON with the storage version's apiVersion.
func (c codec) Encode(obj runtime.Object, w io.Writer) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("crd: encoding a %T, want *unstructured.Unstructured", obj)
	}
	if err := c.convertible(c.served.Version, c.storage); err != nil {
		return err
	}
	stored := &unstructured.Unstructured{Object: make(map[string]any, len(u.Object))}
	for k, v := range u.Object {
		stored.Object[k] = v
	}
	stored.SetAPIVersion(schema.GroupVersion{Group: c.served.Group, Version: c.storage}.String())
	stored.SetKind(c.served.Kind)
	return unstructured.UnstructuredJSONScheme.Encode(stored, w)
}

// Decode reads stored JSON into an Unstructured of the served version.
func (c codec) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	u, ok := into.(*unstructured.Unstructured)
	if !ok || u == nil {
		u = &unstructured.Unstructured{}
	}
	obj, gvk, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, u)
	if err != nil {
		return nil, gvk, err
	}
	if gvk != nil && gvk.Version != c.served.Version {
		if err := c.convertible(gvk.Version, c.served.Version); err != nil {
			return nil, gvk, err
		}
	}
	u.SetGroupVersionKind(c.served)
	if c.schema != nil {
		if err := c.schema.FromStorage(u); err != nil {
			return nil, &c.served, fmt.Errorf("crd: reading a stored %s: %w", c.served.Kind, err)
		}
	}
	return obj, &c.served, nil
}

func (c codec) Identifier() runtime.Identifier {
	return runtime.Identifier("crd-json:" + c.served.String() + ":" + c.storage)
}

// convertible says whether an object can go from version from to version
// to: always with the None strategy (only apiVersion changes), never
// between two versions with Webhook.
func (c codec) convertible(from, to string) error {
	if from == to || c.strategy != apiextensionsv1.WebhookConverter {
		return nil
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure,
		Code:   http.StatusInternalServerError,
		Reason: metav1.StatusReasonInternalError,
		Message: fmt.Sprintf("conversion webhook for %s failed: minicp calls no conversion webhooks, so it cannot convert %s objects from %s to %s; "+
			"use version %s (the storage version), or set spec.conversion.strategy to None if apiVersion is all that differs",
			c.served.GroupKind(), c.served.Kind, from, to, c.storage),
	}}
}
