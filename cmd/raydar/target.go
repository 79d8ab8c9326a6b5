package main

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/rayapi/scheme"
)

// oneNamespace resolves the kubectl flags of a command that acts on named
// objects of one namespace (why, ray-logs, port-forward): -A is refused,
// naming the command, and a client on the one scheme is made.
func oneNamespace(g *globals, command string) (*kube.Target, client.Client, error) {
	t, err := g.kube.Resolve()
	if err != nil {
		return nil, nil, err
	}
	if t.AllNamespaces {
		return nil, nil, fmt.Errorf("%s needs one namespace: drop -A/--all-namespaces or use -n", command)
	}
	c, err := client.New(t.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, nil, err
	}
	return t, c, nil
}
