package controlplane

import (
	"encoding/json"
	"net"
	"strconv"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
)

// refuseWriteTimeout bounds writing the refusal of another user's client: one small
// frame into a fresh connection's empty buffer.
const refuseWriteTimeout = time.Second

// refuseUser writes, to a client of user uid, why a daemon of user daemonUID does not
// serve it, so that it does not see a bare reset. Nothing is read from the client: the
// frame is written once, within refuseWriteTimeout, before the caller closes nc.
func refuseUser(nc net.Conn, daemonUID, uid int) {
	who := strconv.Itoa(daemonUID)
	if name := userName(daemonUID); name != "" {
		who += " (" + name + ")"
	}
	e := newError(CodePermissionDenied, map[string]any{"daemon_uid": daemonUID, "client_uid": uid},
		"this daemon answers only clients of its own user, uid %s; this client runs as uid %d: run it as that user", who, uid)
	body, err := json.Marshal(&envelope{Kind: kindResponse, Error: e})
	if err != nil {
		return
	}
	frame, err := proto.AppendFrame(nil, body, maxFrame, true)
	if err != nil {
		return
	}
	if nc.SetWriteDeadline(time.Now().Add(refuseWriteTimeout)) == nil {
		_, _ = nc.Write(frame)
	}
}
