// Package deploy_test checks the Helm chart: helm lint --strict, and what
// helm template renders with its optional objects on and off.
package deploy_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const chart = "helm/skillsvc"

// required are the values the chart refuses to render without.
var required = []string{"s3.bucket=skills", "auth.jwt.jwksUrl=https://idp.example/jwks.json"}

// A manifest is one rendered object.
type manifest = map[string]any

func kind(m manifest) string { return str(m, "kind") }
func name(m manifest) string { return str(m, "metadata", "name") }

// str, num and get read nested fields; a missing field is the zero value.
func get(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func str(v any, path ...string) string { s, _ := get(v, path...).(string); return s }
func num(v any, path ...string) int    { n, _ := get(v, path...).(int); return n }

func TestChart(t *testing.T) {
	dashboard, err := os.ReadFile("grafana/skillsvc.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		set    []string
		values string   // a values file, for values --set cannot give (numbers as a YAML file has them)
		kinds  []string // every kind rendered, in order
		check  func(t *testing.T, objs []manifest)
	}{{
		name:  "defaults",
		kinds: []string{"PodDisruptionBudget", "ServiceAccount", "ConfigMap", "Service", "Deployment"},
		check: func(t *testing.T, objs []manifest) {
			d := only(t, objs, "Deployment")
			if n := num(d, "spec", "replicas"); n != 2 {
				t.Errorf("replicas = %d, want 2", n)
			}
			// 90% of the 1Gi limit.
			if v := env(d)["GOMEMLIMIT"]; v != "966367641" {
				t.Errorf("GOMEMLIMIT = %q, want 966367641", v)
			}
		},
	}, {
		name: "autoscaling, service monitor and dashboard",
		set: []string{"autoscaling.enabled=true", "metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=kps",
			"metrics.grafanaDashboard.enabled=true", "metrics.grafanaDashboard.annotations.grafana_folder=skillsvc"},
		kinds: []string{"PodDisruptionBudget", "ServiceAccount", "ConfigMap", "ConfigMap", "Service", "Service", "Deployment", "HorizontalPodAutoscaler", "ServiceMonitor"},
		check: func(t *testing.T, objs []manifest) {
			d := only(t, objs, "Deployment")
			if _, ok := get(d, "spec").(map[string]any)["replicas"]; ok {
				t.Error("the Deployment sets replicas, which the HPA owns")
			}
			hpa := only(t, objs, "HorizontalPodAutoscaler")
			if str(hpa, "apiVersion") != "autoscaling/v2" || str(hpa, "spec", "scaleTargetRef", "name") != name(d) ||
				num(hpa, "spec", "minReplicas") != 2 || num(hpa, "spec", "maxReplicas") != 10 {
				t.Errorf("HPA spec = %v", get(hpa, "spec"))
			}
			if got := resourceTargets(hpa); !reflect.DeepEqual(got, map[string]int{"cpu": 70}) {
				t.Errorf("HPA targets = %v, want cpu 70", got)
			}

			sm := only(t, objs, "ServiceMonitor")
			if str(sm, "apiVersion") != "monitoring.coreos.com/v1" || str(sm, "metadata", "labels", "release") != "kps" {
				t.Errorf("ServiceMonitor metadata = %v %v", sm["apiVersion"], get(sm, "metadata"))
			}
			// It selects the metrics Service only, on a port that Service has,
			// whose target is the container's metrics port.
			sel, _ := get(sm, "spec", "selector", "matchLabels").(map[string]any)
			var selected []manifest
			for _, svc := range all(objs, "Service") {
				if matches(sel, get(svc, "metadata", "labels")) {
					selected = append(selected, svc)
				}
			}
			if len(selected) != 1 || !strings.HasSuffix(name(selected[0]), "-metrics") {
				t.Fatalf("ServiceMonitor selects %d services (%v), want the metrics one", len(selected), selected)
			}
			ep := get(sm, "spec", "endpoints").([]any)[0]
			port := servicePort(selected[0], str(ep, "port"))
			if port == nil || str(port, "targetPort") != "metrics" || num(port, "port") != 9090 {
				t.Errorf("endpoint port %q: service port %v, want metrics 9090", str(ep, "port"), port)
			}
			if !containerHasPort(d, "metrics", 9090) {
				t.Error("the container has no metrics port 9090")
			}
			if str(ep, "path") != "/metrics" || get(ep, "scheme") != nil {
				t.Errorf("endpoint = %v, want path /metrics over http", ep)
			}

			cm := named(t, objs, "ConfigMap", "skillsvc-dashboard")
			if str(cm, "metadata", "labels", "grafana_dashboard") != "1" || str(cm, "metadata", "annotations", "grafana_folder") != "skillsvc" {
				t.Errorf("dashboard ConfigMap metadata = %v", get(cm, "metadata"))
			}
			if got := str(cm, "data", "skillsvc.json"); got != strings.TrimRight(string(dashboard), "\n") {
				t.Errorf("the ConfigMap's dashboard differs from deploy/grafana/skillsvc.json (%d bytes, want %d)", len(got), len(dashboard))
			}
		},
	}, {
		name:  "memory target only, with behavior",
		set:   []string{"autoscaling.enabled=true", "autoscaling.targetCPUUtilizationPercentage=", "autoscaling.targetMemoryUtilizationPercentage=80", "autoscaling.minReplicas=3", "autoscaling.behavior.scaleDown.stabilizationWindowSeconds=600"},
		kinds: []string{"PodDisruptionBudget", "ServiceAccount", "ConfigMap", "Service", "Deployment", "HorizontalPodAutoscaler"},
		check: func(t *testing.T, objs []manifest) {
			hpa := only(t, objs, "HorizontalPodAutoscaler")
			if got := resourceTargets(hpa); !reflect.DeepEqual(got, map[string]int{"memory": 80}) {
				t.Errorf("HPA targets = %v, want memory 80", got)
			}
			if num(hpa, "spec", "minReplicas") != 3 || num(hpa, "spec", "behavior", "scaleDown", "stabilizationWindowSeconds") != 600 {
				t.Errorf("HPA spec = %v", get(hpa, "spec"))
			}
		},
	}, {
		name: "metrics over TLS",
		set: []string{"tls.enabled=true", "tls.existingSecret=skillsvc-tls", "metrics.tls=true", "metrics.serviceMonitor.enabled=true",
			"metrics.serviceMonitor.tlsConfig.serverName=skillsvc.agents.svc"},
		kinds: []string{"PodDisruptionBudget", "ServiceAccount", "ConfigMap", "Service", "Service", "Deployment", "ServiceMonitor"},
		check: func(t *testing.T, objs []manifest) {
			ep := get(only(t, objs, "ServiceMonitor"), "spec", "endpoints").([]any)[0]
			if str(ep, "scheme") != "https" || str(ep, "tlsConfig", "serverName") != "skillsvc.agents.svc" {
				t.Errorf("endpoint = %v, want https with the tlsConfig", ep)
			}
		},
	}, {
		name:  "dashboard in Grafana's namespace",
		set:   []string{"metrics.grafanaDashboard.enabled=true", "metrics.grafanaDashboard.namespace=monitoring"},
		kinds: []string{"PodDisruptionBudget", "ServiceAccount", "ConfigMap", "ConfigMap", "Service", "Deployment"},
		check: func(t *testing.T, objs []manifest) {
			if ns := str(named(t, objs, "ConfigMap", "skillsvc-dashboard"), "metadata", "namespace"); ns != "monitoring" {
				t.Errorf("dashboard namespace = %q", ns)
			}
		},
	}, {
		name:  "GOMEMLIMIT from a 2G limit at 80%",
		set:   []string{"resources.limits.memory=2G", "goMemLimitPercent=80"},
		kinds: []string{"PodDisruptionBudget", "ServiceAccount", "ConfigMap", "Service", "Deployment"},
		check: func(t *testing.T, objs []manifest) {
			if v := env(only(t, objs, "Deployment"))["GOMEMLIMIT"]; v != "1600000000" {
				t.Errorf("GOMEMLIMIT = %q, want 1600000000", v)
			}
		},
	}, {
		name:   "GOMEMLIMIT from a limit in bytes in a values file",
		values: "resources:\n  limits:\n    memory: 1073741824\n",
		kinds:  []string{"PodDisruptionBudget", "ServiceAccount", "ConfigMap", "Service", "Deployment"},
		check: func(t *testing.T, objs []manifest) {
			if v := env(only(t, objs, "Deployment"))["GOMEMLIMIT"]; v != "966367641" {
				t.Errorf("GOMEMLIMIT = %q, want 966367641", v)
			}
		},
	}, {
		name:  "no memory limit",
		set:   []string{"resources.limits=null"},
		kinds: []string{"PodDisruptionBudget", "ServiceAccount", "ConfigMap", "Service", "Deployment"},
		check: func(t *testing.T, objs []manifest) {
			if v, ok := env(only(t, objs, "Deployment"))["GOMEMLIMIT"]; ok {
				t.Errorf("GOMEMLIMIT = %q without a memory limit", v)
			}
		},
	}, {
		name:  "GOMEMLIMIT in extraEnv wins",
		set:   []string{"extraEnv[0].name=GOMEMLIMIT", "extraEnv[0].value=700MiB"},
		kinds: []string{"PodDisruptionBudget", "ServiceAccount", "ConfigMap", "Service", "Deployment"},
		check: func(t *testing.T, objs []manifest) {
			n := 0
			for _, e := range get(only(t, objs, "Deployment"), "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["env"].([]any) {
				if str(e, "name") == "GOMEMLIMIT" {
					n++
				}
			}
			if v := env(only(t, objs, "Deployment"))["GOMEMLIMIT"]; v != "700MiB" || n != 1 {
				t.Errorf("GOMEMLIMIT = %q (%d times), want 700MiB once", v, n)
			}
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			objs := render(t, c.set, c.values)
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, kind(o))
			}
			if !reflect.DeepEqual(kinds, c.kinds) {
				t.Errorf("kinds = %v, want %v", kinds, c.kinds)
			}
			c.check(t, objs)
		})
	}
}

// TestChartRefuses checks that settings which cannot work fail to render,
// naming the value to change.
func TestChartRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		set  []string
		want string
	}{
		{"service monitor without metrics", []string{"metrics.enabled=false", "metrics.serviceMonitor.enabled=true"}, "metrics.serviceMonitor.enabled needs metrics.enabled"},
		{"dashboard without metrics", []string{"metrics.enabled=false", "metrics.grafanaDashboard.enabled=true"}, "metrics.grafanaDashboard.enabled needs metrics.enabled"},
		{"no autoscaling target", []string{"autoscaling.enabled=true", "autoscaling.targetCPUUtilizationPercentage="}, "set targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage"},
		{"min above max", []string{"autoscaling.enabled=true", "autoscaling.minReplicas=5", "autoscaling.maxReplicas=3"}, "minReplicas (5) <= maxReplicas (3)"},
		{"no replicas", []string{"autoscaling.enabled=true", "autoscaling.minReplicas=0"}, "1 <= minReplicas (0)"},
		{"GOMEMLIMIT above the limit", []string{"goMemLimitPercent=120"}, "goMemLimitPercent (120) must be at most 100"},
		{"unreadable memory limit", []string{"resources.limits.memory=lots"}, `resources.limits.memory "lots"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := helm(t, append([]string{"template", "skillsvc", chart}, setFlags(append(append([]string{}, required...), c.set...))...)...)
			if err == nil || !strings.Contains(out, c.want) {
				t.Errorf("helm template: %v, want a failure saying %q:\n%s", err, c.want, out)
			}
		})
	}
}

// helm runs the helm on PATH (make puts .tools/bin first) with its own
// empty configuration, returning its combined output.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("helm")
	if err != nil && testing.Short() {
		t.Skipf("helm is not on PATH (make tools installs it): %v", err)
	}
	if err != nil {
		t.Fatalf("helm is not on PATH: run make tools, then make test-helm (%v)", err)
	}
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func setFlags(set []string) []string {
	var out []string
	for _, s := range set {
		out = append(out, "--set", s)
	}
	return out
}

// parse decodes every object of a multi-document YAML stream.
func parse(t *testing.T, out string) []manifest {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader([]byte(out)))
	var objs []manifest
	for {
		var m manifest
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("rendered YAML: %v\n%s", err, out)
		}
		if m == nil {
			continue
		}
		if kind(m) == "" || str(m, "apiVersion") == "" || name(m) == "" {
			t.Errorf("object without kind, apiVersion or name: %v", m)
		}
		objs = append(objs, m)
	}
}

func all(objs []manifest, k string) []manifest {
	var out []manifest
	for _, o := range objs {
		if kind(o) == k {
			out = append(out, o)
		}
	}
	return out
}

// named is the object of kind k called name.
func named(t *testing.T, objs []manifest, k, name string) manifest {
	t.Helper()
	for _, o := range all(objs, k) {
		if str(o, "metadata", "name") == name {
			return o
		}
	}
	t.Fatalf("no %s %s", k, name)
	return nil
}

func only(t *testing.T, objs []manifest, k string) manifest {
	t.Helper()
	found := all(objs, k)
	if len(found) != 1 {
		t.Fatalf("%d objects of kind %s, want 1", len(found), k)
	}
	return found[0]
}

// env is the skillsvc container's environment, by name.
func env(d manifest) map[string]string {
	out := map[string]string{}
	for _, c := range get(d, "spec", "template", "spec", "containers").([]any) {
		for _, e := range get(c, "env").([]any) {
			out[str(e, "name")] = str(e, "value")
		}
	}
	return out
}

// args are the container's arguments.
func args(d manifest) []string {
	var out []string
	for _, c := range get(d, "spec", "template", "spec", "containers").([]any) {
		for _, a := range get(c, "args").([]any) {
			out = append(out, a.(string))
		}
	}
	return out
}

// resourceTargets are an HPA's resource metrics: name → average utilization.
func resourceTargets(hpa manifest) map[string]int {
	out := map[string]int{}
	for _, m := range get(hpa, "spec", "metrics").([]any) {
		out[str(m, "resource", "name")] = num(m, "resource", "target", "averageUtilization")
	}
	return out
}

func matches(selector map[string]any, labels any) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if get(labels, k) != v {
			return false
		}
	}
	return true
}

func servicePort(svc manifest, name string) any {
	for _, p := range get(svc, "spec", "ports").([]any) {
		if str(p, "name") == name {
			return p
		}
	}
	return nil
}

func containerHasPort(d manifest, name string, port int) bool {
	for _, c := range get(d, "spec", "template", "spec", "containers").([]any) {
		for _, p := range get(c, "ports").([]any) {
			if str(p, "name") == name && num(p, "containerPort") == port {
				return true
			}
		}
	}
	return false
}
