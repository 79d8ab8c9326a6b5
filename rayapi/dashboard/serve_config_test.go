package dashboard

import (
	"reflect"
	"testing"
)

func TestServeConfigDeployments(t *testing.T) {
	const cfg = `
applications:
  - name: llm
    import_path: llm.app:model
    deployments:
      - name: Model
        num_replicas: 2
        ray_actor_options:
          num_gpus: 2
          memory: 1073741824
      - name: Router
        num_replicas: auto
        autoscaling_config:
          min_replicas: 3
  - import_path: fruit.app:graph
    deployments:
      - name: Mango
        autoscaling_config: {min_replicas: 0, initial_replicas: 2}
        ray_actor_options: {num_cpus: 0.5, resources: {TPU: 4}}
      - name: Pear
        ray_actor_options: {num_cpus: 0}
      - name: Plum
        ray_actor_options: {num_gpus: 1}
        placement_group_bundles: [{GPU: 1, CPU: 1}]
      - {num_replicas: 1}
      - "not a mapping"
`
	type row struct {
		path, app, name string
		replicas        int
		shape           Resources
		defaultCPU      bool
	}
	var got []row
	for _, d := range ServeConfigDeployments(cfg) {
		got = append(got, row{d.Path(), d.App, d.Name, d.Replicas, d.Shape, d.DefaultCPU})
	}
	want := []row{
		{"applications[0].deployments[0]", "llm", "Model", 2, Resources{"CPU": 1, "GPU": 2, "memory": 1 << 30}, true},
		{"applications[0].deployments[1]", "llm", "Router", 3, nil, false},
		{"applications[1].deployments[0]", "default", "Mango", 2, Resources{"CPU": 0.5, "TPU": 4}, false},
		{"applications[1].deployments[1]", "default", "Pear", -1, Resources{}, false},
		{"applications[1].deployments[2]", "default", "Plum", -1, nil, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%v\nwant\n%v", got, want)
	}
}

func TestServeConfigDeploymentsMalformed(t *testing.T) {
	for _, cfg := range []string{"", "applications: 3", "- a list", "applications: [1, {deployments: {a: b}}]", "{{{", "applications:\n- deployments:\n  - name: M\n    num_replicas: many\n    ray_actor_options: {num_gpus: two}"} {
		for _, d := range ServeConfigDeployments(cfg) {
			if d.Replicas != -1 || !reflect.DeepEqual(d.Shape, Resources{"CPU": 1}) {
				t.Errorf("%q: %+v", cfg, d)
			}
		}
	}
}

func TestActorOptionWords(t *testing.T) {
	opts := map[string]any{"num_gpus": 2.0, "num_cpus": 1.0, "resources": map[string]any{"TPU": 4.0, "a": 1.0}, "runtime_env": map[string]any{}}
	if got, want := ActorOptionWords(opts), "num_cpus: 1, num_gpus: 2, resources: {TPU: 4, a: 1}"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
