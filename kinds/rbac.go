package kinds

// Roles, ClusterRoles and their bindings (rbac.authorization.k8s.io/v1):
// RBAC names, an immutable roleRef, defaulted subjects. minicp authorizes
// nothing with them.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// rolesEntry describes the roles resource (rbac.authorization.k8s.io/v1 Role).
func rolesEntry() *registry.Resource {
	return entry(apigroups.RBACV1, "roles", "Role", true, "/registry/roles",
		func() runtime.Object { return &rbacv1.Role{} }, func() runtime.Object { return &rbacv1.RoleList{} },
		&registry.Resource{Strategy: roleStrategy, Printer: rolePrinter})
}

// roleBindingsEntry describes the rolebindings resource (rbac.authorization.k8s.io/v1 RoleBinding).
func roleBindingsEntry() *registry.Resource {
	return entry(apigroups.RBACV1, "rolebindings", "RoleBinding", true, "/registry/rolebindings",
		func() runtime.Object { return &rbacv1.RoleBinding{} }, func() runtime.Object { return &rbacv1.RoleBindingList{} },
		&registry.Resource{Strategy: roleBindingStrategy, Printer: roleBindingPrinter})
}

// clusterRolesEntry describes the clusterroles resource (rbac.authorization.k8s.io/v1 ClusterRole).
func clusterRolesEntry() *registry.Resource {
	return entry(apigroups.RBACV1, "clusterroles", "ClusterRole", false, "/registry/clusterroles",
		func() runtime.Object { return &rbacv1.ClusterRole{} }, func() runtime.Object { return &rbacv1.ClusterRoleList{} },
		&registry.Resource{Strategy: clusterRoleStrategy, Printer: rolePrinter})
}

// clusterRoleBindingsEntry describes the clusterrolebindings resource (rbac.authorization.k8s.io/v1 ClusterRoleBinding).
func clusterRoleBindingsEntry() *registry.Resource {
	return entry(apigroups.RBACV1, "clusterrolebindings", "ClusterRoleBinding", false, "/registry/clusterrolebindings",
		func() runtime.Object { return &rbacv1.ClusterRoleBinding{} }, func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
		&registry.Resource{Strategy: clusterRoleBindingStrategy, Printer: clusterRoleBindingPrinter})
}

// defaultSubjects: users and groups belong to the RBAC API group.
func defaultSubjects(subjects []rbacv1.Subject) {
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}

// rbacName is upstream's name rule for RBAC objects: any path segment
// ("system:controller:x" is a valid role name).
func rbacName(name string, prefix bool) []string { return path.IsValidPathSegmentName(name) }

var roleStrategy = kindStrategy(kindRules[*rbacv1.Role]{name: rbacName})

var clusterRoleStrategy = kindStrategy(kindRules[*rbacv1.ClusterRole]{name: rbacName})

var roleBindingStrategy = kindStrategy(kindRules[*rbacv1.RoleBinding]{
	name: rbacName, defaults: func(rb *rbacv1.RoleBinding) { defaultSubjects(rb.Subjects) },
	validateUpdate: func(rb, old *rbacv1.RoleBinding) field.ErrorList {
		return validation.ValidateImmutableField(rb.RoleRef, old.RoleRef, field.NewPath("roleRef"))
	},
})

var clusterRoleBindingStrategy = kindStrategy(kindRules[*rbacv1.ClusterRoleBinding]{
	name: rbacName, defaults: func(rb *rbacv1.ClusterRoleBinding) { defaultSubjects(rb.Subjects) },
	validateUpdate: func(rb, old *rbacv1.ClusterRoleBinding) field.ErrorList {
		return validation.ValidateImmutableField(rb.RoleRef, old.RoleRef, field.NewPath("roleRef"))
	},
})

// rolePrinter: roles and cluster roles show their creation time.
var rolePrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{rest.NameColumn, createdAtColumn},
	func(m metav1.Object, _ time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{m.GetName(), createdAt(m)}}
	},
)

var bindingColumns = []metav1.TableColumnDefinition{
	rest.NameColumn,
	column("Role", "string", rbacv1.RoleBinding{}.SwaggerDoc()["roleRef"], 0),
	rest.AgeColumn,
	column("Users", "string", "Users in the roleBinding", 1),
	column("Groups", "string", "Groups in the roleBinding", 1),
	column("ServiceAccounts", "string", "ServiceAccounts in the roleBinding", 1),
}

// bindingRow prints a role binding's role and subjects by kind.
func bindingRow(m metav1.Object, ref rbacv1.RoleRef, subjects []rbacv1.Subject, now time.Time) metav1.TableRow {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		}
	}
	return metav1.TableRow{Cells: []any{
		m.GetName(), ref.Kind + "/" + ref.Name, age(m.GetCreationTimestamp().Time, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "),
	}}
}

var roleBindingPrinter = rest.TypedPrinter(bindingColumns, func(rb *rbacv1.RoleBinding, now time.Time) metav1.TableRow {
	return bindingRow(rb, rb.RoleRef, rb.Subjects, now)
})

var clusterRoleBindingPrinter = rest.TypedPrinter(bindingColumns, func(rb *rbacv1.ClusterRoleBinding, now time.Time) metav1.TableRow {
	return bindingRow(rb, rb.RoleRef, rb.Subjects, now)
})
