#!/usr/bin/env python3
"""Builds a Python adapter into one executable file: a zipapp holding the adapterkit
package and the adapter's script as __main__, behind a "#!/usr/bin/env python3" line.

    python3 sdk/python/tools/build_adapter.py SCRIPT OUTPUT

The result needs nothing but python3 (>= 3.9) on the PATH; name it NAME_vX.Y.Z for
discovery.
"""

import os
import stat
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(HERE), "adapterkit")


def build(script: str, output: str) -> None:
    tmp = output + ".tmp"
    with open(tmp, "wb") as f:
        f.write(b"#!/usr/bin/env python3\n")
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name in sorted(os.listdir(PACKAGE)):
                if name.endswith(".py"):
                    z.write(os.path.join(PACKAGE, name), "adapterkit/" + name)
            z.write(script, "__main__.py")
    mode = os.stat(tmp).st_mode
    os.chmod(tmp, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(tmp, output)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: build_adapter.py SCRIPT OUTPUT")
    build(sys.argv[1], sys.argv[2])
