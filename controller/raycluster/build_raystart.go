package raycluster

// The `ray start` command line of a Ray container, as KubeRay v1.7.0 renders
// it (ray-operator/controllers/ray/common/pod.go: updateRayStartParamsResources,
// updateRayStartParamsLabels, setMissingRayStartParams,
// generateRayStartCommand, convertParamMap). The exact text matters: it is
// the container's args and the value of KUBERAY_GEN_RAY_START_CMD, which
// users' own commands reference.

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// rayStartValueFlags are the ray start flags whose value may be "true" or
// "false" and is passed as --flag=value. Every other flag whose value is
// "true" or "false" (any case) is a switch: "true" renders as a bare --flag
// and "false" leaves it out. KubeRay v1.7.0's list; v1.5.0 lacks
// include-log-monitor.
var rayStartValueFlags = []string{"log-color", "include-dashboard", "include-log-monitor"}

// customAcceleratorResources maps container resources to the Ray resource
// KubeRay declares for them in --resources.
var customAcceleratorResources = map[corev1.ResourceName]string{
	"aws.amazon.com/neuroncore": "neuron_cores",
	tpuResource:                 "TPU",
}

var migResource = regexp.MustCompile(`nvidia\.com/mig-\d+g\.\d+gb$`)

// isGPUResource reports whether a resource name counts as GPUs for Ray:
// "*gpu" (nvidia.com/gpu, amd.com/gpu, GPU lower-cased) or an NVIDIA MIG slice.
func isGPUResource(name string) bool {
	return strings.HasSuffix(name, "gpu") || migResource.MatchString(name)
}

// applyGroupResources writes a group's resources field into its ray start
// flags: CPU, memory and GPU keys (case-insensitive) become --num-cpus,
// --memory and --num-gpus (Kubernetes quantities rounded up to integers),
// every other key goes into the --resources JSON. These win over the same
// flags in rayStartParams (validation refuses having both). Values that are
// not quantities are skipped, as KubeRay skips them.
func applyGroupResources(params, groupResources map[string]string) {
	if len(groupResources) == 0 {
		return
	}
	custom := map[string]float64{}
	for name, v := range groupResources {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			continue
		}
		switch lower := strings.ToLower(name); {
		case lower == string(corev1.ResourceCPU):
			params["num-cpus"] = strconv.FormatInt(q.Value(), 10)
		case lower == string(corev1.ResourceMemory):
			params["memory"] = strconv.FormatInt(q.Value(), 10)
		case isGPUResource(lower):
			params["num-gpus"] = strconv.FormatInt(q.Value(), 10)
		default:
			custom[name] = q.AsApproximateFloat64()
		}
	}
	if len(custom) > 0 {
		b, _ := json.Marshal(custom)
		params["resources"] = "'" + string(b) + "'"
	}
}

// applyGroupLabels writes a group's labels field as --labels=k=v,... (keys
// sorted), replacing any labels flag.
func applyGroupLabels(params, groupLabels map[string]string) {
	if len(groupLabels) == 0 {
		return
	}
	parts := make([]string, 0, len(groupLabels))
	for _, k := range slices.Sorted(maps.Keys(groupLabels)) {
		parts = append(parts, k+"="+groupLabels[k])
	}
	params["labels"] = strings.Join(parts, ",")
}

// setMissingRayStartParams fills the flags KubeRay always passes: the GCS
// address (workers), dashboard-host 0.0.0.0 (head), the metrics and
// dashboard agent ports, and --block (always forced on).
func setMissingRayStartParams(params map[string]string, head bool, headAddress string) {
	setDefault := func(k, v string) {
		if _, ok := params[k]; !ok {
			params[k] = v
		}
	}
	if head {
		setDefault("dashboard-host", "0.0.0.0")
	} else {
		setDefault("address", headAddress)
	}
	setDefault("metrics-export-port", strconv.Itoa(int(defaultMetricsPort)))
	params["block"] = "true"
	setDefault("dashboard-agent-listen-port", strconv.Itoa(int(defaultDashboardAgentPort)))
}

// applyContainerResources fills the flags the Ray container's resources
// imply, unless rayStartParams (or the group's resources field) set them:
// --num-cpus from the CPU limit, else the request; --memory from the memory
// limit; --num-gpus from the first GPU limit (names sorted); the first
// custom accelerator limit (TPU, Neuron cores) into --resources.
func applyContainerResources(params map[string]string, res corev1.ResourceRequirements) {
	if _, ok := params["num-cpus"]; !ok {
		if q := res.Limits[corev1.ResourceCPU]; !q.IsZero() {
			params["num-cpus"] = strconv.FormatInt(q.Value(), 10)
		} else if q := res.Requests[corev1.ResourceCPU]; !q.IsZero() {
			params["num-cpus"] = strconv.FormatInt(q.Value(), 10)
		}
	}
	if _, ok := params["memory"]; !ok {
		if q := res.Limits[corev1.ResourceMemory]; !q.IsZero() {
			params["memory"] = strconv.FormatInt(q.Value(), 10)
		}
	}
	if len(res.Limits) == 0 {
		return
	}
	declared := map[string]float64{}
	if s, ok := params["resources"]; ok {
		// A --resources value that is not JSON stops here, GPUs included,
		// as in KubeRay.
		if err := json.Unmarshal([]byte(strings.Trim(s, "'\"` ")), &declared); err != nil {
			return
		}
	}
	acceleratorDone := false
	for _, ray := range customAcceleratorResources {
		if _, ok := declared[ray]; ok {
			acceleratorDone = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(res.Limits)) {
		q := res.Limits[name]
		if _, ok := params["num-gpus"]; !ok && isGPUResource(string(name)) && !q.IsZero() {
			params["num-gpus"] = strconv.FormatInt(q.Value(), 10)
		}
		if acceleratorDone {
			continue
		}
		if ray, ok := customAcceleratorResources[name]; ok && !q.IsZero() {
			if _, exists := declared[ray]; !exists {
				declared[ray] = q.AsApproximateFloat64()
				b, _ := json.Marshal(declared)
				params["resources"] = "'" + string(b) + "'"
			}
			acceleratorDone = true
		}
	}
}

// renderRayStart renders the ray start command: flags sorted by name, each
// as " --flag=value " (values verbatim, no quoting), switches as " --flag ".
// The spacing is KubeRay's, so the text is byte-for-byte what KubeRay
// writes into args and KUBERAY_GEN_RAY_START_CMD.
func renderRayStart(head bool, params map[string]string) string {
	var b strings.Builder
	if head {
		b.WriteString("ray start --head ")
	} else {
		b.WriteString("ray start ")
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		lower := strings.ToLower(v)
		if (lower == "true" || lower == "false") && !slices.Contains(rayStartValueFlags, k) {
			if lower == "true" {
				b.WriteString(" --" + k + " ")
			}
			continue
		}
		b.WriteString(" --" + k + "=" + v + " ")
	}
	return b.String()
}

// joinCommand renders a container's command or args as KubeRay joins them
// in front of the generated command: each element as " element ".
func joinCommand(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(" " + p + " ")
	}
	return b.String()
}
