package controlplane

import (
	"io"
	"log/slog"

	"go.uber.org/zap"
)

// newLogger returns minicp's text logger: warnings only at -v=0, info at
// -v=1, debug from -v=2.
func newLogger(w io.Writer, verbosity int) *slog.Logger {
	level := slog.LevelWarn
	switch {
	case verbosity >= 2:
		level = slog.LevelDebug
	case verbosity == 1:
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// quietZap silences the etcd client's own zap logger: its reconnect chatter
// is noise for learners, and failures reach them as errors anyway.
func quietZap() *zap.Logger { return zap.NewNop() }
