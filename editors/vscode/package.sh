#!/bin/sh
# Builds the gpulens VS Code extension (.vsix) from a clean copy:
#   editors/vscode/package.sh [OUTPUT.vsix]    (default: gpulens-VERSION.vsix here)
# Installs the pinned dependencies from package-lock.json (npm ci), compiles
# the TypeScript and packages with @vscode/vsce. Needs Node.js 20+ and npm.
set -eu
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --omit=optional
npm run compile
set -- ${1:+--out "$1"}
npx --no-install vsce package --allow-missing-repository --skip-license "$@"
