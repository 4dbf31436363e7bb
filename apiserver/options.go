package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	listvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minicp/registry"
)

// optionsGroupVersion is the version query parameters are read in; every
// group registers the metav1 option types under its own version, and
// minicp's Scheme registers them under "v1".
var optionsGroupVersion = schema.GroupVersion{Version: "v1"}

// decodeQuery reads req's query parameters into one of the metav1 option
// structs; a value that does not parse is 400 BadRequest.
func decodeQuery(req *http.Request, into runtime.Object) error {
	if err := registry.ParameterCodec.DecodeParameters(req.URL.Query(), optionsGroupVersion, into); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the query parameters could not be parsed: %v", err))
	}
	return nil
}

// invalidOptions is upstream's 422 for options that parse but are not
// allowed, e.g. dryRun=Some or fieldValidation=Loose.
func invalidOptions(kind string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

func getOptions(req *http.Request) (registry.GetOptions, error) {
	var opts metav1.GetOptions
	if err := decodeQuery(req, &opts); err != nil {
		return registry.GetOptions{}, err
	}
	return registry.GetOptions{ResourceVersion: opts.ResourceVersion}, nil
}

// listOptions reads the parameters of a list or watch: selectors,
// resourceVersion and its match rule, paging, and for a watch its
// timeout, bookmarks and initial events. A watch of a named object
// (/pods/nginx?watch=1) watches metadata.name=nginx, as upstream does.
func listOptions(req *http.Request, info *requestInfo) (registry.ListOptions, time.Duration, error) {
	var opts metav1.ListOptions
	if err := decodeQuery(req, &opts); err != nil {
		return registry.ListOptions{}, 0, err
	}
	watching := info.verb == verbWatch
	labelSelector, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return registry.ListOptions{}, 0, apierrors.NewBadRequest(fmt.Sprintf("unable to parse labelSelector %q: %v", opts.LabelSelector, err))
	}
	// A term without a field ("==") would parse as "everything"; upstream
	// refuses it when it converts field labels, and so does minicp.
	fieldSelector, err := fields.ParseAndTransformSelector(opts.FieldSelector, func(field, value string) (string, string, error) {
		if field == "" {
			return "", "", fmt.Errorf("a term names no field: write field=value, e.g. metadata.name=nginx")
		}
		return field, value, nil
	})
	if err != nil {
		return registry.ListOptions{}, 0, apierrors.NewBadRequest(fmt.Sprintf("unable to parse fieldSelector %q: %v", opts.FieldSelector, err))
	}
	if info.name != "" {
		if fieldSelector, err = selectName(fieldSelector, info.name); err != nil {
			return registry.ListOptions{}, 0, err
		}
	}
	internal := internalversion.ListOptions{
		Watch:                watching,
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Continue:             opts.Continue,
		SendInitialEvents:    opts.SendInitialEvents,
	}
	if err := invalidOptions("ListOptions", listvalidation.ValidateListOptions(&internal, true)); err != nil {
		return registry.ListOptions{}, 0, err
	}
	timeout := minRequestTimeout
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds != 0 { // negative: the watch ends at once (watch.go)
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	return registry.ListOptions{
		LabelSelector:        labelSelector,
		FieldSelector:        fieldSelector,
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Limit:                opts.Limit,
		Continue:             opts.Continue,
		AllowWatchBookmarks:  opts.AllowWatchBookmarks,
		SendInitialEvents:    opts.SendInitialEvents,
	}, timeout, nil
}

// selectName narrows a watch of one named object to that name. A field
// selector may only repeat the same name.
func selectName(selector fields.Selector, name string) (fields.Selector, error) {
	if selector.Empty() {
		return fields.OneTermEqualSelector("metadata.name", name), nil
	}
	if selected, ok := selector.RequiresExactMatch("metadata.name"); !ok || selected != name {
		return nil, apierrors.NewBadRequest("fieldSelector metadata.name doesn't match requested name")
	}
	return selector, nil
}

// fieldValidation defaults an absent directive to Warn, as upstream does.
func fieldValidation(directive string) string {
	if directive == "" {
		return metav1.FieldValidationWarn
	}
	return directive
}

func createOptions(req *http.Request) (metav1.CreateOptions, error) {
	var opts metav1.CreateOptions
	if err := decodeQuery(req, &opts); err != nil {
		return opts, err
	}
	opts.FieldValidation = fieldValidation(opts.FieldValidation)
	return opts, invalidOptions("CreateOptions", metavalidation.ValidateCreateOptions(&opts))
}

func updateOptions(req *http.Request) (metav1.UpdateOptions, error) {
	var opts metav1.UpdateOptions
	if err := decodeQuery(req, &opts); err != nil {
		return opts, err
	}
	opts.FieldValidation = fieldValidation(opts.FieldValidation)
	return opts, invalidOptions("UpdateOptions", metavalidation.ValidateUpdateOptions(&opts))
}

func patchOptions(req *http.Request, patchType types.PatchType) (metav1.PatchOptions, error) {
	var opts metav1.PatchOptions
	if err := decodeQuery(req, &opts); err != nil {
		return opts, err
	}
	opts.FieldValidation = fieldValidation(opts.FieldValidation)
	return opts, invalidOptions("PatchOptions", metavalidation.ValidatePatchOptions(&opts, patchType))
}

// deleteOptions reads DeleteOptions from the body when there is one
// (client-go sends them there, with preconditions), from the query
// parameters otherwise.
func deleteOptions(req *http.Request, body []byte) (registry.DeleteOptions, error) {
	var opts metav1.DeleteOptions
	if len(bytes.TrimSpace(body)) > 0 {
		info, err := negotiateInput(req)
		if err != nil {
			return registry.DeleteOptions{}, err
		}
		defaultGVK := optionsGroupVersion.WithKind("DeleteOptions")
		decoder := registry.Codecs.DecoderToVersion(info.Serializer, optionsGroupVersion)
		obj, _, err := decoder.Decode(body, &defaultGVK, &opts)
		if err != nil {
			return registry.DeleteOptions{}, apierrors.NewBadRequest(fmt.Sprintf("the body of a delete must be DeleteOptions: %v", err))
		}
		if obj != &opts {
			return registry.DeleteOptions{}, apierrors.NewBadRequest("the body of a delete must be DeleteOptions")
		}
	} else if err := decodeQuery(req, &opts); err != nil {
		return registry.DeleteOptions{}, err
	}
	if err := invalidOptions("DeleteOptions", metavalidation.ValidateDeleteOptions(&opts)); err != nil {
		return registry.DeleteOptions{}, err
	}
	return registry.DeleteOptions{
		DryRun:             len(opts.DryRun) > 0,
		Preconditions:      opts.Preconditions,
		GracePeriodSeconds: opts.GracePeriodSeconds,
		PropagationPolicy:  opts.PropagationPolicy,
		OrphanDependents:   opts.OrphanDependents, //nolint:staticcheck // still sent by older clients
	}, nil
}
