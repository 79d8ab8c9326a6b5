package gauges

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The cells a pod's gauges are shown in, the same in the TUI and in
// `raydar top`. An unknown value is "?" (the Reason says why), never 0; a
// node without GPUs shows "-" in the GPU cells.

// Unknown is the cell of a value that is not known.
const Unknown = "?"

// Bytes is n bytes in binary units: "512Mi", "3.2Gi".
func Bytes(n float64) string {
	units := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi"}
	i := 0
	for math.Abs(n) >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 || n >= 100 || n == math.Trunc(n) {
		return strconv.FormatFloat(math.Round(n), 'f', -1, 64) + units[i]
	}
	return strings.TrimSuffix(strconv.FormatFloat(n, 'f', 1, 64), ".0") + units[i]
}

// Pct is a percentage without decimals: "87%".
func Pct(v float64) string { return fmt.Sprintf("%.0f%%", v) }

// CPUCell is the node's CPU use: "87%".
func (g PodGauges) CPUCell() string {
	if g.Node == nil || !g.Node.HasCPU {
		return Unknown
	}
	return Pct(g.Node.CPUPct)
}

// MemCell is the node's memory use: "3.2Gi/8Gi".
func (g PodGauges) MemCell() string {
	if g.Node == nil || !g.Node.HasMem {
		return Unknown
	}
	return Bytes(g.Node.MemUsed) + "/" + Bytes(g.Node.MemTotal)
}

// GPUCell is each GPU's utilisation, "98%" or "98%,0%" (by index); "-" for
// a node without GPUs.
func (g PodGauges) GPUCell() string {
	if g.Node == nil {
		return Unknown
	}
	if len(g.Node.GPUs) == 0 {
		return "-"
	}
	parts := make([]string, len(g.Node.GPUs))
	for i, u := range g.Node.GPUs {
		parts[i] = Pct(u.UtilPct)
	}
	return strings.Join(parts, ",")
}

// GRAMCell is the GPUs' memory, summed: "47Gi/160Gi"; "-" without GPUs.
func (g PodGauges) GRAMCell() string {
	if g.Node == nil {
		return Unknown
	}
	if len(g.Node.GPUs) == 0 {
		return "-"
	}
	var used, total float64
	known := false
	for _, u := range g.Node.GPUs {
		if u.HasGRAM {
			known = true
			used += u.GRAMUsedMiB
			total += u.GRAMUsedMiB + u.GRAMAvailableMiB
		}
	}
	if !known {
		return Unknown
	}
	return Bytes(used*(1<<20)) + "/" + Bytes(total*(1<<20))
}

// Why is the reason a pod's gauges are unknown, with its detail: "" when
// they are known.
func (g PodGauges) Why() string {
	if g.Node != nil {
		return ""
	}
	if g.Detail != "" {
		return string(g.Reason) + ": " + g.Detail
	}
	return string(g.Reason)
}
