package embedetcd

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/etcd/pkg/v3/featuregate"
	"go.etcd.io/etcd/server/v3/features"
	"go.uber.org/zap"
)

// Lease checkpointing has two spellings. etcd v3.5 turned it on with the
// flags --experimental-enable-lease-checkpoint and
// --experimental-enable-lease-checkpoint-persist; etcd v3.6 and later with
// the feature gates LeaseCheckpoint and LeaseCheckpointPersist
// (--feature-gates=LeaseCheckpoint=true,LeaseCheckpointPersist=true).
// minicp accepts both, and gatedFields is the one table that ties them
// together: each row is a feature gate, the Config field that holds it and
// the v3.5 flag that sets the same field.
type gatedField struct {
	gate       featuregate.Feature
	legacyFlag string
	field      func(*Config) *bool
}

var gatedFields = []gatedField{
	{features.LeaseCheckpoint, "experimental-enable-lease-checkpoint", func(c *Config) *bool { return &c.EnableLeaseCheckpoint }},
	{features.LeaseCheckpointPersist, "experimental-enable-lease-checkpoint-persist", func(c *Config) *bool { return &c.LeaseCheckpointPersist }},
}

// gatedFieldOf returns the row of gate, or nil when gate has no Config field.
func gatedFieldOf(gate string) *gatedField {
	for i := range gatedFields {
		if string(gatedFields[i].gate) == gate {
			return &gatedFields[i]
		}
	}
	return nil
}

// featureGatesFlag is the value of --feature-gates: "Gate=bool,...", as
// etcd v3.7 reads it. The gates in gatedFields set their Config fields;
// every other etcd server gate is kept in Config.FeatureGates.
type featureGatesFlag struct{ c *Config }

var _ flag.Value = featureGatesFlag{}

func (f featureGatesFlag) String() string {
	if f.c == nil {
		return ""
	}
	gates, _ := parseGates(f.c.FeatureGates)
	for _, g := range gatedFields {
		if *g.field(f.c) {
			gates[string(g.gate)] = true
		}
	}
	return formatGates(gates)
}

func (f featureGatesFlag) Set(value string) error {
	gates, err := parseGates(value)
	if err != nil {
		return err
	}
	if err := checkGates(gates); err != nil {
		return err
	}
	others, _ := parseGates(f.c.FeatureGates)
	for name, on := range gates {
		if g := gatedFieldOf(name); g != nil {
			*g.field(f.c) = on
		} else {
			others[name] = on
		}
	}
	f.c.FeatureGates = formatGates(others)
	return nil
}

// legacyGateFlag is the value of a v3.5 flag such as
// --experimental-enable-lease-checkpoint: a boolean flag that sets the
// same Config field as its feature gate.
type legacyGateFlag struct{ b *bool }

var _ flag.Value = legacyGateFlag{}

func (f legacyGateFlag) String() string {
	if f.b == nil {
		return "false"
	}
	return strconv.FormatBool(*f.b)
}

func (f legacyGateFlag) Set(value string) error {
	v, err := strconv.ParseBool(value)
	if err != nil {
		return err
	}
	*f.b = v
	return nil
}

// IsBoolFlag lets the flag be given without a value, as etcd v3.5 did.
func (f legacyGateFlag) IsBoolFlag() bool { return true }

// addFeatureGateFlags binds --feature-gates and, for every row of
// gatedFields, its v3.5 flag.
func (c *Config) addFeatureGateFlags(fs *flag.FlagSet) {
	fs.Var(featureGatesFlag{c}, "feature-gates", "etcd server feature gates, as etcd v3.7 spells them: Gate=true|false,... "+
		"(LeaseCheckpoint and LeaseCheckpointPersist, both off by default, are also the --experimental-enable-lease-checkpoint* flags). Known: "+
		strings.Join(knownGates(), ", "))
	for _, g := range gatedFields {
		fs.Var(legacyGateFlag{g.field(c)}, g.legacyFlag,
			fmt.Sprintf("etcd v3.5's spelling of --feature-gates=%s=true: %s", g.gate, gateUsage[g.gate]))
	}
}

var gateUsage = map[featuregate.Feature]string{
	features.LeaseCheckpoint:        "let the leader checkpoint remaining lease TTLs through Raft, so a leader change does not reset them",
	features.LeaseCheckpointPersist: "also persist checkpointed TTLs so they survive a restart (an etcd v3.7 cluster persists them anyway); requires LeaseCheckpoint",
}

// serverFeatureGate builds the feature gate etcd's server reads: etcd's
// defaults, then Config.FeatureGates, then the fields of gatedFields.
func (c *Config) serverFeatureGate(member string) (featuregate.FeatureGate, error) {
	fg := features.NewDefaultServerFeatureGate(member, zap.NewNop()).(featuregate.MutableFeatureGate)
	gates, err := parseGates(c.FeatureGates)
	if err != nil {
		return nil, err
	}
	for _, g := range gatedFields {
		gates[string(g.gate)] = *g.field(c)
	}
	if err := fg.SetFromMap(gates); err != nil {
		return nil, fmt.Errorf("--feature-gates: %w", err)
	}
	return fg, nil
}

// validateFeatureGates checks Config.FeatureGates: known etcd gates only,
// and none of those that have a Config field of their own.
func (c *Config) validateFeatureGates() error {
	gates, err := parseGates(c.FeatureGates)
	if err != nil {
		return err
	}
	for name := range gates {
		if g := gatedFieldOf(name); g != nil {
			return fmt.Errorf("--feature-gates: set %s through its own field (--%s), not FeatureGates", name, g.legacyFlag)
		}
	}
	return checkGates(gates)
}

// checkGates reports the first gate etcd does not know.
func checkGates(gates map[string]bool) error {
	known := features.DefaultEtcdServerFeatureGates
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		if _, ok := known[featuregate.Feature(name)]; !ok {
			errs = append(errs, fmt.Errorf("--feature-gates: etcd has no feature gate %q; known: %s", name, strings.Join(knownGates(), ", ")))
		}
	}
	return errors.Join(errs...)
}

// knownGates lists etcd's server feature gates with their defaults.
func knownGates() []string {
	var out []string
	for name, spec := range features.DefaultEtcdServerFeatureGates {
		out = append(out, fmt.Sprintf("%s (%s, default %t)", name, strings.ToLower(string(spec.PreRelease)), spec.Default))
	}
	slices.Sort(out)
	return out
}

// parseGates reads "A=true,B=false" ("" is no gates).
func parseGates(s string) (map[string]bool, error) {
	gates := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		name, val, ok := strings.Cut(kv, "=")
		on, err := strconv.ParseBool(strings.TrimSpace(val))
		if !ok || err != nil {
			return nil, fmt.Errorf("--feature-gates: %q is not Gate=true or Gate=false", kv)
		}
		gates[strings.TrimSpace(name)] = on
	}
	return gates, nil
}

// formatGates writes gates sorted by name, as "A=true,B=false".
func formatGates(gates map[string]bool) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		parts = append(parts, name+"="+strconv.FormatBool(gates[name]))
	}
	return strings.Join(parts, ",")
}
