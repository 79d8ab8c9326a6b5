package kube

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
)

// MergeKubeconfigs writes one kubeconfig at path holding every context,
// cluster and user of files, with their extensions (a sandbox's address
// book of simulated heads), merged as KUBECONFIG=A:B merges them
// (clientcmd's loading rules: the first file's entry of a name wins, and
// its current context).
func MergeKubeconfigs(path string, files []string) error {
	merged, err := (&clientcmd.ClientConfigLoadingRules{Precedence: files}).Load()
	if err != nil {
		return fmt.Errorf("merging %v: %w", files, err)
	}
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
