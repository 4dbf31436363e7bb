// Package discovery serves the discovery documents of the resource table
// and /version.
//
// Discovery is how a client learns, before its first real request, which
// groups, versions and resources the server has, under which names and with
// which verbs. kubectl turns "po" into GET /api/v1/namespaces/x/pods with it.
//
// Two shapes of the same information exist and both are served here:
//
//   - legacy discovery, one document per level: /api (APIVersions), /apis
//     (APIGroupList), /apis/<group> (APIGroup) and /api/v1 or
//     /apis/<group>/<version> (APIResourceList);
//   - aggregated discovery (apidiscovery.k8s.io/v2), everything in two
//     documents, /api and /apis, chosen by the Accept header. kubectl and
//     client-go ask for it first and fall back to the legacy shape when the
//     response's Content-Type is plain application/json.
//
// Every document is computed once per state of the table, not per request:
// Handler follows the table and swaps in a new set of documents whole on
// every change, and a request reads whichever set is current. OpenAPI
// (package openapi) arranges the table by group and version the same way
// (ByGroup).
package discovery
