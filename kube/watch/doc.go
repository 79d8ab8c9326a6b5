// Package watch owns the bridge from the shared informer cache to the TUI:
// event handlers on RayCluster, RayJob, RayService, RayCronJob (when the
// cluster serves it), Ray pods (label ray.io/node-type) and their Events, and
// nodes when the user may read them (SetNodeAccess), push deltas into a coalescing buffer;
// Source.Next blocks until at least one delta is there, waits one batch
// window for more and hands back the batch. Store holds the objects the views
// read, by UID, so rendering never does I/O.
//
// No polling and no re-listing: the informers' initial list arrives as the
// first batch, then only changes.
//
// It also owns what the observe-only TUI caches of a pod: SlimPod (the
// informer's transform), compactPod (sharing what repeats) and SlimPodWire
// (the same trim done on the protobuf bytes, before decoding, a WATCH read
// in bulk); and what it
// caches of the Ray kinds: CompactRay (the default transform: their cluster
// specs share what repeats from one object to the next).
package watch
