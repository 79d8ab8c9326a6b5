package dashboard

import (
	"context"
	"net/http"
)

// VersionInfo is the answer to GET /api/version (VersionPath): the
// dashboard's API version and the Ray version and commit of the head.
type VersionInfo struct {
	Version     string `json:"version"`
	RayVersion  string `json:"ray_version"`
	RayCommit   string `json:"ray_commit"`
	SessionName string `json:"session_name,omitempty"`
}

// GetVersion asks the head which Ray it runs (GET /api/version). The
// endpoint needs no auth token.
func (c *Client) GetVersion(ctx context.Context) (*VersionInfo, error) {
	var v VersionInfo
	if err := c.callJSON(ctx, http.MethodGet, VersionPath, nil, nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}
