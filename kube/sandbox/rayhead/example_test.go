//go:build unix

package rayhead_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/raydar/raydar/kube/sandbox/rayhead"
	"github.com/raydar/raydar/rayapi/dashboard"
)

// A simulated head on loopback, driven with the dashboard client.
func ExampleHead() {
	head := rayhead.New(rayhead.Options{})
	if err := head.Start("127.0.0.1:0"); err != nil {
		log.Fatal(err)
	}
	defer head.Close()

	ctx := context.Background()
	client, err := dashboard.New(head.DashboardURL(), dashboard.WithTimeout(20*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	id, err := client.SubmitJob(ctx, dashboard.SubmitJobRequest{
		Entrypoint: `echo "hello from $WHO"`,
		RuntimeEnv: map[string]any{"env_vars": map[string]string{"WHO": "ray"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	var info *dashboard.JobInfo
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if info, err = client.GetJobInfo(ctx, id); err == nil && info.Status.IsTerminal() {
			break
		}
	}
	logs, _ := client.GetJobLogs(ctx, id)
	fmt.Println(info.Status, info.Message)
	fmt.Print(logs)

	// Serve: deploy, then wait for RUNNING and a healthy proxy.
	err = client.DeployServeConfigV2(ctx, `
applications:
  - name: app
    import_path: my.app
    route_prefix: /
`)
	if err != nil {
		log.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		d, err := client.GetServeApplications(ctx)
		if err == nil && d.Applications["app"].Status == dashboard.AppRunning && dashboard.ProxyHealthy(ctx, head.ProxyURL()) == nil {
			fmt.Println("app", d.Applications["app"].Status)
			break
		}
	}
	// Output:
	// SUCCEEDED Job finished successfully.
	// hello from ray
	// app RUNNING
}
