// Package forwards is the port-forwards page (:forwards, :pf): each
// forward's state, addresses, target and last error, the selected one's
// ssh -L line, and ctrl+k to stop it after a confirmation.
package forwards
