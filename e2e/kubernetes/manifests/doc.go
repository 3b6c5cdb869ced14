// Package manifests checks contrib/kubernetes' manifests against the Kubernetes API
// types (k8s.io/api, the types the API server itself decodes): every document must
// decode strictly (no unknown or misspelt field, every value of its field's type) into
// the type its apiVersion and kind name, and the references between the documents must
// hold (the Deployment's selector matches its pod template, probes and the Service name
// container ports that exist, every mounted volume is declared and every volume's
// ConfigMap is one of the manifests).
//
// It is a module of its own so that the Kubernetes modules stay out of the library's
// go.mod. `make test-kubernetes` runs it before it plays the manifests with podman.
package manifests
