package rayservice

// The RayService's status patch. KubeRay writes the whole status
// (Status().Update), so activeServiceStatus and pendingServiceStatus are
// always stored, empty ones as {"rayClusterStatus":{"desiredCPU":"0",...}}.
// raydar writes a JSON merge patch, which leaves out whatever did not
// change: an empty activeServiceStatus that was never stored would stay
// absent. statusPatch therefore always carries both in full, with the
// merge patch's deletions (nulls) laid over them.

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// statusPatch is the merge patch from orig to obj (both with their
// status), with status.activeServiceStatus and status.pendingServiceStatus
// always present in full.
func statusPatch(orig, obj *rayv1.RayService) (client.Patch, error) {
	data, err := client.MergeFrom(orig).Data(obj)
	if err != nil {
		return nil, err
	}
	var patch map[string]any
	if err := json.Unmarshal(data, &patch); err != nil {
		return nil, err
	}
	status, _ := patch["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		patch["status"] = status
	}
	for key, v := range map[string]rayv1.RayServiceStatus{
		"activeServiceStatus":  obj.Status.ActiveServiceStatus,
		"pendingServiceStatus": obj.Status.PendingServiceStatus,
	} {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var full map[string]any
		if err := json.Unmarshal(raw, &full); err != nil {
			return nil, err
		}
		if diff, ok := status[key].(map[string]any); ok {
			layOver(full, diff)
		}
		status[key] = full
	}
	out, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	return client.RawPatch(types.MergePatchType, out), nil
}

// layOver lays src over dst, recursively for objects on both sides (so
// src's nulls, the merge patch's deletions, reach the nested fields).
func layOver(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				layOver(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}
