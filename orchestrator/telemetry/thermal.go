package telemetry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// cpuHwmonDrivers are the hwmon drivers that measure the CPU package or
// dies: Intel coretemp, AMD k10temp/zenpower, and the SoC drivers of ARM
// boards.
var cpuHwmonDrivers = map[string]bool{
	"coretemp": true, "k10temp": true, "zenpower": true,
	"cpu_thermal": true, "cpu-thermal": true, "soc_thermal": true,
}

// cpuZoneTypes are the thermal-zone types that belong to the CPU; used when
// no hwmon driver is found. "acpitz" is left out: it is a board sensor.
var cpuZoneTypes = map[string]bool{
	"x86_pkg_temp": true, "cpu-thermal": true, "cpu_thermal": true,
	"soc_thermal": true, "cpu": true,
}

// Thermal reads the CPU temperature from sysfs: hwmon first (where the
// package and die sensors are), thermal zones otherwise. The figure is the
// hottest CPU sensor, which is what a guard that protects the machine
// needs.
type Thermal struct {
	// Root is prepended to /sys paths; "" means the real root. Tests point
	// it at a sysfs tree in testdata.
	Root string
}

// CPUTemperature returns the hottest CPU sensor in °C. When none is
// readable it returns nil and a reason; err is non-nil only when ctx is
// done, so a guard can treat (nil, reason, nil) as "unknown, carry on".
func (t *Thermal) CPUTemperature(ctx context.Context) (*float64, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	root := t.Root
	if root == "" {
		root = "/"
	}
	if v := t.hwmon(root); v != nil {
		return v, "", nil
	}
	if v := t.zones(root); v != nil {
		return v, "", nil
	}
	return nil, fmt.Sprintf("no CPU temperature sensor under %s or %s (virtual machine or container without sysfs access?)",
		filepath.Join(root, "sys/class/hwmon"), filepath.Join(root, "sys/class/thermal")), nil
}

func (t *Thermal) hwmon(root string) *float64 {
	dirs, _ := filepath.Glob(filepath.Join(root, "sys/class/hwmon/hwmon*"))
	sort.Strings(dirs)
	var best *float64
	for _, d := range dirs {
		name := readTrim(filepath.Join(d, "name"))
		if !cpuHwmonDrivers[name] {
			continue
		}
		inputs, _ := filepath.Glob(filepath.Join(d, "temp*_input"))
		for _, in := range inputs {
			v, ok := milliC(in)
			if ok && (best == nil || v > *best) {
				vv := v
				best = &vv
			}
		}
	}
	return best
}

func (t *Thermal) zones(root string) *float64 {
	dirs, _ := filepath.Glob(filepath.Join(root, "sys/class/thermal/thermal_zone*"))
	var best *float64
	for _, d := range dirs {
		if !cpuZoneTypes[readTrim(filepath.Join(d, "type"))] {
			continue
		}
		v, ok := milliC(filepath.Join(d, "temp"))
		if ok && (best == nil || v > *best) {
			vv := v
			best = &vv
		}
	}
	return best
}

// milliC reads a sysfs temperature in millidegrees Celsius.
func milliC(path string) (float64, bool) {
	s := readTrim(path)
	if s == "" {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return float64(v) / 1000, true
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
