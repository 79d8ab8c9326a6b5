//go:build unix

package podexec

import (
	"os"
	"os/signal"
	"syscall"
)

// watchResize signals changed on every SIGWINCH until the returned stop.
func watchResize(changed chan<- struct{}) (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-sig:
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}
