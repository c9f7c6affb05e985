#!/bin/sh
# Builds the gpulens VS Code extension (.vsix) from a clean copy:
#   editors/vscode/package.sh [--target PLATFORM [--binary PATH]] [OUTPUT.vsix]
# Without --target: a universal .vsix that runs the gpulens it finds (the
# gpulens.path setting, the workspace's Python environment, PATH).
# With --target (a vsce platform: linux-x64, linux-arm64, darwin-arm64,
# win32-x64, ...): a platform .vsix carrying the gpulens executable in bin/,
# run when no other is found. --binary names it; for linux-x64 it defaults
# to the release build of this checkout (target/release/gpulens).
# Installs the pinned dependencies from package-lock.json (npm ci), compiles
# the TypeScript and packages with @vscode/vsce. Needs Node.js 20+ and npm.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
target="" binary="" out=""
while [ $# -gt 0 ]; do
    case $1 in
        --target) target=$2; shift 2 ;;
        --binary) binary=$2; shift 2 ;;
        -*) echo "package.sh: unknown option $1" >&2; exit 2 ;;
        *) out=$1; shift ;;
    esac
done
cd "$here"
rm -rf bin
if [ -n "$target" ]; then
    if [ -z "$binary" ]; then
        [ "$target" = linux-x64 ] || { echo "package.sh: --target $target needs --binary (a gpulens built for it)" >&2; exit 2; }
        binary=$here/../../target/release/gpulens
    fi
    [ -f "$binary" ] || { echo "package.sh: no gpulens at $binary (cargo build --release first)" >&2; exit 2; }
    exe=gpulens
    case $target in win32-*) exe=gpulens.exe ;; esac
    mkdir -p bin
    cp "$binary" "bin/$exe"
    chmod 755 "bin/$exe"
fi
npm ci --no-audit --no-fund --omit=optional
npm run compile
set -- ${out:+--out "$out"} ${target:+--target "$target"}
npx --no-install vsce package --allow-missing-repository --skip-license "$@"
