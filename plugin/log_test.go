package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// The SDK logger is named after the adapter's discovery name.
func TestExeName(t *testing.T) {
	for in, want := range map[string]string{
		"/opt/a/thermometer_v1.0.0": "thermometer",
		"thermometer_v1.2.3.exe":    "thermometer",
		"/x/my_value_v2.0.0-beta.1": "my_value",
		"/x/echo":                   "echo",
		"/x/tool_vx":                "tool_vx",
		"/x/lifecycle.test":         "lifecycle.test",
	} {
		if got := exeName(in); got != want {
			t.Errorf("exeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// Logger writes go-hclog's JSON records, which hosts (and the other SDKs) read: the
// level names are hclog's, the level comes from $ADAPTERKIT_LOG_LEVEL by hclog's names,
// and "off" writes nothing.
func TestLoggerRecords(t *testing.T) {
	type logged struct{ level, msg string }
	all := []logged{{"trace", "t"}, {"debug", "d"}, {"info", "i"}, {"warn", "w"}, {"error", "e"}}
	for _, tc := range []struct {
		env  string
		want []string // the levels written
	}{
		{"trace", []string{"trace", "debug", "info", "warn", "error"}},
		{"DEBUG", []string{"debug", "info", "warn", "error"}},
		{"", []string{"info", "warn", "error"}},
		{"nonsense", []string{"info", "warn", "error"}},
		{" warn ", []string{"warn", "error"}},
		{"error", []string{"error"}},
		{"off", nil},
	} {
		t.Run(tc.env, func(t *testing.T) {
			var out bytes.Buffer
			log := newLogger(&out, tc.env, "thermometer")
			for _, l := range all {
				log.Log(context.Background(), map[string]slog.Level{"trace": levelTrace, "debug": slog.LevelDebug,
					"info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[l.level], l.msg, "probe", "inlet", "n", 7)
			}
			var got []string
			for line := range strings.Lines(out.String()) {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("not a JSON record: %q", line)
				}
				lvl, _ := m["@level"].(string)
				got = append(got, lvl)
				ts, _ := m["@timestamp"].(string)
				if _, err := time.Parse(hclogTime, ts); err != nil {
					t.Errorf("@timestamp %q: %v", ts, err)
				}
				if m["@module"] != "thermometer" || m["probe"] != "inlet" || m["n"] != float64(7) ||
					m["@message"] != string(lvl[0]) || len(m) != 6 {
					t.Errorf("record %v", m)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("levels written %v, want %v", got, tc.want)
			}
		})
	}
}

// A level between slog's named ones is written with the name of the one below it.
func TestLevelName(t *testing.T) {
	for l, want := range map[slog.Level]string{
		levelTrace - 1: "trace", levelTrace: "trace", slog.LevelDebug - 1: "trace", slog.LevelDebug: "debug",
		slog.LevelInfo + 2: "info", slog.LevelWarn + 1: "warn", slog.LevelError: "error", slog.LevelError + 4: "error",
	} {
		if got := levelName(l); got != want {
			t.Errorf("levelName(%v) = %q, want %q", l, got, want)
		}
	}
}

// Adapter.Logger takes a go-hclog logger as well as a *slog.Logger, so that adapters
// that set one keep compiling and logging.
func TestAdapterLoggerTakesHclog(t *testing.T) {
	var out bytes.Buffer
	a := Adapter{Logger: hclog.New(&hclog.LoggerOptions{Output: &out, JSONFormat: true})}
	a.Logger.Warn("handler panicked", "id", 7)
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || m["@level"] != "warn" || m["@message"] != "handler panicked" || m["id"] != float64(7) {
		t.Fatalf("record %q: %v", out.String(), err)
	}
	a.Logger = newLogger(&out, "", "echo")
}
