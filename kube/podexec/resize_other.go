//go:build !unix

package podexec

// watchResize: without SIGWINCH the size is sent once, at the start.
func watchResize(chan<- struct{}) (stop func()) { return func() {} }
