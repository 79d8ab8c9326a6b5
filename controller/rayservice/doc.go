// Package rayservice owns raydar's RayService reconciler: the RayService's
// RayClusters (pending and active, zero-downtime upgrades), its head and
// serve Services, the Serve applications through the dashboard, the
// readiness of Serve proxies, and its status, with KubeRay v1.7.0's
// conditions and Event reasons. observe and act are in
// rayservice_reconciler.go, the pure decision in rayservice_decide.go and
// rayservice_status.go, the objects built in rayservice_build.go.
package rayservice
