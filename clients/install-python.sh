#!/usr/bin/env bash
# Installs the pinned Python agent CLIs of clients/python-clients.txt, each into its own
# virtualenv under clients/venvs/. A venv whose stamp matches its pin is left alone, so a second
# run costs nothing; a changed pin rebuilds it. The installs run side by side (they are mostly
# downloads) and any failure fails the script, naming the client.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$here/venvs"

# An interpreter of that version: on PATH (and runnable: a pyenv shim may name one it cannot
# run), else one that pyenv installed.
find_python() {
  local candidate
  for candidate in "$(command -v "python$1" || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/"python$1"; do
    if [ -x "$candidate" ] && "$candidate" -c '' 2>/dev/null; then echo "$candidate"; return 0; fi
  done
  return 1
}
# uv (in the test extra) resolves and installs in seconds what pip takes minutes over: OpenHands
# alone took pip about 7.5 minutes and uv about 10 seconds. Without uv, plain venv and pip.
uv="$(command -v uv || true)"
pids=() names=()
while read -r name py req; do
  case "$name" in ''|'#'*) continue ;; esac
  venv="$here/venvs/$name"
  if [ -f "$venv/.pinned" ] && [ "$(cat "$venv/.pinned")" = "$py $req" ]; then continue; fi
  interpreter="$(find_python "$py")" \
    || { echo "install-python: Python $py is needed for $name ($req): put python$py on PATH" >&2; exit 1; }
  (
    rm -rf "$venv"
    if [ -n "$uv" ]; then
      { "$uv" venv --quiet --python "$interpreter" "$venv" && VIRTUAL_ENV="$venv" "$uv" pip install --quiet "$req"; } \
        >"$here/venvs/$name.log" 2>&1 || { tail -20 "$here/venvs/$name.log" >&2; exit 1; }
    else
      "$interpreter" -m venv "$venv"
      "$venv/bin/pip" install --quiet --disable-pip-version-check "$req" >"$here/venvs/$name.log" 2>&1 \
        || { tail -20 "$here/venvs/$name.log" >&2; exit 1; }
    fi
    echo "$py $req" >"$venv/.pinned"
  ) &
  pids+=($!) names+=("$name")
done <"$here/python-clients.txt"
status=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { echo "install-python: ${names[$i]} failed to install" >&2; status=1; }
done
exit $status
