//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestSandboxCommandInterrupt: `raydar sandbox` (the real main, in a child
// process) while a client watches it, as a TUI in another terminal does,
// and then Ctrl-C (SIGINT): it exits 0 saying how long the stop took and no
// error, no process of the sandbox is left, its temporary directory is gone,
// and the client's watch has ended.
func TestSandboxCommandInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "sandbox", "--nodes", "1")
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = outW, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	// What it prints once ready.
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var stateDir, kubeconfig string
	for ready := false; !ready; {
		select {
		case l, ok := <-lines:
			if !ok {
				_ = cmd.Process.Kill()
				err := <-exited
				killed = true
				t.Fatalf("raydar sandbox ended before it was ready (%v):\n%s", err, stderr.String())
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "logs:"); ok {
				stateDir = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "kubeconfig:"); ok {
				kubeconfig = strings.TrimSpace(v)
			}
			ready = strings.HasPrefix(l, "Ctrl-C stops it")
		case <-ctx.Done():
			t.Fatal("raydar sandbox not ready within 5 minutes")
		}
	}
	go func() { // the rest, until it exits
		for range lines {
		}
	}()
	if stateDir == "" || kubeconfig == "" {
		t.Fatalf("raydar sandbox printed no logs: or kubeconfig: line")
	}
	if procs := procsMentioning(t, stateDir); !strings.Contains(strings.Join(procs, "\n"), "kube-apiserver") {
		t.Fatalf("no kube-apiserver among the sandbox's processes %q", procs)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		killed = true
		if err != nil {
			t.Fatalf("raydar sandbox after Ctrl-C: %v\n%s", err, stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("raydar sandbox still running long after Ctrl-C:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "\nstopped in ") || strings.Contains(stderr.String(), "stop:") {
		t.Errorf("stderr after Ctrl-C:\n%s", stderr.String())
	}
	if left := procsMentioning(t, stateDir); len(left) != 0 {
		t.Errorf("processes left after raydar sandbox exited: %q", left)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s left behind: %v", stateDir, err)
	}
	ended := false
	for !ended {
		select {
		case _, ok := <-w.ResultChan():
			ended = !ok
		case <-ctx.Done():
			t.Fatal("the client's watch did not end")
		}
	}
}

// procsMentioning returns the command lines of the live processes whose
// command line contains s.
func procsMentioning(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue // gone, or a zombie
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, s) {
			found = append(found, cmd)
		}
	}
	return found
}
