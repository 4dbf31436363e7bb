package controlplane

import (
	"context"
	"fmt"
	"strings"

	"minicp/embedetcd"
)

// etcdAlarmError is the readiness failure of an etcd with raised alarms.
// While NOSPACE is raised etcd refuses writes but still serves reads and
// watches; /readyz fails and names the alarm, so that whoever polls it sees
// why writes fail and how to recover.
type etcdAlarmError struct {
	alarms []embedetcd.MemberAlarm
}

func (e *etcdAlarmError) Error() string { return e.PublicReason() }

// PublicReason is what /readyz prints instead of "reason withheld": the
// alarm says nothing secret and tells the operator what to do.
func (e *etcdAlarmError) PublicReason() string {
	names := make([]string, len(e.alarms))
	nospace := false
	for i, a := range e.alarms {
		names[i] = a.String()
		nospace = nospace || a.Alarm == "NOSPACE"
	}
	msg := "etcd alarm " + strings.Join(names, ", ")
	if nospace {
		msg += " (database space exceeded: writes are refused, reads and watches work; " +
			"recover with minictl etcd compact --keep 0, minictl etcd defrag, minictl etcd alarm disarm)"
	}
	return msg
}

// checkEtcdAlarms fails when any etcd member has raised an alarm.
func (cp *ControlPlane) checkEtcdAlarms(ctx context.Context) error {
	alarms, err := embedetcd.ListAlarms(ctx, cp.etcdClient)
	if err != nil {
		return fmt.Errorf("etcd answers reads but not the alarm list: %w", err)
	}
	if len(alarms) > 0 {
		return &etcdAlarmError{alarms: alarms}
	}
	return nil
}
