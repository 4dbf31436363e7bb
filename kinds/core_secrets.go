package kinds

// Secrets: type Opaque by default, stringData merged into data (a client
// never reads stringData back), upstream's 1 MiB limit, the keys each
// built-in type requires, and immutability.

import (
	"encoding/json"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// secretsEntry describes the secrets resource (core/v1 Secret).
func secretsEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "secrets", "Secret", true, "/registry/secrets",
		func() runtime.Object { return &corev1.Secret{} }, func() runtime.Object { return &corev1.SecretList{} },
		&registry.Resource{Strategy: secretStrategy, Printer: secretPrinter, SelectableFields: func(obj runtime.Object) fields.Set {
			return fields.Set{"type": string(obj.(*corev1.Secret).Type)}
		}})
}

// secretMaxBytes is upstream's limit on a Secret's data (1 MiB).
const secretMaxBytes = 1024 * 1024

// defaultSecret sets the type and merges stringData into data, stringData
// winning, as upstream's conversion does; stringData is write-only.
func defaultSecret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 && s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

// secretRequiredKeys lists the data keys each built-in type needs.
var secretRequiredKeys = map[corev1.SecretType][]string{
	corev1.SecretTypeDockercfg:        {corev1.DockerConfigKey},
	corev1.SecretTypeDockerConfigJson: {corev1.DockerConfigJsonKey},
	corev1.SecretTypeSSHAuth:          {corev1.SSHAuthPrivateKey},
	corev1.SecretTypeTLS:              {corev1.TLSCertKey, corev1.TLSPrivateKeyKey},
}

// validateSecret checks keys, the total size and what the type requires.
func validateSecret(s *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	data := field.NewPath("data")
	total := 0
	for key, value := range s.Data {
		for _, msg := range utilvalidation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(data.Key(key), key, msg))
		}
		total += len(value)
	}
	if total > secretMaxBytes {
		errs = append(errs, field.TooLong(data, "", secretMaxBytes))
	}
	for _, key := range secretRequiredKeys[s.Type] {
		if _, ok := s.Data[key]; !ok {
			errs = append(errs, field.Required(data.Key(key), ""))
		}
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg, corev1.SecretTypeDockerConfigJson:
		key := secretRequiredKeys[s.Type][0]
		if value, ok := s.Data[key]; ok && !json.Valid(value) {
			errs = append(errs, field.Invalid(data.Key(key), "<secret contents redacted>", "invalid JSON"))
		}
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, pass := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			errs = append(errs, field.Required(data.Key(corev1.BasicAuthUsernameKey), ""),
				field.Required(data.Key(corev1.BasicAuthPasswordKey), ""))
		}
	}
	return errs
}

// validateSecretUpdate: the type never changes; an immutable Secret keeps
// its data and stays immutable.
func validateSecretUpdate(s, old *corev1.Secret) field.ErrorList {
	errs := validation.ValidateImmutableField(s.Type, old.Type, field.NewPath("type"))
	if old.Immutable != nil && *old.Immutable {
		if s.Immutable == nil || !*s.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableMsg))
		}
		if !equality.Semantic.DeepEqual(s.Data, old.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableMsg))
		}
	}
	return errs
}

var secretStrategy = kindStrategy(kindRules[*corev1.Secret]{
	defaults: defaultSecret, validate: validateSecret, validateUpdate: validateSecretUpdate,
})

var secretPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Type", "string", corev1.Secret{}.SwaggerDoc()["type"], 0),
		column("Data", "string", corev1.Secret{}.SwaggerDoc()["data"], 0),
		rest.AgeColumn,
	},
	func(s *corev1.Secret, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{s.Name, string(s.Type), int64(len(s.Data)), age(s.CreationTimestamp.Time, now)}}
	},
)
