package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// dir holds the manifests under test.
const dir = "../../../contrib/kubernetes"

// objects are the decoded manifests, by kind.
type objects struct {
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	configMaps  []*corev1.ConfigMap
}

// decodeStrict decodes one YAML document into the API type its apiVersion and kind
// name as the API server does: field names case-sensitive, unknown and duplicate
// fields refused, every value of its field's type.
func decodeStrict(doc []byte, into *objects) error {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	var tm metav1.TypeMeta
	if err := json.UnmarshalCaseSensitivePreserveInts(js, &tm); err != nil {
		return err
	}
	strict := func(v any) error {
		strictErrs, err := json.UnmarshalStrict(js, v)
		return errors.Join(append(strictErrs, err)...)
	}
	switch tm.APIVersion + "/" + tm.Kind {
	case "apps/v1/Deployment":
		var d appsv1.Deployment
		err = strict(&d)
		into.deployments = append(into.deployments, &d)
	case "v1/Service":
		var s corev1.Service
		err = strict(&s)
		into.services = append(into.services, &s)
	case "v1/ConfigMap":
		var c corev1.ConfigMap
		err = strict(&c)
		into.configMaps = append(into.configMaps, &c)
	default:
		err = fmt.Errorf("kind %q of apiVersion %q is not one the manifests use", tm.Kind, tm.APIVersion)
	}
	return err
}

// load decodes every document of every .yaml file in dir; errs says which did not.
func load(dir string) (objs *objects, errs []error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, []error{fmt.Errorf("no manifests in %s: %v", dir, err)}
	}
	objs = &objects{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, []error{err}
		}
		for i, doc := range bytes.Split(b, []byte("\n---")) {
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			if err := decodeStrict(doc, objs); err != nil {
				errs = append(errs, fmt.Errorf("%s, document %d: %w", filepath.Base(f), i+1, err))
			}
		}
	}
	return objs, errs
}

// mustLoad is load for the manifests under test.
func mustLoad(t *testing.T) *objects {
	t.Helper()
	objs, errs := load(dir)
	for _, err := range errs {
		t.Error(err)
	}
	if objs == nil {
		t.FailNow()
	}
	return objs
}

// stripComments drops YAML comment lines, to tell an empty document from one.
func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

// TestManifestsDecodeStrictly: every manifest is a Deployment, Service or ConfigMap
// with only fields the API knows.
func TestManifestsDecodeStrictly(t *testing.T) {
	objs := mustLoad(t)
	if len(objs.deployments) != 1 || len(objs.services) != 1 || len(objs.configMaps) != 1 {
		t.Fatalf("want one Deployment, Service and ConfigMap; have %d, %d, %d",
			len(objs.deployments), len(objs.services), len(objs.configMaps))
	}
}

// TestManifestsHoldTogether: the references between the manifests resolve.
func TestManifestsHoldTogether(t *testing.T) {
	objs := mustLoad(t)
	for _, err := range check(objs) {
		t.Error(err)
	}
}

// check returns what does not hold between the decoded manifests.
func check(objs *objects) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	configMaps := map[string]bool{}
	for _, c := range objs.configMaps {
		configMaps[c.Name] = true
	}
	var podLabels []labels.Set
	var ports []corev1.ContainerPort
	for _, d := range objs.deployments {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || d.Spec.Selector == nil || sel.Empty() {
			bad("deployment %s: selector %v: %v", d.Name, d.Spec.Selector, err)
			continue
		}
		tl := labels.Set(d.Spec.Template.Labels)
		if !sel.Matches(tl) {
			bad("deployment %s: selector %v does not match the pod template's labels %v", d.Name, sel, tl)
		}
		podLabels = append(podLabels, tl)
		pod := d.Spec.Template.Spec
		if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			bad("deployment %s: the pod does not say runAsNonRoot", d.Name)
		}
		volumes := map[string]corev1.Volume{}
		for _, v := range pod.Volumes {
			volumes[v.Name] = v
			if v.ConfigMap != nil && !configMaps[v.ConfigMap.Name] {
				bad("deployment %s: volume %s names ConfigMap %s, which no manifest declares", d.Name, v.Name, v.ConfigMap.Name)
			}
		}
		for _, c := range pod.Containers {
			if c.Image == "" {
				bad("deployment %s: container %s has no image", d.Name, c.Name)
			}
			ports = append(ports, c.Ports...)
			for _, m := range c.VolumeMounts {
				if _, ok := volumes[m.Name]; !ok {
					bad("deployment %s: container %s mounts %s, which is no volume of the pod", d.Name, c.Name, m.Name)
				}
			}
			for what, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
				if p == nil || p.HTTPGet == nil {
					bad("deployment %s: container %s has no HTTP %s probe", d.Name, c.Name, what)
					continue
				}
				if !portExists(c.Ports, p.HTTPGet.Port) {
					bad("deployment %s: the %s probe's port %s is no port of container %s", d.Name, what, p.HTTPGet.Port.String(), c.Name)
				}
			}
			sc := c.SecurityContext
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
				sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
				sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
				bad("deployment %s: container %s's securityContext is not the restrictive one (no escalation, read-only root, drop ALL)", d.Name, c.Name)
			}
		}
		if g := pod.TerminationGracePeriodSeconds; g == nil || *g <= 0 {
			bad("deployment %s: no terminationGracePeriodSeconds", d.Name)
		}
	}
	for _, s := range objs.services {
		sel := labels.SelectorFromSet(s.Spec.Selector)
		if len(s.Spec.Selector) == 0 || !slices.ContainsFunc(podLabels, func(l labels.Set) bool { return sel.Matches(l) }) {
			bad("service %s: selector %v selects no pod template", s.Name, s.Spec.Selector)
		}
		for _, p := range s.Spec.Ports {
			if !portExists(ports, p.TargetPort) {
				bad("service %s: port %s's target %s is no container port", s.Name, p.Name, p.TargetPort.String())
			}
		}
	}
	return errs
}

// portExists reports whether p names (or numbers) one of ports.
func portExists(ports []corev1.ContainerPort, p intstr.IntOrString) bool {
	for _, cp := range ports {
		if (p.Type == intstr.String && p.StrVal == cp.Name) || (p.Type == intstr.Int && p.IntVal == cp.ContainerPort) {
			return true
		}
	}
	return false
}

// The checks above can fail: a manifest with a misspelt field, a wrong type or a
// reference to nothing is refused.
func TestChecksRefuseBrokenManifests(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name, file, old, new, want string
	}{
		{"unknown field", "deployment.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFS: true", "unknown field"},
		{"field in the wrong case", "deployment.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true", "unknown field"},
		{"duplicate field", "deployment.yaml", "\n  replicas: 1\n", "\n  replicas: 1\n  replicas: 2\n", "already set"},
		{"wrong type", "deployment.yaml", "\n  replicas: 1\n", "\n  replicas: \"one\"\n", "cannot unmarshal"},
		{"probe on no port", "deployment.yaml", "port: metrics", "port: metrix", "is no port of container"},
		{"selector off the template", "service.yaml", "app.kubernetes.io/name: adapterd\n  ports", "app.kubernetes.io/name: adapterx\n  ports", "selects no pod template"},
		{"target no port", "service.yaml", "targetPort: control", "targetPort: 9999", "is no container port"},
		{"config map undeclared", "configmap.yaml", "name: adapterd-policy", "name: adapterd-policies", "which no manifest declares"},
		{"escalation allowed", "deployment.yaml", "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true", "not the restrictive one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			for _, f := range []string{"configmap.yaml", "deployment.yaml", "service.yaml"} {
				s := read(f)
				if f == tc.file {
					if !strings.Contains(s, tc.old) {
						t.Fatalf("%s has no %q", f, tc.old)
					}
					s = strings.Replace(s, tc.old, tc.new, 1)
				}
				if err := os.WriteFile(filepath.Join(tmp, f), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			objs, errs := load(tmp)
			if objs != nil && len(errs) == 0 {
				errs = check(objs)
			}
			var found []string
			for _, err := range errs {
				found = append(found, err.Error())
			}
			if !slices.ContainsFunc(found, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Fatalf("want an error with %q, got %q", tc.want, found)
			}
		})
	}
}
