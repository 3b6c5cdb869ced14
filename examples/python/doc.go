// Package python holds an adapter written in Python, adapter.py: service example.pyecho
// version 1, implemented with nothing but Python's standard library. It speaks the
// Adapter process protocol v1 itself (frames, strict envelopes, the handshake, cancel,
// the in-flight bound, exit on end of input), showing what any language needs to do to
// be an adapter. The package's Go tests start it through package lifecycle and over
// raw pipes.
//
// The host launches it directly, never through a shell (R61, A31): the file is
// executable and starts with "#!/usr/bin/env python3", so its environment must let env
// find python3. Discovery needs the name NAME_vX.Y.Z; `make adapters` installs it as
// pyecho_v0.1.0. Scripts cannot be adapters on Windows, where only an .exe is launched
// (R62).
package python
