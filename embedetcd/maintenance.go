package embedetcd

// This file holds the maintenance operations of M17, as
// plain functions over an etcd client so that they work against any etcd,
// embedded or not, from minicp's own process or from minictl:
//
//   - compaction drops the history older than a revision: reads and watches
//     from before it fail with "required revision has been compacted";
//   - defragmentation gives the pages compaction freed back to the file
//     system: before it, the database file keeps its size;
//   - alarms: when the database outgrows --quota-backend-bytes, etcd raises
//     NOSPACE and refuses every write (reads, deletes and compaction still
//     work) until an operator disarms it.
//
// The way out of NOSPACE is therefore: compact, defragment every member,
// disarm. Disarming first only gets the alarm raised again by the next write.

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrFutureRevision matches (with errors.Is) the error of a compaction to a
// revision etcd has not reached.
var ErrFutureRevision = errors.New("revision is in the future")

// ErrAlreadyCompacted matches (with errors.Is) the error of a compaction to
// a revision at or below the one etcd is already compacted to.
var ErrAlreadyCompacted = errors.New("revision is already compacted")

// compactionProbeKey is read and watched at revision 1 to find out how far
// etcd is compacted; nothing is ever stored under it.
const compactionProbeKey = "\x00minicp-compaction-probe"

// CompactResult describes a finished compaction.
type CompactResult struct {
	// Revision is the revision compacted to: older revisions are gone,
	// this one and newer ones can still be read and watched.
	Revision int64
	// Previous is the compacted revision before (0 if none).
	Previous int64
	// Current is etcd's revision when the compaction was applied.
	Current int64
}

// Compact compacts etcd's history to rev and waits until the compaction is
// applied to the backend (etcdctl compact --physical), so that a
// defragmentation right after it frees the space. A revision etcd has not
// reached, or one it is already compacted to, is refused with an error
// saying which revisions are possible, and nothing is changed.
func Compact(ctx context.Context, client *clientv3.Client, rev int64) (CompactResult, error) {
	current, compacted, err := revisions(ctx, client)
	if err != nil {
		return CompactResult{}, err
	}
	res := CompactResult{Revision: rev, Previous: compacted, Current: current}
	switch {
	case rev > current:
		return res, fmt.Errorf("cannot compact to revision %d: %w (etcd's current revision is %d; compact to at most %d)", rev, ErrFutureRevision, current, current)
	case rev <= compacted || rev <= 0:
		return res, fmt.Errorf("cannot compact to revision %d: %w (etcd is compacted to %d; pick a revision in %d..%d)", rev, ErrAlreadyCompacted, compacted, compacted+1, current)
	}
	resp, err := client.Compact(ctx, rev, clientv3.WithCompactPhysical())
	switch {
	case errors.Is(err, rpctypes.ErrFutureRev):
		return res, fmt.Errorf("cannot compact to revision %d: %w", rev, ErrFutureRevision)
	case errors.Is(err, rpctypes.ErrCompacted):
		return res, fmt.Errorf("cannot compact to revision %d: %w (another compaction went further meanwhile)", rev, ErrAlreadyCompacted)
	case err != nil:
		return res, fmt.Errorf("compacting etcd to revision %d: %w", rev, err)
	}
	res.Current = resp.Header.Revision
	return res, nil
}

// CompactKeep compacts etcd so that only the last keep revisions remain
// readable: it compacts to the current revision minus keep. keep 0
// compacts everything but the current state.
func CompactKeep(ctx context.Context, client *clientv3.Client, keep int64) (CompactResult, error) {
	if keep < 0 {
		return CompactResult{}, fmt.Errorf("--keep must not be negative, got %d", keep)
	}
	current, compacted, err := revisions(ctx, client)
	if err != nil {
		return CompactResult{}, err
	}
	target := current - keep
	if target <= compacted {
		return CompactResult{Revision: target, Previous: compacted, Current: current},
			fmt.Errorf("cannot keep the last %d revisions by compacting: %w (history already starts at %d, the current revision is %d)", keep, ErrAlreadyCompacted, compacted, current)
	}
	return Compact(ctx, client, target)
}

// CompactedRevision returns the revision etcd is compacted to (0 if it
// never was), as seen by the member the client reaches.
func CompactedRevision(ctx context.Context, client *clientv3.Client) (int64, error) {
	_, compacted, err := revisions(ctx, client)
	return compacted, err
}

// revisions returns etcd's current revision and the revision it is
// compacted to. etcd's Status does not report the latter; a watch from
// revision 1 does, in its first response, when revision 1 is compacted.
func revisions(ctx context.Context, client *clientv3.Client) (current, compacted int64, err error) {
	resp, err := client.Get(ctx, compactionProbeKey, clientv3.WithRev(1), clientv3.WithSerializable())
	if err == nil {
		return resp.Header.Revision, 0, nil
	}
	if !errors.Is(err, rpctypes.ErrCompacted) {
		return 0, 0, fmt.Errorf("reading etcd's revision: %w", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for wresp := range client.Watch(wctx, compactionProbeKey, clientv3.WithRev(1)) {
		if wresp.CompactRevision != 0 {
			compacted = wresp.CompactRevision
			break
		}
		if err := wresp.Err(); err != nil {
			return 0, 0, fmt.Errorf("reading etcd's compacted revision: %w", err)
		}
	}
	if compacted == 0 {
		return 0, 0, fmt.Errorf("reading etcd's compacted revision: %w", context.Cause(ctx))
	}
	cur, err := client.Get(ctx, compactionProbeKey, clientv3.WithSerializable())
	if err != nil {
		return 0, 0, fmt.Errorf("reading etcd's revision: %w", err)
	}
	return cur.Header.Revision, compacted, nil
}

// DefragResult is the database size of one member before and after its
// defragmentation.
type DefragResult struct {
	Endpoint string
	// Before and After are the database file sizes in bytes; InUse is the
	// part holding live data after the defragmentation.
	Before, After, InUse int64
}

// Defragment defragments every member the client knows, one after the
// other (a member blocks reads and writes while it rewrites its file), and
// reports the sizes. It stops at the first member that fails.
func Defragment(ctx context.Context, client *clientv3.Client) ([]DefragResult, error) {
	var out []DefragResult
	for _, ep := range client.Endpoints() {
		before, err := client.Status(ctx, ep)
		if err != nil {
			return out, fmt.Errorf("etcd member %s: reading its status: %w", ep, err)
		}
		if _, err := client.Defragment(ctx, ep); err != nil {
			return out, fmt.Errorf("etcd member %s: defragmenting: %w", ep, err)
		}
		after, err := client.Status(ctx, ep)
		if err != nil {
			return out, fmt.Errorf("etcd member %s: reading its status: %w", ep, err)
		}
		out = append(out, DefragResult{Endpoint: ep, Before: before.DbSize, After: after.DbSize, InUse: after.DbSizeInUse})
	}
	return out, nil
}

// MemberAlarm is one raised alarm: its type (NOSPACE, CORRUPT) and the
// member that raised it.
type MemberAlarm struct {
	MemberID uint64
	Alarm    string
}

func (a MemberAlarm) String() string { return fmt.Sprintf("%s on member %x", a.Alarm, a.MemberID) }

// ListAlarms returns the alarms raised in the cluster; none when healthy.
func ListAlarms(ctx context.Context, client *clientv3.Client) ([]MemberAlarm, error) {
	resp, err := client.AlarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing etcd alarms: %w", err)
	}
	return memberAlarms(resp.Alarms), nil
}

// DisarmAlarms disarms every raised alarm and returns those it disarmed.
// A NOSPACE alarm comes back with the next write if the database is still
// over its quota: compact and defragment first.
func DisarmAlarms(ctx context.Context, client *clientv3.Client) ([]MemberAlarm, error) {
	resp, err := client.AlarmDisarm(ctx, &clientv3.AlarmMember{})
	if err != nil {
		return nil, fmt.Errorf("disarming etcd alarms: %w", err)
	}
	return memberAlarms(resp.Alarms), nil
}

func memberAlarms(in []*etcdserverpb.AlarmMember) []MemberAlarm {
	out := make([]MemberAlarm, 0, len(in))
	for _, a := range in {
		out = append(out, MemberAlarm{MemberID: a.MemberID, Alarm: a.Alarm.String()})
	}
	return out
}
