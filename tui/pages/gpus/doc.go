// Package gpus is the idle-GPU page (:gpus): every GPU held by a Ray pod of
// the RayClusters in scope (the namespace, all namespaces, every context
// of a fleet) whose spec asks for GPUs, from Ray's own gauges
// (Session.Gauges, kube/gauges), with its utilisation now, how long it has
// been below the idle threshold and the GPU-hours spent so, idle ones
// first, longest idle first. Only those clusters are scraped, and only
// while the page is on top.
package gpus
