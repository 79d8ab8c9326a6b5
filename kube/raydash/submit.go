package raydash

import (
	"encoding/json"
	"fmt"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// SubmitRequest is the POST /api/jobs/ body for a RayJob: the entrypoint,
// the submission ID (status.jobId, passed as submissionID), runtimeEnvYAML as
// runtime_env, metadata, and the entrypoint's resources. It is what `ray job
// submit` sends for the flags KubeRay's submitter passes.
func SubmitRequest(job *rayv1.RayJob, submissionID string) (dashboard.SubmitJobRequest, error) {
	s := &job.Spec
	req := dashboard.SubmitJobRequest{
		Entrypoint:   s.Entrypoint,
		SubmissionID: submissionID,
		EntrypointReservation: dashboard.EntrypointReservation{
			EntrypointNumCPUs: float64(s.EntrypointNumCpus),
			EntrypointNumGPUs: float64(s.EntrypointNumGpus),
		},
	}
	// float32 → float64 widening shows binary noise (0.1 → 0.10000000149…);
	// send the value the user wrote.
	if s.EntrypointNumCpus != 0 {
		req.EntrypointNumCPUs, _ = strconv.ParseFloat(strconv.FormatFloat(float64(s.EntrypointNumCpus), 'g', -1, 32), 64)
	}
	if s.EntrypointNumGpus != 0 {
		req.EntrypointNumGPUs, _ = strconv.ParseFloat(strconv.FormatFloat(float64(s.EntrypointNumGpus), 'g', -1, 32), 64)
	}
	if len(s.Metadata) > 0 {
		req.Metadata = make(map[string]string, len(s.Metadata))
		for k, v := range s.Metadata {
			req.Metadata[k] = v
		}
	}
	if s.RuntimeEnvYAML != "" {
		env, err := RuntimeEnv(s.RuntimeEnvYAML)
		if err != nil {
			return req, err
		}
		req.RuntimeEnv = env
	}
	if s.EntrypointResources != "" {
		res := map[string]float64{}
		if err := json.Unmarshal([]byte(s.EntrypointResources), &res); err != nil {
			return req, fmt.Errorf("spec.entrypointResources must be a JSON object of resource name to number: %w", err)
		}
		req.EntrypointResources = res
	}
	return req, nil
}

// RuntimeEnv decodes runtimeEnvYAML into Ray's runtime_env mapping.
func RuntimeEnv(runtimeEnvYAML string) (map[string]any, error) {
	js, err := yaml.YAMLToJSON([]byte(runtimeEnvYAML))
	if err != nil {
		return nil, fmt.Errorf("spec.runtimeEnvYAML: %w", err)
	}
	var env map[string]any
	if err := json.Unmarshal(js, &env); err != nil {
		return nil, fmt.Errorf("spec.runtimeEnvYAML must be a YAML mapping: %w", err)
	}
	return env, nil
}
