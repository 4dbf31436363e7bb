package embedetcd

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestTheQuietLoggerDropsOnlyTheStartupRaceError(t *testing.T) {
	core, logs := observer.New(zapcore.ErrorLevel)
	lg := zap.New(dropStartupRace{core}).With(zap.String("member", "m"))
	lg.Error(startupRaceMessage, zap.String("error", "cannot detect storage schema version: missing term information"))
	lg.Error("failed to publish local member to cluster through raft")
	if got := logs.All(); len(got) != 1 || got[0].Message != "failed to publish local member to cluster through raft" {
		t.Errorf("got %v, want only the second error", got)
	}
}
