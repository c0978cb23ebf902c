#!/bin/bash
# Build dist/ms4watch_<version>_<arch>.deb from this checkout: `make deb` runs it.
#
# A staged tree and `dpkg-deb --root-owner-group --build` (no debhelper): a virtual
# environment at /opt/ms4watch/venv holding the locked dependencies
# (packaging/requirements.lock) and ms4watch, /usr/bin/ms4watch, the systemd units of
# ms4watch/systemd and edge/systemd, the settings example in /etc/ms4watch (a conffile), the
# docs, dashboards and example town under /usr/share/ms4watch, a logrotate file, and the
# maintainer scripts of packaging/debian/.
#
# Build on the Debian release the package is for: the environment runs on that release's
# python3 (the package depends on exactly its minor version).
#
# Environment: DEB_PY (the system Python, /usr/bin/python3), PIP (a pip of 22.3 or later that
# installs into DEB_PY's environment with --python), UV (uv, used instead of PIP when executable), DEB_REVISION (the Debian revision, 1),
# DEB_STAGE (the folder the tree is staged in, build/deb: tests/test_deb.py stages on tmpfs).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cd "$repo"

DEB_PY=${DEB_PY:-/usr/bin/python3}
PIP=${PIP:-.venv/bin/pip}
DEB_REVISION=${DEB_REVISION:-1}

upstream=$("$DEB_PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
version="$upstream-$DEB_REVISION"
if ! head -1 packaging/debian/changelog | grep -qF "ms4watch ($version)"; then
    echo "error: packaging/debian/changelog's first entry is not ms4watch ($version): add one" >&2
    exit 1
fi
arch=$(dpkg --print-architecture)
pyver=$("$DEB_PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
pynext=$("$DEB_PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1] + 1}")')

name="ms4watch_${version}_${arch}"
stage="${DEB_STAGE:-$repo/build/deb}/$name"
venv_at=/opt/ms4watch/venv
venv="$stage$venv_at"
rm -rf "$stage"
mkdir -p "$stage/DEBIAN" dist

# -- the program: a virtual environment, locked dependencies, no byte code (postinst compiles it)
"$DEB_PY" -m venv --without-pip "$venv"
# uv when the build environment has it (make setup installs it): the same wheels, ~5x less CPU than pip
if [ -n "${UV:-}" ] && [ -x "$UV" ]; then
    install=("$UV" pip install --quiet --python "$venv/bin/python" --no-deps)     # uv compiles nothing unless asked
    check=("$UV" pip check --python "$venv/bin/python")
else
    install=("$PIP" --python "$venv/bin/python" install --quiet --no-compile --no-deps)
    check=("$PIP" --python "$venv/bin/python" check)
fi
"${install[@]}" -r packaging/requirements.lock
"${install[@]}" .
# the lock holds everything ms4watch asks for, but what packaging/lock-omits.txt names (declared
# by a dependency, imported by nothing ms4watch runs): pip check may report those missing, and only those
omits=$(grep -oE '^[A-Za-z0-9._-]+' packaging/lock-omits.txt | paste -sd'|')
if ! broken=$("${check[@]}" 2>&1); then
    # pip: "ioos-qc 2.2.0 requires scipy, which is not installed."; uv: "The package `ioos-qc` requires
    # `scipy`, but it's not installed", after lines saying what it checked
    expected="^([^ ]+ [^ ]+ requires ($omits), which is not installed\.|The package \`[^\`]+\` requires \`($omits)([<>=!~;, ][^\`]*)?\`, but it's not installed|Using Python .* environment at: .*|Checked [0-9]+ packages? in .*|Found [0-9]+ incompatibilit(y|ies))$"
    if unexpected=$(printf '%s\n' "$broken" | grep -viE "$expected"); then
        echo "error: pip check: $unexpected" >&2
        exit 1
    fi
fi
# it was built at $venv, it runs from $venv_at: scripts' #! lines, activate, pyvenv.cfg
grep -rlIF "$venv" "$venv/bin" "$venv/pyvenv.cfg" | xargs -r sed -i "s#$venv#$venv_at#g"
find "$venv" -name direct_url.json -path '*ms4watch-*' -delete      # names this checkout's path
find "$venv" -name __pycache__ -prune -exec rm -rf {} +
# the dependencies' own test suites (pandas/tests, numpy/_core/tests, networkx/*/tests, ...,
# and under other names: pint's testsuite/, geographiclib's test/, jsonschema's benchmarks/,
# pytest's conftest.py of numpy, pandas, networkx and shapely): nothing the program runs imports
# them; ~2,200 files and ~38 MB that every install unpacked and compiled (ms4watch's tests are
# not in the wheel)
find "$venv/lib" -mindepth 4 -type d \( -name tests -o -name testsuite -o -name test -o -name benchmarks \) \
    -not -path '*/site-packages/ms4watch/*' -prune -exec rm -rf {} +
find "$venv/lib" -mindepth 4 -type f -name conftest.py -not -path '*/site-packages/ms4watch/*' -delete
# what only pip and uv read: which installer wrote each distribution and whether it was asked
# for by name (dpkg installs and removes this environment; Debian's python3-* carry neither),
# ~200 files, and their lines in each RECORD
find "$venv/lib" -path '*.dist-info/*' \( -name INSTALLER -o -name REQUESTED \) -delete
find "$venv/lib" -path '*.dist-info/RECORD' -exec sed -i -E '/^[^,]+\.dist-info\/(INSTALLER|REQUESTED),/d' {} +
# what only builds or type-checks against the dependencies, never runs: C sources and headers
# (numpy's include/, fontTools' Cython output), Cython's .pyx/.pxd, static libraries, stubs;
# ~520 files and ~9 MB
find "$venv/lib" -mindepth 4 -type f \( -name '*.c' -o -name '*.h' -o -name '*.pyx' -o -name '*.pxd' \
    -o -name '*.a' -o -name '*.pyi' \) -not -path '*/site-packages/ms4watch/*' -delete
# the modules packaging/venv-omits.txt names (imported by nothing ms4watch runs)
site=$(echo "$venv"/lib/python3*/site-packages)
for module in $(grep -oE '^[A-Za-z0-9_.]+' packaging/venv-omits.txt); do
    path="$site/${module//.//}"
    if [ ! -d "$path" ] && [ ! -f "$path.py" ]; then
        echo "error: packaging/venv-omits.txt names $module, which the environment does not hold" >&2
        exit 1
    fi
    rm -rf "$path" "$path.py"
done
# holidays' translations of the holiday names of ~250 other countries and markets (~770 .mo files, a
# tenth of the package's files, each unpacked, indexed by lintian and listed by dpkg): ms4watch asks
# holidays for the United States alone (compliance/nyholidays.py), in any of its languages
if [ ! -f "$site/holidays/locale/en_US/LC_MESSAGES/US.mo" ]; then
    echo "error: holidays has moved its translations: $site/holidays/locale/en_US/LC_MESSAGES/US.mo is missing" >&2
    exit 1
fi
find "$site/holidays/locale" -type f -name '*.mo' ! -name US.mo -delete
find "$site/holidays/locale" -mindepth 1 -type d -empty -delete
rm -rf build/lib build/bdist.* ./*.egg-info
if left=$(grep -rlIF "$stage" "$stage"); then
    echo "error: the staged tree still names $stage in: $left" >&2
    exit 1
fi

# -- commands, units, settings, logs
mkdir -p "$stage/usr/bin" "$stage/lib/systemd/system" "$stage/etc/ms4watch" "$stage/etc/logrotate.d"
ln -s "$venv_at/bin/ms4watch" "$stage/usr/bin/ms4watch"
ln -s /usr/share/ms4watch/docs "$stage/opt/ms4watch/docs"     # the units' Documentation=, as in a checkout at /opt/ms4watch
for unit in ms4watch/systemd/*.service ms4watch/systemd/*.timer edge/systemd/*.service edge/systemd/*.timer; do
    [ -e "$unit" ] || continue
    install -m 0644 "$unit" "$stage/lib/systemd/system/"
done
install -m 0644 packaging/debian/ms4watch.toml "$stage/etc/ms4watch/ms4watch.toml"
install -m 0644 packaging/debian/logrotate "$stage/etc/logrotate.d/ms4watch"

# -- docs, dashboards, the example town
share="$stage/usr/share/ms4watch"
mkdir -p "$share/docs" "$share/examples/town/loggers"
cp docs/*.md README.md "$share/docs/"
cp -r docs/examples "$share/docs/"                              # the nginx site (docs/operations.md)
cp -r dashboards/json dashboards/provisioning "$share/"
mv "$share/json" "$share/dashboards"
install -m 0644 firmware_configs/demo/sites.yaml "$share/examples/town/sites.yaml"
install -m 0644 firmware_configs/demo/LOG-*.yaml "$share/examples/town/loggers/"
doc="$stage/usr/share/doc/ms4watch"
mkdir -p "$doc" "$stage/usr/share/lintian/overrides"
install -m 0644 packaging/debian/copyright "$doc/copyright"
gzip -9n < packaging/debian/changelog > "$doc/changelog.Debian.gz"
install -m 0644 packaging/debian/lintian-overrides "$stage/usr/share/lintian/overrides/ms4watch"

# -- package metadata
depends="python3 (>= $pyver~), python3 (<< $pynext), adduser, $(DEB_PY=$DEB_PY "$DEB_PY" "$here/shlibdeps.py" "$stage")"
installed_kb=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" -e "s/@SIZE@/$installed_kb/" \
    packaging/debian/control > "$stage/DEBIAN/control"
install -m 0644 packaging/debian/conffiles "$stage/DEBIAN/conffiles"
for script in preinst postinst prerm postrm; do
    install -m 0755 "packaging/debian/$script" "$stage/DEBIAN/$script"
done
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
    > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"

# directories 0755, files 0644 or executable 0755, whatever the umask was
find "$stage" -type d -exec chmod 0755 {} +
find "$stage" -path "$stage/DEBIAN" -prune -o -type f -perm /111 -exec chmod 0755 {} + -o -type f -exec chmod 0644 {} +
find "$stage" -type f -name '*.so*' -exec chmod 0644 {} +     # shared objects are mapped, never run

# gzip: lintian refuses zstd, and xz of the ~420 MB environment takes minutes on a small builder.
# Level 4: 125 MB in 6 s of CPU, where level 6 (dpkg's) makes 120 MB in 13.5 s and level 1
# 9% more in 4 s; lintian and apt decompress any of them in ~1.3 s.
# (into a .part first: make must never take a half-written package for a built one)
dpkg-deb --root-owner-group -Zgzip -z4 --build "$stage" "dist/$name.deb.part" >/dev/null
mv "dist/$name.deb.part" "dist/$name.deb"
echo "dist/$name.deb"
