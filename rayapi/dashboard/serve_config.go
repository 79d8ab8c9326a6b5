package dashboard

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// What one Serve replica asks of Ray, read from a Serve config
// (ServeDeploySchema, a RayService's serveConfigV2). Ray's rules, from
// ray-project/ray:
//
//   - python/ray/serve/_private/application_state.py@062cd2b,
//     override_deployment_info: a deployment's ray_actor_options in the
//     config replace the code's (@serve.deployment) whole, they are not
//     merged; without them in the config the code's apply, which raydar
//     cannot read.
//   - python/ray/serve/_private/config.py@002086c,
//     ReplicaConfig._validate_ray_actor_options ("# Set Serve replica
//     defaults"): num_cpus left unset (or null) becomes 1.
//   - the same override_deployment_info: num_replicas "auto" takes
//     AutoscalingConfig.default() updated by the autoscaling_config given;
//     python/ray/serve/config.py AutoscalingConfig: min_replicas defaults to
//     1, initial_replicas to None (then min_replicas is where Serve starts).
//
// Placement-group bundles (placement_group_bundles) put the replica in a
// bundle Ray reserves first; raydar does not model them and leaves such a
// deployment's shape unknown.

// ServeConfigDeployment is one deployment of a Serve config
// (applications[App].deployments[Index]) as far as the config says.
type ServeConfigDeployment struct {
	// App is the application's name ("default" when the config names none,
	// as Ray does); AppIndex its place in applications, Index the
	// deployment's place in its deployments (for a field path).
	App      string
	AppIndex int
	Name     string
	Index    int
	// Replicas is how many replicas Serve starts with: num_replicas, or
	// with autoscaling (num_replicas "auto" or autoscaling_config)
	// initial_replicas, else min_replicas (1 by default). -1 when the
	// config leaves it to the code.
	Replicas int
	// Options are the ray_actor_options as the config writes them; nil
	// when the config has none (the code's apply).
	Options map[string]any
	// Shape is what one replica reserves: ActorShape of Options with
	// Ray's default CPU; nil when the config does not say (no
	// ray_actor_options, or placement_group_bundles).
	Shape Resources
	// DefaultCPU is true when Shape's CPU is Serve's default (num_cpus not
	// set in Options).
	DefaultCPU bool
}

// Path is the deployment's field path in the config:
// "applications[0].deployments[1]".
func (d *ServeConfigDeployment) Path() string {
	return "applications[" + strconv.Itoa(d.AppIndex) + "].deployments[" + strconv.Itoa(d.Index) + "]"
}

// ServeConfigDeployments lists the deployments a Serve config (YAML or
// JSON) names, applications in order. It reads leniently: what is not of
// the expected type is skipped (validation is Ray's and the reconciler's),
// and a document that is not a mapping gives none.
func ServeConfigDeployments(config string) []ServeConfigDeployment {
	var doc map[string]any
	if yaml.Unmarshal([]byte(config), &doc) != nil {
		return nil
	}
	apps, _ := doc["applications"].([]any)
	var out []ServeConfigDeployment
	for ai, a := range apps {
		app, ok := a.(map[string]any)
		if !ok {
			continue
		}
		name := "default"
		if s, ok := app["name"].(string); ok && s != "" {
			name = s
		}
		deps, _ := app["deployments"].([]any)
		for di, d := range deps {
			dm, ok := d.(map[string]any)
			if !ok {
				continue
			}
			dn, _ := dm["name"].(string)
			if dn == "" {
				continue
			}
			sd := ServeConfigDeployment{App: name, AppIndex: ai, Name: dn, Index: di, Replicas: replicasOf(dm)}
			if opts, ok := dm["ray_actor_options"].(map[string]any); ok {
				sd.Options = opts
				if _, pg := dm["placement_group_bundles"]; !pg {
					sd.Shape = ActorShape(opts)
					if f, ok := number(opts["num_cpus"]); !ok || f < 0 {
						sd.Shape[resCPU], sd.DefaultCPU = 1, true
					}
				}
			}
			out = append(out, sd)
		}
	}
	return out
}

// replicasOf reads num_replicas and autoscaling_config (see the file
// comment); -1 when the config does not say.
func replicasOf(dm map[string]any) int {
	as, auto := dm["autoscaling_config"].(map[string]any)
	switch r := dm["num_replicas"].(type) {
	case float64:
		if r >= 0 && !auto {
			return int(r)
		}
	case string:
		if r != "auto" {
			return -1
		}
		auto = true
	}
	if !auto {
		return -1
	}
	if f, ok := number(as["initial_replicas"]); ok && f >= 0 {
		return int(f)
	}
	if f, ok := number(as["min_replicas"]); ok && f >= 0 {
		return int(f)
	}
	return 1
}

const resCPU = "CPU"

// ActorShape is what ray_actor_options reserve as written: num_cpus
// (CPU), num_gpus (GPU), memory (bytes) and resources; Serve's default CPU
// is not added (ServeConfigDeployments adds it). Values that are not
// numbers are skipped.
func ActorShape(opts map[string]any) Resources {
	s := Resources{}
	if res, ok := opts["resources"].(map[string]any); ok {
		for k, v := range res {
			if f, ok := number(v); ok {
				s[k] = f
			}
		}
	}
	for key, name := range map[string]string{"num_cpus": resCPU, "num_gpus": "GPU", "memory": "memory"} {
		if f, ok := number(opts[key]); ok && f > 0 {
			s[name] = f
		}
	}
	return CleanResources(s)
}

// number is a JSON number (float64, as encoding/json and sigs.k8s.io/yaml
// decode them).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// ActorOptionWords writes ray_actor_options' resource keys as the config
// does, sorted: "num_cpus: 1, num_gpus: 2, resources: {TPU: 4}".
func ActorOptionWords(opts map[string]any) string {
	var parts []string
	for _, k := range []string{"memory", "num_cpus", "num_gpus"} {
		if f, ok := number(opts[k]); ok {
			parts = append(parts, k+": "+strconv.FormatFloat(f, 'g', -1, 64))
		}
	}
	if res, ok := opts["resources"].(map[string]any); ok && len(res) > 0 {
		var rs []string
		for _, k := range slices.Sorted(maps.Keys(res)) {
			if f, ok := number(res[k]); ok {
				rs = append(rs, k+": "+strconv.FormatFloat(f, 'g', -1, 64))
			}
		}
		parts = append(parts, "resources: {"+strings.Join(rs, ", ")+"}")
	}
	return strings.Join(parts, ", ")
}
