"""Where the plugin is installed: the directory meson proposes (argv[2]) when this python3 imports from it, else the
one of its import path under the install prefix (argv[1]). Debian's meson proposes /usr/local/lib/python3/dist-
packages for the prefix /usr/local, where Debian's python3 does not look (it looks in .../python3.11/dist-
packages); for the prefix /usr both are /usr/lib/python3/dist-packages."""
import os
import sys

prefix, proposed = os.path.abspath(sys.argv[1]), sys.argv[2]
proposed = os.path.abspath(os.path.join(prefix, proposed))
paths = [os.path.abspath(path) for path in sys.path if path]
if proposed in paths:
    print(proposed)
else:
    under_prefix = [path for path in paths if path.startswith(prefix + os.sep) and
                    os.path.basename(path) in ("dist-packages", "site-packages")]
    print(under_prefix[0] if under_prefix else proposed)
