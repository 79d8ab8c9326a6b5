// Package portforward owns raydar's supervised port-forwards: a local
// listener that stays bound while the stream behind it, through the API
// server's pods/portforward subresource (client-go's SPDY-over-websocket
// dialer, SPDY as fallback), is re-made whenever it breaks.
//
// A [Forward] targets a RayCluster's current head pod (found by the labels of
// rayapi/v1 with a GET, at every connect) or one named pod, for a set of
// ports (dashboard 8265, Serve 8000, Ray client 10001, or any LOCAL:REMOTE).
// It listens first, so a local port already in use is one error returned by
// [Manager.Start], never retried. Then a supervisor connects, checks every
// CheckInterval that the pod it forwards to is still the one it should be
// (not gone, not terminating, still the head), and on any break — pod
// deleted or replaced, stream reset, idle timeout, an error from the pod
// side — reconnects with capped exponential back-off ([Backoff]) to the
// pod that is current then. Local connections made while reconnecting wait
// for the new stream.
//
// Its [State] (Up, Reconnecting since T, last error, pod) is readable at any
// time without blocking ([Forward.State], [Manager.Snapshot]); changes are
// announced on coalescing channels ([Forward.Changed], [Manager.Changed]).
// A [Manager] holds every forward of a raydar process; Close ends them all
// and returns when every goroutine they started has ended.
//
// The pure parts are here too: the back-off, the state transitions, port
// specs ([ParsePort], the presets) and the `ssh -L` line for a bastion
// ([SSHLine]).
package portforward
