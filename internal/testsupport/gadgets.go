package testsupport

// GadgetsCRD is a CRD with one version whose schema has descriptions,
// an enum, a default, a minimum and a field that keeps unknown fields:
// what OpenAPI and kubectl explain show of a custom resource.
const GadgetsCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: what the gadget should be
            properties:
              color: {type: string, description: the gadget's color, enum: [red, blue], default: red}
              size: {type: integer, minimum: 1}
              config: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
